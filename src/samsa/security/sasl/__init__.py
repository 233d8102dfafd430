"""SASL on the server: mechanisms as token-in/token-out state machines."""
