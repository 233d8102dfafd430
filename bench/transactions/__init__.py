"""What transactions cost on one broker."""
