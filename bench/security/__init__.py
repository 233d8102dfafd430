"""What TLS, SASL, the authorizer and client quotas cost."""
