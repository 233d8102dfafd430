"""A rate over sampled windows, measured as Kafka's ``Rate`` over a ``SampledStat``.

Kafka's client quotas record each request's bytes (or handler time) into a
sensor whose rate is the sum of the last ``quota.window.num`` samples, each
``quota.window.size.seconds`` long, divided by the time they cover.  While
fewer samples than that exist, the elapsed time is padded up to ``samples - 1``
full windows, so a burst right after start-up does not read as an enormous
rate (Kafka's ``Rate.windowSize``).  Samples older than ``samples x window``
are dropped before every measurement.

The throttle time of a violation is Kafka's ``QuotaUtils.throttleTime``: how
long the client must stay silent for the measured rate, over the same window,
to fall back to the bound -- ``(rate - bound) / bound x window``.

Pure arithmetic with the clock passed in (``now_ms``); one instance per
(quota type, quota entity), owned by the broker's event loop.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class WindowConfig:
    """``quota.window.num`` samples of ``quota.window.size.seconds`` each."""

    samples: int = 11
    window_ms: int = 1000


class SampledRate:
    """Units per second over the retained samples."""

    __slots__ = ("_config", "_current", "_starts", "_values")

    def __init__(self, config: WindowConfig, now_ms: int) -> None:
        self._config = config
        self._starts = [now_ms]
        self._values = [0.0]
        self._current = 0

    def record(self, value: float, now_ms: int) -> None:
        start = self._starts[self._current]
        if now_ms - start >= self._config.window_ms:
            self._advance(now_ms)
        self._values[self._current] += value

    def _advance(self, now_ms: int) -> None:
        samples = self._config.samples
        self._current = (self._current + 1) % samples
        if self._current >= len(self._starts):
            self._starts.append(now_ms)
            self._values.append(0.0)
        else:
            self._starts[self._current] = now_ms
            self._values[self._current] = 0.0

    def _purge(self, now_ms: int) -> None:
        expire_before = now_ms - self._config.samples * self._config.window_ms
        for i, start in enumerate(self._starts):
            if start <= expire_before:
                self._starts[i] = now_ms
                self._values[i] = 0.0

    def window_ms(self, now_ms: int) -> int:
        """The time the rate is measured over (Kafka's ``Rate.windowSize``)."""
        self._purge(now_ms)
        elapsed = now_ms - min(self._starts)
        config = self._config
        full_windows = elapsed // config.window_ms
        if full_windows < config.samples - 1:
            elapsed += (config.samples - 1 - full_windows) * config.window_ms
        return max(elapsed, 1)

    def rate(self, now_ms: int) -> float:
        """Units per second, as of ``now_ms``."""
        window = self.window_ms(now_ms)
        return sum(self._values) * 1000.0 / window

    def throttle_ms(self, bound: float, now_ms: int) -> int:
        """How long to hold the client back for its rate to meet ``bound`` (0: it does)."""
        window = self.window_ms(now_ms)
        rate = sum(self._values) * 1000.0 / window
        if rate <= bound:
            return 0
        if bound <= 0:
            return self._config.samples * self._config.window_ms
        return round((rate - bound) / bound * window)
