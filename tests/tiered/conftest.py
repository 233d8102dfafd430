"""Fixtures of the tiered-storage tests: a real S3 server process and its stores.

``store`` runs a test once on each kind of remote store: a directory, and a
bucket of its own on the session's S3Proxy (with the settings S3Proxy needs:
path-style addressing, no bulk delete).  Modules whose tests need other S3
settings (short timeouts, a key prefix) define a ``store`` of their own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from samsa.testing.object_store import S3Server
from samsa.testing.object_store import s3_bucket as s3_bucket
from samsa.testing.object_store import s3_server as s3_server
from samsa.tiered.store import FileSystemRemoteStore, RemoteStore
from samsa.tiered.store.s3 import S3RemoteStore, S3Settings


@pytest.fixture(params=["filesystem", "s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RemoteStore]:
    if request.param == "filesystem":
        made: RemoteStore = FileSystemRemoteStore(tmp_path / "remote")
    else:
        server: S3Server = request.getfixturevalue("s3_server")
        made = S3RemoteStore(
            S3Settings(
                request.getfixturevalue("s3_bucket"),
                endpoint=server.endpoint,
                access_key_id=server.access_key,
                secret_access_key=server.secret_key,
                path_style=True,
                bulk_delete=False,
            )
        )
    yield made
    asyncio.run(made.close())
