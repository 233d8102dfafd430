"""Group membership: the classic join/sync/heartbeat protocol and KIP-848's consumer protocol, offset commits."""
