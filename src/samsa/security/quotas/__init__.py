"""Client quotas (Kafka's ClientQuotaManager): entities, sampled rates, throttle times.

Sans-I/O: the broker records what a request cost and gets back how long to mute
the connection; the quotas come from the metadata image.
"""

from samsa.security.quotas.client_quota_manager import ClientQuotaManager, ThrottleTotals
from samsa.security.quotas.entities import QuotaKey, QuotaType, resolve
from samsa.security.quotas.sampled_rate import SampledRate, WindowConfig

__all__ = [
    "ClientQuotaManager",
    "QuotaKey",
    "QuotaType",
    "SampledRate",
    "ThrottleTotals",
    "WindowConfig",
    "resolve",
]
