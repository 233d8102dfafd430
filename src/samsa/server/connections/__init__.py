"""The socket server and what guards each connection: framing, TLS, the SASL gate, listener routing and security, connection quotas, client throttling."""
