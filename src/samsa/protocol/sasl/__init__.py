"""SASL token formats both ends share (RFC 4616 PLAIN, RFC 5802 SCRAM).

The server's mechanisms (credential checking) live in ``samsa.security``;
the client's steps live here too, because the client depends on protocol only.
"""
