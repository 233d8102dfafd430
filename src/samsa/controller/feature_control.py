"""UpdateFeatures on the controller: finalize, upgrade or downgrade cluster features.

Kafka's ``FeatureControlManager.updateFeatures``: ``kafka-features
upgrade/downgrade`` asks for new levels; each is checked against what this
controller and every registered broker supports, against the upgrade type (an
upgrade must not lower a level, a downgrade must not raise it), and written as
a FeatureLevelRecord.  One refused update refuses the whole request, with
INVALID_UPDATE_VERSION and Kafka's message; ``validate_only`` writes nothing.

A cluster whose log holds no FeatureLevelRecord for a feature runs at the
level Samsa bootstraps it at (``BOOTSTRAP_LEVELS``).  A record of level 0
turns a feature off; the image keeps that 0, so it is not mistaken for "never
set".  ``kraft.version`` belongs to the Raft layer: Samsa does not change it
online, so only a request that leaves it as it is passes.  ``metadata.version``
is never lowered: Samsa cannot tell which lower levels keep every record it
wrote (Kafka allows the downgrades that change no record format).

The levels decide what ApiVersions reports; the behaviours behind them
(transactions v2, the consumer, share and streams group protocols) stay on whatever
level is finalized.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from samsa.controller.controller_result import ControllerResult
from samsa.controller.image.metadata_image import MetadataImage
from samsa.errors import ErrorCode
from samsa.protocol.metadata_records import make_record

METADATA_VERSION = "metadata.version"
KRAFT_VERSION = "kraft.version"
GROUP_VERSION = "group.version"
"""Level 1 is the KIP-848 consumer group protocol (ConsumerGroupHeartbeat)."""
SHARE_VERSION = "share.version"
"""Level 1 is share groups (KIP-932), as Kafka 4.1 finalizes it to enable them."""
STREAMS_VERSION = "streams.version"
"""Level 1 is KIP-1071 streams groups (StreamsGroupHeartbeat), as Kafka 4.2+ finalizes it."""
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
    STREAMS_VERSION: (0, 1),
    TRANSACTION_VERSION: (0, 2),
}
"""What every Samsa node supports (brokers register it, the controller checks it)."""

BOOTSTRAP_LEVELS: dict[str, int] = {
    METADATA_VERSION: METADATA_VERSION_RANGE[1],
    GROUP_VERSION: 1,
    SHARE_VERSION: 1,
    STREAMS_VERSION: 1,
    TRANSACTION_VERSION: 2,
}
"""The levels of a cluster whose log sets none (Samsa writes no bootstrap records)."""

UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3


def finalized_levels(image_features: Mapping[str, int]) -> dict[str, int]:
    """Every feature's finalized level (0: off), the log's over the bootstrap's."""
    return {**BOOTSTRAP_LEVELS, **image_features}


def _range_text(low: int, high: int) -> str:
    """Kafka's ``VersionRange.toString``."""
    if low == high:
        return str(low)
    return f"{low}+" if high == 32767 else f"{low}-{high}"


class FeatureControl:
    def __init__(self, image: MetadataImage, node_id: int = -1) -> None:
        self.image = image
        self.node_id = node_id

    def update_features(self, request: Mapping[str, Any], version: int) -> ControllerResult:
        updates = request.get("feature_updates") or []
        levels = finalized_levels(self.image.features)
        proposed = dict(levels)
        records = []
        error: tuple[ErrorCode, str] | None = None
        for update in updates:
            name, level = update["feature"], int(update["max_version_level"])
            if version == 0:
                kind = SAFE_DOWNGRADE if update.get("allow_downgrade") else UPGRADE
            else:
                kind = int(update.get("upgrade_type", UPGRADE))
            proposed[name] = level
            reason = self._refusal(name, level, kind, levels)
            if reason is not None:
                error = (ErrorCode.INVALID_UPDATE_VERSION, reason)
                break
            if name != KRAFT_VERSION:
                records.append(make_record("FeatureLevelRecord", name=name, feature_level=level))
        if error is not None:
            # QuorumController.updateFeatures' words around the refusal.
            message = (
                "The update failed for all features since the following feature had an error: "
                + error[1]
            )
            return ControllerResult([], _response(version, (error[0], message), []), atomic=True)
        if request.get("validate_only"):
            records = []
        names = [u["feature"] for u in updates]
        return ControllerResult(records, _response(version, None, names), atomic=True)

    def _refusal(self, name: str, level: int, kind: int, levels: dict[str, int]) -> str | None:
        def invalid(why: str) -> str:
            return f"Invalid update version {level} for feature {name}. {why}"

        if kind not in (UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE):
            return invalid("The controller does not support the given upgrade type.")
        current = levels.get(name, 0)
        if level < 0:
            return invalid("A feature version cannot be less than 0.")
        supported = self._not_supported(name, level)
        if supported is not None:
            return invalid(supported)
        if level < current and kind == UPGRADE:
            return invalid(
                "Can't downgrade the version of this feature without setting the upgrade "
                "type to either safe or unsafe downgrade."
            )
        if level > current and kind != UPGRADE:
            return invalid("Can't downgrade to a newer version.")
        if name == KRAFT_VERSION and level != current:
            return invalid("Samsa does not change kraft.version online.")
        if name == METADATA_VERSION and level < current:
            return (
                f"Unsupported metadata.version downgrade from {current} to {level}. Refusing "
                "to perform the requested downgrade because it might delete metadata information."
            )
        return None

    def _not_supported(self, name: str, level: int) -> str | None:
        """Kafka's ``reasonNotSupported``: this controller first, then each broker."""
        checks = [(f"Local controller {self.node_id}", SUPPORTED_FEATURES.get(name, (0, 0)))]
        for broker_id, registration in sorted(self.image.brokers.items()):
            ranges = {
                f.name: (f.min_supported_version, f.max_supported_version)
                for f in registration.features
            }
            checks.append((f"Broker {broker_id}", ranges.get(name, (0, 0))))
        for what, (low, high) in checks:
            if not low <= level <= high:
                if high == 0:
                    return f"{what} does not support this feature."
                return f"{what} only supports versions {_range_text(low, high)}"
        return None


def _response(
    version: int, error: tuple[ErrorCode, str] | None, names: list[str]
) -> dict[str, Any]:
    """Kafka's ``UpdateFeaturesResponse.createWithErrors``: v0-1 list each feature
    (all NONE) on success, nothing on failure; v2 only the top-level error."""
    code, message = error if error is not None else (ErrorCode.NONE, None)
    results = (
        [{"feature": n, "error_code": 0, "error_message": None} for n in names]
        if error is None and version < 2
        else []
    )
    return {"throttle_time_ms": 0, "error_code": code, "error_message": message, "results": results}
