"""DescribeClientQuotas (key 48) and AlterClientQuotas (key 49).

Transcribed from Kafka's DescribeClientQuotas{Request,Response}.json and
AlterClientQuotas{Request,Response}.json, versions 0-1, flexible from v1.  An
entity is a list of (entity type, entity name) pairs: ``user``, ``client-id``
or ``ip``, with a null name meaning that type's default entity.  A
DescribeClientQuotas filter component matches an exact name (match type 0),
the default (1) or any specified name (2).
"""

from samsa.protocol.schema import F, api

_ENTITY = F(
    "entity",
    "[]struct",
    fields=[
        F("entity_type", "string"),
        F("entity_name", "string", nullable="0+", default=None),
    ],
)

APIS = [
    api(
        48,
        "DescribeClientQuotas",
        valid="0-1",
        flexible="1+",
        request=[
            F(
                "components",
                "[]struct",
                fields=[
                    F("entity_type", "string"),
                    F("match_type", "int8"),
                    F("match", "string", nullable="0+", default=None),
                ],
            ),
            F("strict", "bool", default=False),
        ],
        response=[
            F("throttle_time_ms", "int32", default=0),
            F("error_code", "int16", default=0),
            F("error_message", "string", nullable="0+", default=None),
            F(
                "entries",
                "[]struct",
                nullable="0+",
                default=None,
                fields=[
                    _ENTITY,
                    F(
                        "values",
                        "[]struct",
                        fields=[F("key", "string"), F("value", "float64")],
                    ),
                ],
            ),
        ],
    ),
    api(
        49,
        "AlterClientQuotas",
        listeners=("broker", "controller"),
        valid="0-1",
        flexible="1+",
        request=[
            F(
                "entries",
                "[]struct",
                fields=[
                    _ENTITY,
                    F(
                        "ops",
                        "[]struct",
                        fields=[
                            F("key", "string"),
                            F("value", "float64", default=0.0),
                            F("remove", "bool", default=False),
                        ],
                    ),
                ],
            ),
            F("validate_only", "bool", default=False),
        ],
        response=[
            F("throttle_time_ms", "int32", default=0),
            F(
                "entries",
                "[]struct",
                fields=[
                    F("error_code", "int16", default=0),
                    F("error_message", "string", nullable="0+", default=None),
                    _ENTITY,
                ],
            ),
        ],
    ),
]
