"""The remote tier on the S3 API (AWS S3, MinIO, Ceph RGW, SeaweedFS, S3Proxy...), through obstore.

Why obstore (0.12, Python bindings of the Rust ``object_store`` crate, as
used by DataFusion, Polars and delta-rs): its requests run on a Tokio runtime
of its own and complete asyncio futures, so a fetch never holds the event
loop or the GIL while bytes move; it streams a file upload in multipart
chunks straight from disk; and it signs, retries with backoff and pools
connections itself.  Measured on this 2-core machine against real servers,
same run, 8 requests in flight, obstore 0.12.1 vs aiobotocore 3.10.0:

=====================  ===================  =====================
                       S3Proxy 2.7.0        SeaweedFS 4.53
=====================  ===================  =====================
1 MiB range reads      247 vs 122 MB/s      251 vs 157 MB/s
4 KiB range read       3.4 vs 18.9 ms       1.4 vs 6.1 ms
64 MiB upload          12.9 vs 7.8 MB/s     55 vs 56 MB/s
client CPU, per run    0.34 vs 1.04 s       0.29 vs 1.05 s
=====================  ===================  =====================

Uploads are server-bound; everything the broker does per read (an index
probe, a range) is 2-5x faster and costs a third of the CPU.  aiobotocore
also needs botocore's newest request checksums turned off for S3-compatible
servers.

Errors become the ``store.base`` family: a missing key is
``RemoteObjectNotFoundError``; a missing bucket, bad credentials or a refused
permission are fatal; anything else (connection refused or reset, timeouts,
5xx and throttling after obstore's own bounded retries) is retriable.
Credentials live only in the client and in ``S3Settings``'s hidden fields;
``describe`` and every error message name the endpoint and bucket, never a key.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import obstore
from obstore.exceptions import (
    GenericError,
    NotFoundError,
    PermissionDeniedError,
    UnauthenticatedError,
)
from obstore.store import S3Store

from samsa.tiered.store.base import (
    ObjectInfo,
    RemoteObjectNotFoundError,
    RemoteStorageError,
    RetriableRemoteStorageError,
)

__all__ = ["S3RemoteStore", "S3Settings"]


@dataclass(frozen=True, slots=True)
class S3Settings:
    """Where and how to reach the bucket (the broker's ``rsm.config.s3.*`` settings).

    ``endpoint`` None means AWS itself (from ``region``); ``path_style`` is
    what most S3-compatible servers want (``http://host/bucket/key``).
    ``prefix`` puts the whole tier under one "directory" of a shared bucket.
    """

    bucket: str
    endpoint: str | None = None
    region: str = "us-east-1"
    prefix: str = ""
    access_key_id: str | None = field(default=None, repr=False)
    secret_access_key: str | None = field(default=None, repr=False)
    session_token: str | None = field(default=None, repr=False)
    path_style: bool = False
    request_timeout_ms: int = 30_000
    connect_timeout_ms: int = 5_000
    max_retries: int = 3
    retry_timeout_ms: int = 10_000
    upload_part_bytes: int = 8 * 1024 * 1024
    upload_concurrency: int = 4
    bulk_delete: bool = True

    def __post_init__(self) -> None:
        if not self.bucket:
            raise ValueError("the S3 bucket must be set")
        if self.prefix.startswith("/") or (self.prefix and not self.prefix.endswith("/")):
            raise ValueError(f"the S3 prefix must be empty or end with '/': {self.prefix!r}")
        if (self.access_key_id is None) != (self.secret_access_key is None):
            raise ValueError("set both the S3 access key id and the secret access key, or neither")

    def describe(self) -> str:
        where = self.endpoint or f"AWS S3 {self.region}"
        return f"s3://{self.bucket}/{self.prefix} at {where}"


def _ms(value: int) -> timedelta:
    return timedelta(milliseconds=value)


class S3RemoteStore:
    """``RemoteStore`` over one bucket and prefix (see the module doc)."""

    def __init__(self, settings: S3Settings) -> None:
        self.settings = settings
        config: dict[str, Any] = {
            "region": settings.region,
            "virtual_hosted_style_request": not settings.path_style,
            "disable_bulk_delete": not settings.bulk_delete,
        }
        if settings.endpoint:
            config["endpoint"] = settings.endpoint
        if settings.access_key_id is not None:
            config["access_key_id"] = settings.access_key_id
            config["secret_access_key"] = settings.secret_access_key
        if settings.session_token is not None:
            config["session_token"] = settings.session_token
        self._store = S3Store(
            settings.bucket,
            prefix=settings.prefix.rstrip("/") or None,
            client_options={
                "allow_http": bool(settings.endpoint and settings.endpoint.startswith("http:")),
                "timeout": _ms(settings.request_timeout_ms),
                "connect_timeout": _ms(settings.connect_timeout_ms),
            },
            retry_config={
                "max_retries": settings.max_retries,
                "retry_timeout": _ms(settings.retry_timeout_ms),
                "backoff": {"init_backoff": _ms(100), "max_backoff": _ms(2_000), "base": 2},
            },
            **config,
        )

    def describe(self) -> str:
        return self.settings.describe()

    async def put_file(self, key: str, path: Path) -> None:
        try:
            await obstore.put_async(
                self._store,
                key,
                path,
                chunk_size=self.settings.upload_part_bytes,
                max_concurrency=self.settings.upload_concurrency,
            )
        except Exception as exc:
            raise self._error("put", key, exc) from None

    async def put_bytes(self, key: str, data: bytes) -> None:
        try:
            await obstore.put_async(self._store, key, data, use_multipart=False)
        except Exception as exc:
            raise self._error("put", key, exc) from None

    async def get_range(self, key: str, start: int, length: int) -> bytes:
        if start < 0 or length < 0:
            raise ValueError(f"bad range: start {start}, length {length}")
        if length == 0:
            return b""
        try:
            return bytes(
                await obstore.get_range_async(self._store, key, start=start, length=length)
            )
        except Exception as exc:
            if _status(exc) == 416:
                return b""  # the range starts at or past the object's end
            raise self._error("get", key, exc) from None

    async def get(self, key: str) -> bytes:
        try:
            result = await obstore.get_async(self._store, key)
            return bytes(await result.bytes_async())
        except Exception as exc:
            raise self._error("get", key, exc) from None

    async def list_objects(self, prefix: str) -> list[ObjectInfo]:
        if prefix and not prefix.endswith("/"):
            raise ValueError(f"a list prefix is empty or ends with '/': {prefix!r}")
        try:
            found = [
                ObjectInfo(meta["path"], meta["size"], _epoch_ms(meta.get("last_modified")))
                async for batch in obstore.list(self._store, prefix=prefix or None)
                for meta in batch
            ]
        except Exception as exc:
            raise self._error("list", prefix, exc) from None
        found.sort(key=lambda o: o.key)
        return found

    async def delete_many(self, keys: Sequence[str]) -> None:
        if not keys:
            return
        try:
            await obstore.delete_async(self._store, list(keys))
        except Exception as exc:
            if isinstance(exc, FileNotFoundError | NotFoundError) and not _no_bucket(exc):
                return
            raise self._error("delete", keys[0], exc) from None

    async def close(self) -> None:
        """Nothing to release: the client's connections close with it."""

    def _error(self, operation: str, key: str, exc: Exception) -> RemoteStorageError:
        where = f"{operation} {key!r} in {self.describe()}"
        detail = _first_line(exc)
        if isinstance(exc, FileNotFoundError | NotFoundError):
            if _no_bucket(exc):
                return RemoteStorageError(f"{where}: the bucket does not exist ({detail})")
            return RemoteObjectNotFoundError(f"{where}: no such object")
        if isinstance(exc, PermissionDeniedError | UnauthenticatedError | PermissionError):
            return RemoteStorageError(f"{where}: access refused ({detail})")
        if isinstance(exc, GenericError | OSError | TimeoutError):
            status = _status(exc)
            if status is not None and 400 <= status < 500 and status not in (408, 429):
                return RemoteStorageError(f"{where}: {detail}")
            return RetriableRemoteStorageError(f"{where}: {detail}")
        return RemoteStorageError(f"{where}: {detail}")


def _epoch_ms(when: Any) -> int | None:
    """A listed object's ``last_modified`` (a datetime) in ms since the epoch."""
    timestamp = getattr(when, "timestamp", None)
    return None if timestamp is None else int(timestamp() * 1000)


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:400] if text else type(exc).__name__


def _no_bucket(exc: Exception) -> bool:
    return "NoSuchBucket" in str(exc)


def _status(exc: Exception) -> int | None:
    """The HTTP status obstore's message reports (``status code: 503 ...``), if any."""
    text = str(exc)
    marker = "status code: "
    at = text.find(marker)
    if at < 0:
        return None
    digits = text[at + len(marker) : at + len(marker) + 3]
    return int(digits) if digits.isdigit() else None
