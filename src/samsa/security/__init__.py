"""Who is on the other end of a connection: TLS, SASL, principals, authorization, quotas.

Everything here is sans-I/O where it can be (SASL mechanisms take a token and
return one; the TLS session takes ciphertext and returns plaintext), so it is
tested without sockets.  The socket server calls into this package; nothing
here imports the server.  The security protocol of a listener
(``listener.security.protocol.map``) is configuration: ``samsa.config.security_protocols``.
"""
