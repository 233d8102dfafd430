"""UpdateFeatures (key 57): finalize, upgrade or downgrade cluster features.

``kafka-features upgrade/downgrade`` sends it; the controller checks each new
level against what every broker supports and the features it depends on, and
writes FeatureLevelRecords.  v0 marks downgrades with ``allow_downgrade``; v1
replaces it with ``upgrade_type`` (1 upgrade, 2 safe downgrade, 3 unsafe
downgrade) and adds ``validate_only``; v2 answers one top-level error only
(no per-feature ``results``).
"""

from samsa.protocol.schema import F, api

UPGRADE = 1
SAFE_DOWNGRADE = 2
UNSAFE_DOWNGRADE = 3

API = api(
    57,
    "UpdateFeatures",
    listeners=("broker", "controller"),
    valid="0-2",
    flexible="0+",
    request=[
        F("timeout_ms", "int32", default=60000),
        F(
            "feature_updates",
            "[]struct",
            fields=[
                F("feature", "string"),
                F("max_version_level", "int16"),
                F("allow_downgrade", "bool", "0"),
                F("upgrade_type", "int8", "1+", default=UPGRADE),
            ],
        ),
        F("validate_only", "bool", "1+", default=False),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        F("error_message", "string", nullable="0+", default=None),
        F(
            "results",
            "[]struct",
            "0-1",
            fields=[
                F("feature", "string"),
                F("error_code", "int16"),
                F("error_message", "string", nullable="0+", default=None),
            ],
        ),
    ],
)
