"""Replicated partitions: leaders, followers, the ISR and the high watermark."""
