"""Kafka's ClientQuotaManager: measure each client's rate, say how long to throttle it.

One manager per broker covers every quota type (``QuotaType``).  The quotas
themselves come from the metadata image (``ClientQuotaRecord``), handed over
whole by ``update`` after each change; ``resolve`` picks the entity that
applies to a (user, client id) by Kafka's precedence.  A rate is kept per
(quota type, ``QuotaKey``) -- the clients that share the matched entity share
it -- and created on first use.

When no quota of a type is set anywhere, ``enabled(type)`` is False and
callers skip measuring entirely: the unthrottled broker pays one attribute
read per request.

Throttle times are also summed per quota type for ``/metrics`` (Kafka's
``throttle-time`` sensors).  Owned by the broker's event loop.
"""

from __future__ import annotations

from samsa.security.quotas.entities import Entity, QuotaKey, QuotaType, resolve
from samsa.security.quotas.sampled_rate import SampledRate, WindowConfig

_MAX_RESOLVED = 100_000


class ThrottleTotals:
    """Throttle time handed out, per quota type, for the metrics endpoint."""

    __slots__ = ("count", "total_ms")

    def __init__(self) -> None:
        self.total_ms: dict[QuotaType, int] = dict.fromkeys(QuotaType, 0)
        self.count: dict[QuotaType, int] = dict.fromkeys(QuotaType, 0)


class ClientQuotaManager:
    """Rates per quota entity and the throttle time a new measurement implies."""

    def __init__(self, window: WindowConfig | None = None) -> None:
        self.window = window or WindowConfig()
        self._quotas: dict[Entity, dict[str, float]] = {}
        self._enabled: set[QuotaType] = set()
        self._rates: dict[tuple[QuotaType, QuotaKey], SampledRate] = {}
        # resolve() walks eight entities; a client's answer is kept until the quotas change.
        self._resolved: dict[tuple[QuotaType, str, str], tuple[QuotaKey, float] | None] = {}
        self.any_enabled = False
        """False while no client quota is set: the request path checks only this."""
        self.throttled = ThrottleTotals()

    def update(self, quotas: dict[Entity, dict[str, float]]) -> None:
        """Take the quotas now in force (a copy of the image's)."""
        self._quotas = {entity: dict(values) for entity, values in quotas.items()}
        self._enabled = {
            quota_type
            for quota_type in QuotaType
            if any(quota_type.value in values for values in self._quotas.values())
        }
        self.any_enabled = bool(self._enabled)
        self._resolved.clear()

    def enabled(self, quota_type: QuotaType) -> bool:
        return quota_type in self._enabled

    def _resolve(
        self, quota_type: QuotaType, user: str, client_id: str
    ) -> tuple[QuotaKey, float] | None:
        key = (quota_type, user, client_id)
        try:
            return self._resolved[key]
        except KeyError:
            pass
        if len(self._resolved) >= _MAX_RESOLVED:
            self._resolved.clear()
        found = self._resolved[key] = resolve(self._quotas, quota_type.value, user, client_id)
        return found

    def applies(self, quota_type: QuotaType, user: str, client_id: str) -> bool:
        """Whether some quota of this type covers the client (worth measuring it)."""
        return (
            quota_type in self._enabled and self._resolve(quota_type, user, client_id) is not None
        )

    def bound(self, quota_type: QuotaType, user: str, client_id: str) -> float | None:
        found = self._resolve(quota_type, user, client_id)
        return None if found is None else found[1]

    def max_value_in_window(self, quota_type: QuotaType, user: str, client_id: str) -> int | None:
        """The most one request may carry (Kafka's ``getMaxValueInQuotaWindow``):
        what the quota allows over all but one of the samples; None if unbounded."""
        bound = self.bound(quota_type, user, client_id)
        if bound is None:
            return None
        window = self.window
        return max(1, int(bound * (window.samples - 1) * window.window_ms / 1000))

    def record(
        self, quota_type: QuotaType, user: str, client_id: str, value: float, now_ms: int
    ) -> int:
        """Count ``value`` against the client's quota; the throttle time in ms (0: within it)."""
        if quota_type not in self._enabled:
            return 0
        found = self._resolve(quota_type, user, client_id)
        if found is None:
            return 0
        shared_by, bound = found
        key = (quota_type, shared_by)
        rate = self._rates.get(key)
        if rate is None:
            rate = self._rates[key] = SampledRate(self.window, now_ms)
        rate.record(value, now_ms)
        throttle_ms = rate.throttle_ms(bound, now_ms)
        if quota_type is QuotaType.REQUEST:
            # Kafka's ClientRequestQuotaManager caps request throttling at the window.
            throttle_ms = min(throttle_ms, self.window.samples * self.window.window_ms)
        if throttle_ms:
            self.throttled.total_ms[quota_type] += throttle_ms
            self.throttled.count[quota_type] += 1
        return throttle_ms
