"""ConnectionQuotas' arithmetic: per-ip limits and overrides close, broker-wide and
per-listener limits make a connection wait, the inter-broker listener is not
counted toward max.connections, and a freed slot goes to the first waiter."""

from __future__ import annotations

from typing import Any

from samsa.server.connections.connection_quotas import Admission, ConnectionQuotas, parse_overrides

INT_MAX = 2**31 - 1


def quotas(listener_limits: dict[str, int] | None = None, **settings: Any) -> ConnectionQuotas:
    values = {
        "max.connections.per.ip": INT_MAX,
        "max.connections.per.ip.overrides": "",
        "max.connections": INT_MAX,
    }
    values.update({k.replace("_", "."): v for k, v in settings.items()})
    return ConnectionQuotas(values.__getitem__, listener_limits)


def test_per_ip_limit_and_overrides_refuse_the_next_connection() -> None:
    q = quotas(max_connections_per_ip=2, max_connections_per_ip_overrides="10.0.0.9:0, 10.0.0.1:3")
    granted: list[bool] = []
    for _ in range(2):
        assert q.arrive("10.0.0.2", "PLAINTEXT", granted.append) is Admission.ACCEPT
    assert q.arrive("10.0.0.2", "PLAINTEXT", granted.append) is Admission.REFUSE
    assert q.arrive("10.0.0.9", "PLAINTEXT", granted.append) is Admission.REFUSE
    for _ in range(3):
        assert q.arrive("10.0.0.1", "PLAINTEXT", granted.append) is Admission.ACCEPT
    q.release("10.0.0.2", "PLAINTEXT")
    assert q.arrive("10.0.0.2", "PLAINTEXT", granted.append) is Admission.ACCEPT


def test_broker_wide_limit_makes_connections_wait_for_a_slot_in_order() -> None:
    q = quotas(max_connections=2)
    granted: list[tuple[str, bool]] = []
    assert q.arrive("a", "PLAINTEXT", lambda ok: granted.append(("a", ok))) is Admission.ACCEPT
    assert q.arrive("b", "PLAINTEXT", lambda ok: granted.append(("b", ok))) is Admission.ACCEPT
    assert q.arrive("c", "PLAINTEXT", lambda ok: granted.append(("c", ok))) is Admission.WAIT
    gone = lambda ok: granted.append(("d", ok))  # noqa: E731
    assert q.arrive("d", "PLAINTEXT", gone) is Admission.WAIT
    q.leave(gone)  # d hung up while waiting
    assert q.arrive("e", "PLAINTEXT", lambda ok: granted.append(("e", ok))) is Admission.WAIT
    q.release("a", "PLAINTEXT")
    assert granted == [("c", True)]
    q.release("b", "PLAINTEXT")
    assert granted == [("c", True), ("e", True)]


def test_listener_limit_is_separate_and_the_inter_broker_listener_is_not_counted() -> None:
    q = quotas({"EXTERNAL": 1}, max_connections=1)
    q.protected_listener = "INTERNAL"
    granted: list[bool] = []
    assert q.arrive("a", "EXTERNAL", granted.append) is Admission.ACCEPT
    assert q.arrive("b", "EXTERNAL", granted.append) is Admission.WAIT
    # The broker-wide limit is reached, but replication still connects.
    assert q.arrive("broker-2", "INTERNAL", granted.append) is Admission.ACCEPT
    assert q.arrive("broker-3", "INTERNAL", granted.append) is Admission.ACCEPT


def test_a_waiter_over_its_per_ip_limit_is_refused_when_its_slot_comes() -> None:
    q = quotas(max_connections=2, max_connections_per_ip=1)
    granted: list[bool] = []
    assert q.arrive("a", "PLAINTEXT", granted.append) is Admission.ACCEPT
    assert q.arrive("b", "PLAINTEXT", granted.append) is Admission.ACCEPT
    assert q.arrive("a", "PLAINTEXT", granted.append) is Admission.WAIT
    q.release("b", "PLAINTEXT")
    assert granted == [False]


def test_overrides_parse_as_kafka_writes_them() -> None:
    assert parse_overrides("127.0.0.1:200, host.example:5") == {
        "127.0.0.1": 200,
        "host.example": 5,
    }
    assert parse_overrides("") == {}
