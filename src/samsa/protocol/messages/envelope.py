"""Envelope (key 58): a client's request as a broker forwards it to the controller.

Transcribed from Kafka's EnvelopeRequest/Response.json (controller listeners
only).  ``request_data`` is the client's request header and body as the
client framed them (without the size prefix), ``request_principal`` who the
broker authenticated (``DefaultPrincipalData``, see ``protocol.envelope``),
``client_host_address`` the client's IP address (4 or 16 bytes).  The answer
carries the controller's response header and body in ``response_data``.
"""

from samsa.protocol.schema import F, api

API = api(
    58,
    "Envelope",
    listeners=("controller",),
    valid="0",
    flexible="0+",
    request=[
        F("request_data", "bytes"),
        F("request_principal", "bytes", nullable="0+", default=None),
        F("client_host_address", "bytes"),
    ],
    response=[
        F("response_data", "bytes", nullable="0+", default=None),
        F("error_code", "int16"),
    ],
)
