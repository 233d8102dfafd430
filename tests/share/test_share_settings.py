"""Share-group broker settings: Kafka's bounds, refused with a one-line reason."""

from __future__ import annotations

import pytest

from samsa.config.broker_config import BrokerConfig
from samsa.errors import ConfigError
from samsa.share.manager import ShareSettings


@pytest.mark.parametrize(
    ("key", "value", "reason"),
    [
        ("share.auto.offset.reset", "oldest", "must be latest or earliest"),
        ("group.share.delivery.count.limit", "1", "must be between 2 and 10"),
        ("group.share.record.lock.duration.ms", "999", "must be between 1000 and 3600000"),
        ("group.share.partition.max.record.locks", "20000", "must be between 100 and 10000"),
    ],
)
def test_out_of_range_settings_are_refused(key: str, value: str, reason: str) -> None:
    with pytest.raises(ConfigError, match=reason):
        BrokerConfig({key: value})


def test_settings_reach_the_share_partitions() -> None:
    config = BrokerConfig(
        {
            "share.auto.offset.reset": "EARLIEST",
            "group.share.delivery.count.limit": "3",
            "group.share.record.lock.duration.ms": "2000",
        }
    )
    settings = ShareSettings.from_properties(dict(config.items()))
    assert settings.auto_offset_reset == "earliest"
    assert settings.limits.delivery_count_limit == 3
    assert settings.limits.lock_duration_ms == 2000
    assert settings.limits.max_in_flight == 2000
