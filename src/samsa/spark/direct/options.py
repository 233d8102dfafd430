"""The options of direct reads: ``tieredReads`` and the object store's settings.

``tieredReads`` says where the history of a tiered topic is read from:

* ``auto`` (the default): offsets below a partition's local log start (those
  only the remote tier holds) are read straight from the object store when
  the options name the store, everything else through the brokers; without
  the store's settings, everything through the brokers, as before;
* ``direct``: every offset the remote tier holds is read from the store, even
  what the brokers still have on disk; planning fails when the store's
  settings or ``__remote_log_metadata`` are missing;
* ``broker``: everything through the brokers (the store is never contacted).

The store's settings are the brokers' own ``rsm.config.*`` settings, given
as options under the same names (``rsm.config.storage.backend.class``,
``rsm.config.storage.s3.bucket.name``, ``...endpoint.url``, ``...region``,
``...path.style.access.enabled``, ``rsm.config.storage.aws.access.key.id``
and ``...secret.access.key``, ``rsm.config.key.prefix``, or
``rsm.config.storage.root`` for a directory every executor sees).  They are
the job's to give: brokers never tell clients their store's credentials.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from samsa.spark.options import SamsaSparkError
from samsa.tiered.store.s3 import S3Settings
from samsa.tiered.store.settings import (
    RSM_PREFIX,
    FileSystemSettings,
    remote_store_settings,
)

__all__ = ["MODES", "StoreSettings", "TieredReadOptions", "parse_tiered_options"]

MODES = ("auto", "direct", "broker")
StoreSettings = S3Settings | FileSystemSettings

_BACKEND = RSM_PREFIX + "storage.backend.class"
_ROOT = RSM_PREFIX + "storage.root"


@dataclass(frozen=True)
class TieredReadOptions:
    """``mode``: auto, direct or broker; ``store``: the object store, when the options name one."""

    mode: str = "auto"
    store: StoreSettings | None = None

    @property
    def plans_direct_reads(self) -> bool:
        return self.mode != "broker" and self.store is not None


def parse_tiered_options(options: Mapping[str, str]) -> TieredReadOptions:
    mode = (options.get("tieredReads") or "auto").strip().lower()
    if mode not in MODES:
        raise SamsaSparkError(
            f"option 'tieredReads' must be one of {', '.join(MODES)}, got {options['tieredReads']!r}"
        )
    given = {k.lower(): v for k, v in options.items() if k.lower().startswith(RSM_PREFIX)}
    if mode == "broker" or not any(v for v in given.values()):
        if mode == "direct":
            raise SamsaSparkError(
                "tieredReads=direct needs the object store's settings as options, with the "
                f"brokers' names: {_BACKEND} and the s3 or filesystem settings"
            )
        return TieredReadOptions(mode)
    if given.get(_BACKEND, "filesystem").strip() in ("", "filesystem") and not given.get(_ROOT):
        raise SamsaSparkError(
            f"option '{_ROOT}' is required for direct reads of the filesystem store "
            "(the directory of the remote tier, seen by every executor)"
        )
    try:
        # The first log dir only names the filesystem store's default root, given here.
        store = remote_store_settings(given, Path("."))
    except ValueError as exc:
        raise SamsaSparkError(f"option {exc}") from None
    return TieredReadOptions(mode, store)
