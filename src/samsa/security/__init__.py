"""Who is on the other end of a connection: security protocols, TLS, SASL.

Everything here is sans-I/O where it can be (SASL mechanisms take a token and
return one; the TLS session takes ciphertext and returns plaintext), so it is
tested without sockets.  The socket server calls into this package; nothing
here imports the server.
"""
