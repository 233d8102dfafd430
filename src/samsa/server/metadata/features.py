"""The feature levels a broker reports in ApiVersions v3+ (KIP-584).

Kafka's ``kafka-features describe`` and ``Admin.describeFeatures`` read them from
the ApiVersions answer of any broker: each supported feature with its range of
levels, the finalized level the cluster runs at, and the metadata offset that
finalized it (the "epoch").  A broker that leaves them out makes the tool print
nothing at all, as if the cluster had no metadata.version.

Samsa's controller does not write FeatureLevelRecords when it bootstraps a
cluster, so a cluster whose log holds none for a feature runs at the level
``feature_control.BOOTSTRAP_LEVELS`` gives it, and that is what is reported
as final; UpdateFeatures (``kafka-features upgrade/downgrade``) writes them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from samsa.controller.feature_control import (
    GROUP_VERSION,
    KRAFT_VERSION,
    METADATA_VERSION,
    METADATA_VERSION_RANGE,
    SHARE_VERSION,
    STREAMS_VERSION,
    SUPPORTED_FEATURES,
    TRANSACTION_VERSION,
    finalized_levels,
)

__all__ = [
    "GROUP_VERSION",
    "KRAFT_VERSION",
    "METADATA_VERSION",
    "METADATA_VERSION_RANGE",
    "SHARE_VERSION",
    "STREAMS_VERSION",
    "SUPPORTED_FEATURES",
    "TRANSACTION_VERSION",
    "api_versions_features",
]


def api_versions_features(finalized: Mapping[str, int], metadata_offset: int) -> dict[str, Any]:
    """The ApiVersions v3+ feature fields for a metadata image whose feature
    levels are ``finalized`` and whose last applied record is ``metadata_offset``."""
    levels = finalized_levels(finalized)
    return {
        "supported_features": [
            {"name": name, "min_version": low, "max_version": high}
            for name, (low, high) in sorted(SUPPORTED_FEATURES.items())
        ],
        "finalized_features_epoch": max(metadata_offset, 0),
        "finalized_features": [
            {"name": name, "max_version_level": level, "min_version_level": level}
            for name, level in sorted(levels.items())
            if level > 0
        ],
    }
