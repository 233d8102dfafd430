from typing import Any

from samsa.controller.brokers.broker_heartbeats import BrokerControlState, BrokerHeartbeatManager

S = BrokerControlState


def next_state(
    m: BrokerHeartbeatManager, current: BrokerControlState, **kw: Any
) -> BrokerControlState:
    args: dict[str, Any] = dict(
        want_fence=False,
        want_shut_down=False,
        metadata_offset=10,
        registration_offset=5,
        has_leaderships=False,
        lowest_active_offset=None,
    )
    args.update(kw)
    return m.next_state(1, current, **args)


def test_sessions_expire_after_the_timeout() -> None:
    m = BrokerHeartbeatManager(9000)
    m.touch(1, 1000, 3)
    assert m.has_valid_session(1, 10_000) and not m.is_stale(1, 10_000)
    assert not m.has_valid_session(1, 10_001) and m.is_stale(1, 10_001)
    assert not m.has_valid_session(2, 0) and not m.is_stale(2, 0)
    m.touch(1, 20_000)
    assert m.sessions[1].metadata_offset == 3  # -1 keeps the last known offset
    m.ensure(2, 5)
    m.ensure(2, 500)
    assert m.sessions[2].last_contact_ms == 5
    m.remove(1)
    assert 1 not in m.sessions


def test_fenced_broker_is_unfenced_once_caught_up() -> None:
    m = BrokerHeartbeatManager(9000)
    assert next_state(m, S.FENCED, metadata_offset=4) is S.FENCED
    assert next_state(m, S.FENCED, metadata_offset=5) is S.UNFENCED
    assert next_state(m, S.FENCED, want_fence=True) is S.FENCED
    assert next_state(m, S.FENCED, want_shut_down=True) is S.SHUTDOWN_NOW


def test_unfenced_broker_transitions() -> None:
    m = BrokerHeartbeatManager(9000)
    assert next_state(m, S.UNFENCED) is S.UNFENCED
    assert next_state(m, S.UNFENCED, want_fence=True) is S.FENCED
    assert next_state(m, S.UNFENCED, want_fence=True, want_shut_down=True) is S.SHUTDOWN_NOW
    assert next_state(m, S.UNFENCED, want_shut_down=True) is S.SHUTDOWN_NOW
    assert (
        next_state(m, S.UNFENCED, want_shut_down=True, has_leaderships=True)
        is S.CONTROLLED_SHUTDOWN
    )


def test_controlled_shutdown_waits_for_leaders_and_the_other_brokers() -> None:
    m = BrokerHeartbeatManager(9000)
    m.touch(1, 0)
    assert next_state(m, S.CONTROLLED_SHUTDOWN) is S.CONTROLLED_SHUTDOWN  # offset unknown yet
    m.note_controlled_shutdown(1, 40)
    m.note_controlled_shutdown(1, 99)  # the first offset sticks
    assert m.sessions[1].controlled_shutdown_offset == 40
    assert next_state(m, S.CONTROLLED_SHUTDOWN, has_leaderships=True) is S.CONTROLLED_SHUTDOWN
    assert next_state(m, S.CONTROLLED_SHUTDOWN, lowest_active_offset=39) is S.CONTROLLED_SHUTDOWN
    assert next_state(m, S.CONTROLLED_SHUTDOWN, lowest_active_offset=40) is S.SHUTDOWN_NOW
    assert next_state(m, S.CONTROLLED_SHUTDOWN, lowest_active_offset=None) is S.SHUTDOWN_NOW


def test_lowest_active_offset_ignores_the_broker_itself() -> None:
    m = BrokerHeartbeatManager(9000)
    m.touch(1, 0, 5)
    m.touch(2, 0, 7)
    m.touch(3, 0, 9)
    assert m.lowest_active_offset([1, 2, 3], excluding=1) == 7
    assert m.lowest_active_offset([1], excluding=1) is None


def test_state_flags() -> None:
    assert S.SHUTDOWN_NOW.fenced and S.SHUTDOWN_NOW.should_shut_down
    assert S.CONTROLLED_SHUTDOWN.in_controlled_shutdown and not S.CONTROLLED_SHUTDOWN.fenced
    assert not S.UNFENCED.fenced and S.FENCED.fenced
