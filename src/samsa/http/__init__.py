"""HTTP endpoints on the broker's event loop, on h11: routing, TLS, Host checks, login sessions.

The console, the metrics endpoint (and the schema registry to come) all sit on
this package; it knows nothing of the broker.  ``endpoint`` serves routes over
asyncio streams (TLS when given a context), ``routes`` finds and runs a
handler, ``messages`` holds the request and response values, ``hosts`` checks
the Host header, and the login pieces (``sessions``, ``backoff``, ``login``
for the console's session cookie, ``basic_auth`` for ``/metrics``) turn a
user's credentials into a Kafka principal through a ``PasswordCheck``.
"""
