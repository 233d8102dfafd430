"""The feature levels a broker reports in ApiVersions v3+ (KIP-584).

Kafka's ``kafka-features describe`` and ``Admin.describeFeatures`` read them from
the ApiVersions answer of any broker: each supported feature with its range of
levels, the finalized level the cluster runs at, and the metadata offset that
finalized it (the "epoch").  A broker that leaves them out makes the tool print
nothing at all, as if the cluster had no metadata.version.

Samsa's controller does not write a FeatureLevelRecord for metadata.version
when it bootstraps a cluster, so a cluster whose log holds none runs at the
highest level this broker implements, and that is what is reported as final.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

METADATA_VERSION = "metadata.version"
KRAFT_VERSION = "kraft.version"
GROUP_VERSION = "group.version"
"""Level 1 is the KIP-848 consumer group protocol (ConsumerGroupHeartbeat)."""
SHARE_VERSION = "share.version"
"""Level 1 is share groups (KIP-932), as Kafka 4.1 finalizes it to enable them."""

TRANSACTION_VERSION = "transaction.version"
"""Level 2 is KIP-890 part 2: an epoch bump per transaction, partitions added by the leaders."""

METADATA_VERSION_RANGE = (7, 27)
"""Kafka's MetadataVersion 3.3-IV3 (level 7, the oldest KRaft log Kafka 4 reads)
to 4.1-IV1 (level 27, Kafka 4.1's latest)."""

SUPPORTED_FEATURES: dict[str, tuple[int, int]] = {
    METADATA_VERSION: METADATA_VERSION_RANGE,
    KRAFT_VERSION: (0, 1),
    GROUP_VERSION: (0, 1),
    SHARE_VERSION: (0, 1),
    TRANSACTION_VERSION: (0, 2),
}


def api_versions_features(finalized: Mapping[str, int], metadata_offset: int) -> dict[str, Any]:
    """The ApiVersions v3+ feature fields for a metadata image whose feature
    levels are ``finalized`` and whose last applied record is ``metadata_offset``."""
    levels = {
        METADATA_VERSION: METADATA_VERSION_RANGE[1],
        GROUP_VERSION: 1,
        SHARE_VERSION: 1,
        TRANSACTION_VERSION: 2,
        **finalized,
    }
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
