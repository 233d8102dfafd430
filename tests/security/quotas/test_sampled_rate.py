"""SampledRate measures as Kafka's Rate over sampled windows does."""

from __future__ import annotations

import pytest

from samsa.security.quotas import SampledRate, WindowConfig

CONFIG = WindowConfig(samples=11, window_ms=1000)


def test_a_young_rate_is_measured_over_all_but_one_window() -> None:
    rate = SampledRate(CONFIG, now_ms=0)
    rate.record(10_000, now_ms=0)
    # 10 KB over (11 - 1) padded windows of 1 s: 1 KB/s, not 10 KB/s per ms elapsed.
    assert rate.rate(now_ms=0) == pytest.approx(1000.0)
    assert rate.rate(now_ms=500) == pytest.approx(10_000 / 10.5)


def test_a_steady_rate_reads_as_itself() -> None:
    rate = SampledRate(CONFIG, now_ms=0)
    for second in range(30):
        rate.record(5000, now_ms=second * 1000)
    assert rate.rate(now_ms=29_999) == pytest.approx(5000, rel=0.1)


def test_samples_older_than_the_whole_window_are_forgotten() -> None:
    rate = SampledRate(CONFIG, now_ms=0)
    rate.record(1_000_000, now_ms=0)
    assert rate.rate(now_ms=12_000) == 0.0


def test_throttle_time_brings_the_rate_back_to_the_bound() -> None:
    rate = SampledRate(CONFIG, now_ms=0)
    rate.record(20_000, now_ms=0)
    # 2 KB/s measured over 10 s against 1 KB/s: silence for (2 - 1) / 1 x 10 s.
    assert rate.throttle_ms(1000.0, now_ms=0) == 10_000
    assert rate.throttle_ms(2000.0, now_ms=0) == 0
