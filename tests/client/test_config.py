from __future__ import annotations

import pytest

from samsa.client import Producer
from samsa.errors import ConfigError


@pytest.mark.parametrize(
    ("cfg", "message"),
    [
        ({"bootstrap_servers": "x:1"}, "did you mean 'bootstrap.servers'"),
        ({}, "'bootstrap.servers' is required"),
        ({"bootstrap.servers": "nohostport"}, "host:port"),
        ({"bootstrap.servers": "h:1", "acks": 2}, "acks"),
        ({"bootstrap.servers": "h:1", "compression.type": "brotli"}, "compression.type"),
        ({"bootstrap.servers": "h:1", "linger.ms": -1}, "must be >= 0"),
        ({"bootstrap.servers": "h:1", "acks": 1}, "requires acks=all"),
        ({"bootstrap.servers": "h:1", "partitioner": "nope"}, "partitioner"),
        ({"bootstrap.servers": "h:1", "interceptors": [object()]}, "on_send"),
        ({"bootstrap.servers": "h:1", "delivery.timeout.ms": 10}, "delivery.timeout.ms"),
    ],
)
def test_bad_config_is_refused_at_construction(cfg: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        Producer(cfg)
    assert message in str(info.value)
