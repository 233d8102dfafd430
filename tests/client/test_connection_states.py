"""What a broker's close of our connection says about its listener (issue 38, item 7)."""

from __future__ import annotations

from samsa.client.network.connection_states import ClusterConnectionStates


def states_closed_in(phase: str, waiting: int = 1) -> ClusterConnectionStates:
    states = ClusterConnectionStates(50, 1000)
    states.connecting(1, 0)
    states.checking_api_versions(1)
    if phase == "ready":
        states.ready(1, {3: 12})
    states.closed_by_peer(1, waiting)
    states.disconnected(1, 10)
    return states


def test_closed_after_the_handshake_points_at_sasl_unless_sasl_is_set() -> None:
    states = states_closed_in("ready")
    assert "probably wants SASL" in (states.peer_close_hint(tls=False, sasl=False) or "")
    assert "probably wants SASL" in (states.peer_close_hint(tls=True, sasl=False) or "")
    assert states.peer_close_hint(tls=False, sasl=True) is None


def test_closed_before_api_versions_points_at_tls_unless_tls_is_set() -> None:
    states = states_closed_in("api_versions")
    assert "probably wants TLS" in (states.peer_close_hint(tls=False, sasl=False) or "")
    assert states.peer_close_hint(tls=True, sasl=False) is None


def test_a_handshake_alone_keeps_the_hint_and_an_answer_clears_it() -> None:
    """A SASL listener answers ApiVersions on every new connection, then closes
    it at the next request: only an answer to something else clears the hint."""
    states = states_closed_in("ready")
    states.connecting(1, 20)
    states.checking_api_versions(1)
    states.ready(1, {3: 12})
    assert states.peer_close_hint(tls=False, sasl=False) is not None
    states.answered(1)
    assert states.peer_close_hint(tls=False, sasl=False) is None


def test_an_idle_close_or_one_after_answers_tells_nothing() -> None:
    assert states_closed_in("ready", waiting=0).peer_close_hint(tls=False, sasl=False) is None
    states = ClusterConnectionStates(50, 1000)
    states.connecting(1, 0)
    states.checking_api_versions(1)
    states.ready(1, {3: 12})
    states.answered(1)
    states.closed_by_peer(1, 3)  # a broker restarting under a working client
    assert states.peer_close_hint(tls=False, sasl=False) is None
