"""The RemoteStore contract, on the filesystem store and on a real S3 server process."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from samsa.testing.object_store import S3Server
from samsa.testing.s3_faults import S3FaultProxy
from samsa.tiered.store.base import (
    ObjectInfo,
    RemoteObjectNotFoundError,
    RemoteStorageError,
    RemoteStore,
    RetriableRemoteStorageError,
)
from samsa.tiered.store.filesystem import FileSystemRemoteStore
from samsa.tiered.store.s3 import S3RemoteStore, S3Settings


def _s3(server: S3Server, bucket: str, *, endpoint: str | None = None, **kw: Any) -> S3RemoteStore:
    fields: dict[str, object] = {
        "endpoint": endpoint or server.endpoint,
        "access_key_id": server.access_key,
        "secret_access_key": server.secret_key,
        "path_style": True,
        "bulk_delete": False,  # S3Proxy answers DeleteObjects with 501 for obstore's checksum
        "prefix": "tier/",
    }
    fields.update(kw)
    return S3RemoteStore(S3Settings(bucket, **fields))  # type: ignore[arg-type,unused-ignore]


@pytest.fixture(params=["filesystem", "s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RemoteStore]:
    if request.param == "filesystem":
        made: RemoteStore = FileSystemRemoteStore(tmp_path / "remote")
    else:
        server: S3Server = request.getfixturevalue("s3_server")
        made = _s3(server, request.getfixturevalue("s3_bucket"))
    yield made
    asyncio.run(made.close())


def run(coroutine_fn: Callable[[], object]) -> None:
    asyncio.run(coroutine_fn())  # type: ignore[arg-type]


def test_put_get_range_list_delete(store: RemoteStore, tmp_path: Path) -> None:
    segment = tmp_path / "00000000000000000000.log"
    data = os.urandom(3 * 1024 * 1024 + 17)  # several multipart parts and a tail
    segment.write_bytes(data)

    async def scenario() -> None:
        await store.put_file("orders-x/0/a.log", segment)
        await store.put_bytes("orders-x/0/a.index", b"\x00\x00\x00\x05")
        await store.put_bytes("orders-x/1/b.index", b"")
        assert await store.get("orders-x/0/a.index") == b"\x00\x00\x00\x05"
        assert await store.get("orders-x/1/b.index") == b""
        assert await store.get_range("orders-x/0/a.log", 0, 10) == data[:10]
        assert (
            await store.get_range("orders-x/0/a.log", 1_000_000, 65536) == data[1_000_000:1_065_536]
        )
        assert await store.get_range("orders-x/0/a.log", len(data) - 5, 100) == data[-5:]
        assert await store.get_range("orders-x/0/a.log", len(data), 100) == b""
        assert await store.get_range("orders-x/0/a.log", len(data) + 10, 100) == b""
        assert await store.get("orders-x/0/a.log") == data
        assert await store.list_objects("orders-x/0/") == [
            ObjectInfo("orders-x/0/a.index", 4),
            ObjectInfo("orders-x/0/a.log", len(data)),
        ]
        assert [o.key for o in await store.list_objects("")] == [
            "orders-x/0/a.index",
            "orders-x/0/a.log",
            "orders-x/1/b.index",
        ]
        assert await store.list_objects("other/") == []
        with pytest.raises(ValueError):
            await store.list_objects("orders-x/0/a")  # not a "directory"
        await store.delete_many(["orders-x/0/a.log", "orders-x/0/missing.log"])
        await store.delete_many([])
        assert [o.key for o in await store.list_objects("orders-x/0/")] == ["orders-x/0/a.index"]
        with pytest.raises(RemoteObjectNotFoundError):
            await store.get("orders-x/0/a.log")
        with pytest.raises(RemoteObjectNotFoundError):
            await store.get_range("orders-x/0/a.log", 0, 10)

    run(scenario)


def test_a_put_replaces_the_object_whole(store: RemoteStore) -> None:
    async def scenario() -> None:
        await store.put_bytes("k/v", b"first version, longer")
        await store.put_bytes("k/v", b"second")
        assert await store.get("k/v") == b"second"

    run(scenario)


def test_filesystem_writes_leave_no_temporaries(tmp_path: Path) -> None:
    store = FileSystemRemoteStore(tmp_path / "remote")
    (tmp_path / "remote" / "t" / "0").mkdir(parents=True)
    stale = tmp_path / "remote" / "t" / "0" / ".x.log.abc.tmp"  # a crash mid-put left it
    stale.write_bytes(b"half")

    async def scenario() -> None:
        await store.put_bytes("t/0/x.log", b"whole")
        assert [o.key for o in await store.list_objects("t/")] == ["t/0/x.log"]
        with pytest.raises(ValueError):
            await store.put_bytes("t/../escape", b"")
        await store.close()

    run(scenario)
    assert store.remove_temporaries() == 1 and not stale.exists()
    assert sorted(p.name for p in (tmp_path / "remote" / "t" / "0").iterdir()) == ["x.log"]


def test_s3_secrets_never_show(s3_server: S3Server, s3_bucket: str) -> None:
    store = _s3(s3_server, s3_bucket)
    assert s3_server.secret_key not in repr(store.settings)
    assert s3_server.secret_key not in store.describe()

    async def scenario() -> None:
        with pytest.raises(RemoteObjectNotFoundError) as missing:
            await store.get("nothing/here")
        assert s3_server.secret_key not in str(missing.value)

    run(scenario)


def test_s3_configuration_errors_are_fatal(s3_server: S3Server, s3_bucket: str) -> None:
    async def scenario() -> None:
        for bad in (
            _s3(s3_server, "no-such-bucket"),
            _s3(s3_server, s3_bucket, secret_access_key="wrong"),
        ):
            with pytest.raises(RemoteStorageError) as failure:
                await bad.put_bytes("k", b"v")
            assert not failure.value.retriable, failure.value
            assert not isinstance(failure.value, RemoteObjectNotFoundError)

    run(scenario)


def test_s3_unreachable_errors_are_retriable(s3_server: S3Server, s3_bucket: str) -> None:
    fast: dict[str, Any] = {
        "request_timeout_ms": 1_000,
        "connect_timeout_ms": 500,
        "max_retries": 1,
        "retry_timeout_ms": 2_000,
    }

    async def refused() -> None:
        closed = _s3(s3_server, s3_bucket, endpoint="http://127.0.0.1:1", **fast)
        with pytest.raises(RetriableRemoteStorageError):
            await closed.get("k")

    run(refused)

    store = _s3(s3_server, s3_bucket, **fast)
    run(lambda: store.put_bytes("k", b"v"))
    with s3_server.paused():  # the server keeps its socket but answers nothing
        began = time.monotonic()
        with pytest.raises(RetriableRemoteStorageError):
            run(lambda: store.get("k"))
        assert time.monotonic() - began < 15  # bounded by the timeouts, not hung
    run(lambda: store.get("k"))  # and it serves again once resumed


@pytest.mark.parametrize("status", [500, 503])
def test_s3_server_errors_are_retriable(s3_server: S3Server, s3_bucket: str, status: int) -> None:
    with S3FaultProxy(s3_server.port) as proxy:
        store = _s3(
            s3_server, s3_bucket, endpoint=proxy.endpoint, max_retries=1, retry_timeout_ms=2_000
        )
        run(lambda: store.put_bytes("k", b"v"))
        proxy.fail_with(status)
        with pytest.raises(RetriableRemoteStorageError, match=str(status)):
            run(lambda: store.get("k"))
        assert proxy.failed_requests >= 1
        proxy.pass_through()
        assert asyncio.run(store.get("k")) == b"v"


def test_s3_a_slow_store_times_out_retriably(s3_server: S3Server, s3_bucket: str) -> None:
    with S3FaultProxy(s3_server.port) as proxy:
        store = _s3(
            s3_server,
            s3_bucket,
            endpoint=proxy.endpoint,
            request_timeout_ms=300,
            max_retries=0,
            retry_timeout_ms=1_000,
        )
        run(lambda: store.put_bytes("k", b"v"))
        proxy.delay(2.0)
        began = time.monotonic()
        with pytest.raises(RetriableRemoteStorageError):
            run(lambda: store.get("k"))
        assert time.monotonic() - began < 1.5
        proxy.pass_through()
        assert asyncio.run(store.get("k")) == b"v"
