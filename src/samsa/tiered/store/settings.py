"""Which remote store a broker uses, from its ``rsm.config.*`` settings.

Kafka hands every broker setting under ``remote.log.storage.manager.impl.prefix``
(``rsm.config.`` by default) to its remote storage manager plugin.  Samsa's
built-in manager reads the names of the most used S3 plugin for Kafka
(Aiven's tiered-storage-for-apache-kafka), so a Kafka user's settings carry
over unchanged:

==============================================  ==========================================
``rsm.config.storage.backend.class``            ``s3`` or ``filesystem`` (Aiven's class
                                                names ``...s3.S3Storage`` and
                                                ``...filesystem.FileSystemStorage`` too);
                                                unset: ``filesystem``
``rsm.config.storage.root``                     the filesystem store's directory; unset:
                                                ``<first log dir>-remote`` beside it
``rsm.config.storage.s3.bucket.name``           the bucket (required for ``s3``)
``rsm.config.storage.s3.endpoint.url``          unset: AWS, from the region
``rsm.config.storage.s3.region``                default ``us-east-1``
``rsm.config.storage.s3.path.style.access.enabled``  ``true`` for most S3-compatible servers
``rsm.config.storage.aws.access.key.id``        secret; unset: AWS's default chain (env, profile)
``rsm.config.storage.aws.secret.access.key``    secret
``rsm.config.storage.aws.session.token``        secret, optional (temporary credentials)
``rsm.config.key.prefix``                       every key's prefix, ending with ``/``
``rsm.config.storage.s3.api.call.timeout``      ms per request, default 30000
``rsm.config.storage.s3.multipart.upload.part.size``  bytes, default 8 MiB
``rsm.config.storage.s3.bulk.delete.enabled``   Samsa's: ``false`` for servers without
                                                DeleteObjects, default ``true``
==============================================  ==========================================

``SECRET_SETTINGS`` lists what DescribeConfigs must show as sensitive (null
value), as Kafka does for PASSWORD-typed settings.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from samsa.tiered.store.base import RemoteStore
from samsa.tiered.store.filesystem import FileSystemRemoteStore
from samsa.tiered.store.s3 import S3RemoteStore, S3Settings

__all__ = [
    "RSM_PREFIX",
    "SECRET_SETTINGS",
    "FileSystemSettings",
    "default_filesystem_root",
    "open_remote_store",
    "remote_store_settings",
]

RSM_PREFIX = "rsm.config."
"""Kafka's ``remote.log.storage.manager.impl.prefix`` default."""

BACKEND = "storage.backend.class"
_S3_BACKENDS = {"s3", "io.aiven.kafka.tieredstorage.storage.s3.S3Storage"}
_FS_BACKENDS = {"filesystem", "io.aiven.kafka.tieredstorage.storage.filesystem.FileSystemStorage"}

SECRET_SETTINGS = frozenset(
    RSM_PREFIX + name
    for name in (
        "storage.aws.access.key.id",
        "storage.aws.secret.access.key",
        "storage.aws.session.token",
    )
)


@dataclass(frozen=True, slots=True)
class FileSystemSettings:
    root: Path


def default_filesystem_root(first_log_dir: Path) -> Path:
    """The single-node default: a directory beside the first log dir, so the
    log manager, which owns everything inside log dirs, never sees it."""
    return first_log_dir.parent / f"{first_log_dir.name}-remote"


def _bool(name: str, value: str) -> bool:
    lowered = value.strip().lower()
    if lowered not in ("true", "false"):
        raise ValueError(f"{name} must be true or false, not {value!r}")
    return lowered == "true"


def _int(name: str, value: str, minimum: int) -> int:
    try:
        number = int(value.strip())
    except ValueError:
        raise ValueError(f"{name} must be an integer, not {value!r}") from None
    if number < minimum:
        raise ValueError(f"{name} must be at least {minimum}, not {number}")
    return number


def remote_store_settings(
    settings: Mapping[str, str], first_log_dir: Path, prefix: str = RSM_PREFIX
) -> S3Settings | FileSystemSettings:
    """The store ``settings`` (a broker's whole settings) ask for.

    Raises ValueError naming the setting at fault; values of secret settings
    never appear in a message."""

    def get(name: str) -> str | None:
        value = settings.get(prefix + name)
        return None if value is None or value == "" else value

    backend = get(BACKEND) or "filesystem"
    if backend in _FS_BACKENDS:
        root = get("storage.root")
        return FileSystemSettings(Path(root) if root else default_filesystem_root(first_log_dir))
    if backend not in _S3_BACKENDS:
        raise ValueError(f"{prefix}{BACKEND} must be s3 or filesystem, not {backend!r}")
    bucket = get("storage.s3.bucket.name")
    if bucket is None:
        raise ValueError(f"{prefix}storage.s3.bucket.name must be set for the s3 backend")
    key_prefix = get("key.prefix") or ""
    if key_prefix and not key_prefix.endswith("/"):
        key_prefix += "/"
    path_style = get("storage.s3.path.style.access.enabled")
    timeout = get("storage.s3.api.call.timeout")
    part = get("storage.s3.multipart.upload.part.size")
    bulk = get("storage.s3.bulk.delete.enabled")
    try:
        return S3Settings(
            bucket=bucket,
            endpoint=get("storage.s3.endpoint.url"),
            region=get("storage.s3.region") or "us-east-1",
            prefix=key_prefix,
            access_key_id=get("storage.aws.access.key.id"),
            secret_access_key=get("storage.aws.secret.access.key"),
            session_token=get("storage.aws.session.token"),
            path_style=_bool(f"{prefix}storage.s3.path.style.access.enabled", path_style)
            if path_style
            else False,
            request_timeout_ms=_int(f"{prefix}storage.s3.api.call.timeout", timeout, 1)
            if timeout
            else 30_000,
            upload_part_bytes=_int(
                f"{prefix}storage.s3.multipart.upload.part.size", part, 5 * 1024 * 1024
            )
            if part
            else 8 * 1024 * 1024,
            bulk_delete=_bool(f"{prefix}storage.s3.bulk.delete.enabled", bulk) if bulk else True,
        )
    except ValueError as exc:
        raise ValueError(f"{prefix}storage.*: {exc}") from None


def open_remote_store(settings: S3Settings | FileSystemSettings) -> RemoteStore:
    """The store for ``settings`` (no I/O yet: the first call connects)."""
    if isinstance(settings, FileSystemSettings):
        return FileSystemRemoteStore(settings.root)
    return S3RemoteStore(settings)
