"""Consumer groups (classic, KIP-848) and share groups, against peers and against each other."""
