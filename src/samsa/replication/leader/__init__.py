"""The leader side: produces, the ISR and high watermark, follower states, parked produces and fetches."""
