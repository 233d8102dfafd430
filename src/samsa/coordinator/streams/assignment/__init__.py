"""Who should hold which task: the sticky task assignor and the target assignment built with it."""
