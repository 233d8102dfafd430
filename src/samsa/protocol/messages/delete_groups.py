"""DeleteGroups (key 42): remove empty groups and their committed offsets.

v3 adds each result's ``error_message``, the cause behind its error code.
"""

from samsa.protocol.schema import F, api

API = api(
    42,
    "DeleteGroups",
    valid="0-3",
    flexible="2+",
    request=[
        F("groups_names", "[]string"),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F(
            "results",
            "[]struct",
            fields=[
                F("group_id", "string"),
                F("error_code", "int16"),
                F("error_message", "string", "3+", nullable="3+", default=None),
            ],
        ),
    ],
)
