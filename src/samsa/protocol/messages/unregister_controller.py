"""UnregisterController (key 94): drop a removed controller's registration.

Once a controller has left the voter set (RemoveRaftVoter) its registration
stays in the metadata until this asks the controller to remove it
(``kafka-metadata-quorum remove-controller``).  A broker forwards it.
"""

from samsa.protocol.schema import F, api

API = api(
    94,
    "UnregisterController",
    listeners=("broker", "controller"),
    valid="0",
    flexible="0+",
    request=[F("controller_id", "int32")],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        F("error_message", "string", nullable="0+", default=None),
    ],
)
