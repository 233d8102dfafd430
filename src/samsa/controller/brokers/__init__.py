"""Brokers on the controller: registration, heartbeats and fencing, log dir assignment."""
