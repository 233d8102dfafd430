"""UpdateFeatures on the controller: Kafka's checks and messages, records only on success."""

from __future__ import annotations

from typing import Any

from tests.controller.helpers import image_of

from samsa.controller.feature_control import (
    BOOTSTRAP_LEVELS,
    SAFE_DOWNGRADE,
    SUPPORTED_FEATURES,
    UNSAFE_DOWNGRADE,
    UPGRADE,
    FeatureControl,
    finalized_levels,
)
from samsa.errors import ErrorCode
from samsa.protocol.metadata_records import make_record

PREFIX = "The update failed for all features since the following feature had an error: "


def broker(broker_id: int, features: dict[str, tuple[int, int]]) -> Any:
    return make_record(
        "RegisterBrokerRecord",
        broker_id=broker_id,
        incarnation_id=bytes(16),
        broker_epoch=broker_id * 10,
        end_points=[],
        features=[
            {"name": n, "min_supported_version": lo, "max_supported_version": hi}
            for n, (lo, hi) in features.items()
        ],
        fenced=False,
    )


def update(
    control: FeatureControl,
    version: int = 2,
    validate_only: bool = False,
    **levels: tuple[int, int],
) -> Any:
    """``levels``: feature (dots as underscores) -> (level, upgrade type)."""
    body = {
        "timeout_ms": 60000,
        "feature_updates": [
            {
                "feature": name.replace("_", "."),
                "max_version_level": level,
                "upgrade_type": kind,
                "allow_downgrade": kind != UPGRADE,
            }
            for name, (level, kind) in levels.items()
        ],
        "validate_only": validate_only,
    }
    return control.update_features(body, version)


def test_a_downgrade_and_an_upgrade_write_feature_level_records() -> None:
    image = image_of(broker(1, SUPPORTED_FEATURES))
    control = FeatureControl(image, node_id=1)
    result = update(control, transaction_version=(1, SAFE_DOWNGRADE))
    assert result.response == {
        "throttle_time_ms": 0,
        "error_code": 0,
        "error_message": None,
        "results": [],
    }
    assert [(r.name, r.body["name"], r.body["feature_level"]) for r in result.records] == [
        ("FeatureLevelRecord", "transaction.version", 1)
    ]
    for record in result.records:
        image.replay(record)
    assert finalized_levels(image.features)["transaction.version"] == 1
    upgraded = update(control, transaction_version=(2, UPGRADE))
    assert upgraded.response["error_code"] == 0 and len(upgraded.records) == 1


def test_level_zero_turns_a_feature_off_and_is_kept() -> None:
    image = image_of(broker(1, SUPPORTED_FEATURES))
    result = update(FeatureControl(image, 1), group_version=(0, SAFE_DOWNGRADE))
    for record in result.records:
        image.replay(record)
    assert image.features == {"group.version": 0}
    assert finalized_levels(image.features)["group.version"] == 0
    assert BOOTSTRAP_LEVELS["group.version"] == 1


def test_refusals_carry_kafkas_messages_and_write_nothing() -> None:
    without_share = {k: v for k, v in SUPPORTED_FEATURES.items() if k != "share.version"}
    image = image_of(broker(1, SUPPORTED_FEATURES), broker(2, without_share))
    control = FeatureControl(image, node_id=1)
    cases = {
        "upgrade past what this controller supports": (
            {"group_version": (5, UPGRADE)},
            "Invalid update version 5 for feature group.version. "
            "Local controller 1 only supports versions 0-1",
        ),
        "a broker that does not know the feature": (
            {"share_version": (1, UPGRADE)},
            "Invalid update version 1 for feature share.version. "
            "Broker 2 does not support this feature.",
        ),
        "a downgrade asked as an upgrade": (
            {"transaction_version": (1, UPGRADE)},
            "Invalid update version 1 for feature transaction.version. Can't downgrade the "
            "version of this feature without setting the upgrade type to either safe or "
            "unsafe downgrade.",
        ),
        "an upgrade asked as a downgrade": (
            {"metadata_version": (27, UNSAFE_DOWNGRADE), "transaction_version": (3, UPGRADE)},
            "Invalid update version 3 for feature transaction.version. "
            "Local controller 1 only supports versions 0-2",
        ),
        "a negative level": (
            {"transaction_version": (-1, SAFE_DOWNGRADE)},
            "Invalid update version -1 for feature transaction.version. "
            "A feature version cannot be less than 0.",
        ),
        "an unknown upgrade type": (
            {"transaction_version": (2, 9)},
            "Invalid update version 2 for feature transaction.version. "
            "The controller does not support the given upgrade type.",
        ),
        "lowering metadata.version": (
            {"metadata_version": (20, SAFE_DOWNGRADE)},
            "Unsupported metadata.version downgrade from 27 to 20. Refusing to perform "
            "the requested downgrade because it might delete metadata information.",
        ),
    }
    for what, (levels, message) in cases.items():
        result = update(control, **levels)
        assert result.records == [], what
        assert result.response["error_code"] == ErrorCode.INVALID_UPDATE_VERSION, what
        assert result.response["error_message"] == PREFIX + message, what


def test_validate_only_and_the_version_shapes() -> None:
    image = image_of(broker(1, SUPPORTED_FEATURES))
    control = FeatureControl(image, node_id=1)
    checked = update(control, validate_only=True, transaction_version=(1, SAFE_DOWNGRADE))
    assert checked.records == [] and checked.response["error_code"] == 0
    # v0 says "downgrade" with allow_downgrade; v0-1 list each feature's result.
    v0 = update(control, version=0, transaction_version=(1, SAFE_DOWNGRADE))
    assert v0.response["results"] == [
        {"feature": "transaction.version", "error_code": 0, "error_message": None}
    ]
    assert len(v0.records) == 1
    refused_v1 = update(control, version=1, group_version=(9, UPGRADE))
    assert refused_v1.response["results"] == []


def test_kraft_version_is_not_changed_online() -> None:
    control = FeatureControl(image_of(broker(1, SUPPORTED_FEATURES)), node_id=1)
    same = update(control, kraft_version=(0, UPGRADE))
    assert same.response["error_code"] == 0 and same.records == []
    raised = update(control, kraft_version=(1, UPGRADE))
    assert raised.response["error_code"] == ErrorCode.INVALID_UPDATE_VERSION
    assert "Samsa does not change kraft.version online." in raised.response["error_message"]
