"""Quota resolution by Kafka's precedence, shared rates, fetch bounds."""

from __future__ import annotations

from samsa.protocol.metadata.quotas import CLIENT_ID, USER, make_entity
from samsa.security.quotas import ClientQuotaManager, QuotaKey, QuotaType, WindowConfig, resolve

PRODUCE = QuotaType.PRODUCE.value


def test_precedence_runs_from_user_and_client_down_to_the_default_client() -> None:
    quotas = {
        make_entity([(CLIENT_ID, None)]): {PRODUCE: 8.0},
        make_entity([(CLIENT_ID, "c")]): {PRODUCE: 7.0},
        make_entity([(USER, None)]): {PRODUCE: 6.0},
        make_entity([(USER, None), (CLIENT_ID, None)]): {PRODUCE: 5.0},
        make_entity([(USER, None), (CLIENT_ID, "c")]): {PRODUCE: 4.0},
        make_entity([(USER, "u")]): {PRODUCE: 3.0},
        make_entity([(USER, "u"), (CLIENT_ID, None)]): {PRODUCE: 2.0},
        make_entity([(USER, "u"), (CLIENT_ID, "c")]): {PRODUCE: 1.0},
    }
    order = list(quotas)[::-1]
    expected = 1.0
    for entity in order:
        found = resolve(quotas, PRODUCE, "u", "c")
        assert found is not None and found[1] == expected
        del quotas[entity]
        expected += 1
    assert resolve(quotas, PRODUCE, "u", "c") is None


def test_the_matched_entity_decides_who_shares_the_rate() -> None:
    quotas = {make_entity([(USER, "u")]): {PRODUCE: 1.0}}
    assert resolve(quotas, PRODUCE, "u", "any") == (QuotaKey("u", ""), 1.0)
    quotas = {make_entity([(CLIENT_ID, None)]): {PRODUCE: 1.0}}
    assert resolve(quotas, PRODUCE, "u", "c") == (QuotaKey("", "c"), 1.0)


def test_no_quota_means_no_measurement_and_no_throttle() -> None:
    manager = ClientQuotaManager()
    assert not manager.any_enabled
    assert manager.record(QuotaType.PRODUCE, "u", "c", 10**9, now_ms=0) == 0


def test_clients_of_one_user_share_its_quota() -> None:
    manager = ClientQuotaManager(WindowConfig(samples=11, window_ms=1000))
    manager.update({make_entity([(USER, "u")]): {PRODUCE: 1000.0}})
    assert manager.enabled(QuotaType.PRODUCE) and not manager.enabled(QuotaType.FETCH)
    assert manager.record(QuotaType.PRODUCE, "u", "a", 10_000, now_ms=0) == 0
    assert manager.record(QuotaType.PRODUCE, "u", "b", 10_000, now_ms=0) == 10_000
    assert manager.record(QuotaType.PRODUCE, "v", "b", 10_000, now_ms=0) == 0
    assert manager.throttled.total_ms[QuotaType.PRODUCE] == 10_000


def test_a_fetch_may_carry_the_quota_of_all_but_one_window() -> None:
    manager = ClientQuotaManager(WindowConfig(samples=11, window_ms=1000))
    manager.update({make_entity([(CLIENT_ID, "c")]): {QuotaType.FETCH.value: 1000.0}})
    assert manager.max_value_in_window(QuotaType.FETCH, "u", "c") == 10_000
    assert manager.max_value_in_window(QuotaType.FETCH, "u", "other") is None
