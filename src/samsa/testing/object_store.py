"""A real S3-compatible server for tests: S3Proxy as a child process, and pytest fixtures.

``scripts/object-store.sh`` fetches S3Proxy (a Java S3 API server keeping
buckets as directories) and writes ``.object-store/object-store.env``;
``S3Server`` runs it on a free loopback port over a directory of its own,
waits until a signed request succeeds (the observable sign that the API is
up), creates buckets, and stops it.  As the other test processes it keeps its
output lines and can be paused (SIGSTOP: it keeps its sockets and answers
nothing, the "store unreachable for a while" fault) and resumed.  For
answers with errors or delays in front of it, see ``samsa.testing.s3_faults``.

Fixtures (``pytest_plugins = ["samsa.testing.object_store"]``):

* ``s3_server`` (session): one server per test process, torn down at the end.
* ``s3_bucket`` (function): a fresh bucket, so tests never see each other's objects.

The requests the fixture itself makes (create a bucket, probe readiness) are
signed with AWS Signature Version 4 here, with the standard library only, so
the fixture depends on no S3 client and can check the broker's.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import hmac
import http.client
import itertools
import os
import secrets
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from samsa.testing.process import LoggedProcess

__all__ = ["ObjectStoreMissing", "S3Server", "load_object_store", "s3_bucket", "s3_server"]

_REPO_ROOT = Path(__file__).resolve().parents[3]
REGION = "us-east-1"


class ObjectStoreMissing(RuntimeError):
    """S3Proxy was never fetched: the message says which command fetches it."""


@dataclass(frozen=True)
class ObjectStoreInstall:
    version: str
    jar: Path


def load_object_store() -> ObjectStoreInstall:
    env_file = Path(os.environ.get("SAMSA_OBJECT_STORE", _REPO_ROOT / ".object-store"))
    env_file = env_file / "object-store.env"
    if not env_file.is_file():
        raise ObjectStoreMissing(f"{env_file} not found: run scripts/object-store.sh")
    values = dict(line.split("=", 1) for line in env_file.read_text().splitlines() if "=" in line)
    jar = Path(values["S3PROXY_JAR"])
    if not jar.is_file():
        raise ObjectStoreMissing(f"{jar} not found: run scripts/object-store.sh")
    return ObjectStoreInstall(values["S3PROXY_VERSION"], jar)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def sign_v4(
    method: str, host: str, path: str, access_key: str, secret_key: str, body: bytes = b""
) -> dict[str, str]:
    """The headers that sign a path-style request (no query string) with SigV4."""
    now = datetime.datetime.now(datetime.UTC)
    amz_date, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
    payload = hashlib.sha256(body).hexdigest()
    headers = {"host": host, "x-amz-content-sha256": payload, "x-amz-date": amz_date}
    signed = ";".join(sorted(headers))
    canonical = "\n".join(
        [method, path, "", *(f"{k}:{headers[k]}" for k in sorted(headers)), "", signed, payload]
    )
    scope = f"{day}/{REGION}/s3/aws4_request"
    to_sign = "\n".join(
        ["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()]
    )
    key = _hmac(
        _hmac(_hmac(_hmac(f"AWS4{secret_key}".encode(), day), REGION), "s3"), "aws4_request"
    )
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    headers["authorization"] = (
        f"AWS4-HMAC-SHA256 Credential={access_key}/{scope}, "
        f"SignedHeaders={signed}, Signature={signature}"
    )
    return headers


class S3Server(LoggedProcess):
    """One S3Proxy process serving ``data_dir`` on ``127.0.0.1:<port>``."""

    access_key = "samsa-test"
    startup_timeout_s = 120.0
    """A JVM beside other test processes on 2 cores can take tens of seconds."""

    def __init__(
        self, install: ObjectStoreInstall, data_dir: Path, port: int | None = None
    ) -> None:
        super().__init__()
        self.install = install
        self.data_dir = data_dir
        self.port = port or free_port()
        self.secret_key = secrets.token_hex(16)
        self._buckets = itertools.count()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float | None = None) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        conf = self.data_dir.parent / f"s3proxy-{self.port}.properties"
        conf.write_text(
            f"s3proxy.endpoint={self.endpoint}\n"
            "s3proxy.authorization=aws-v2-or-v4\n"
            f"s3proxy.identity={self.access_key}\n"
            f"s3proxy.credential={self.secret_key}\n"
            "jclouds.provider=filesystem-nio2\n"
            "jclouds.identity=samsa\n"
            "jclouds.credential=samsa\n"
            f"jclouds.filesystem.basedir={self.data_dir}\n"
        )
        java = shutil.which("java") or "java"
        argv = [java, "-Xmx512m", "-XX:+UseSerialGC", "-jar", str(self.install.jar)]
        self.proc = subprocess.Popen(
            [*argv, "--properties", str(conf)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "LOG_LEVEL": "warn", "JETTY_LOG_LEVEL": "warn"},
        )
        threading.Thread(target=self._read_output, daemon=True).start()
        self.wait_ready(timeout or self.startup_timeout_s)

    def _read_output(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for line in self.proc.stdout:
            if not line.startswith(("2", "1", "0")) or "|-" not in line:  # logback's own chatter
                self._add_log_line(line.rstrip("\n"))

    def request(
        self, method: str, path: str, body: bytes = b"", timeout: float = 10.0
    ) -> tuple[int, bytes]:
        """One signed request to the server: (status, body)."""
        host = f"127.0.0.1:{self.port}"
        headers = sign_v4(method, host, path, self.access_key, self.secret_key, body)
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            conn.request(method, path, body=body, headers=headers)
            response = conn.getresponse()
            return response.status, response.read()
        finally:
            conn.close()

    def wait_ready(self, timeout: float) -> None:
        """Until a signed ListBuckets answers 200 (or the process dies)."""
        deadline = time.monotonic() + timeout
        while True:
            if not self.running:
                raise RuntimeError(f"S3Proxy exited before it answered:\n{self.log_text()[-4000:]}")
            try:
                status, body = self.request("GET", "/", timeout=2.0)
                if status == 200:
                    return
                raise RuntimeError(f"S3Proxy answered ListBuckets with {status}: {body[:300]!r}")
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"S3Proxy did not answer in {timeout} s:\n{self.log_text()[-4000:]}"
                )
            time.sleep(0.1)

    def create_bucket(self, name: str | None = None) -> str:
        """A new bucket (a unique name when none is given)."""
        name = name or f"bucket-{os.getpid()}-{next(self._buckets)}"
        status, body = self.request("PUT", f"/{name}")
        if status != 200:
            raise RuntimeError(f"creating bucket {name}: {status} {body[:300]!r}")
        return name

    def pause(self) -> None:
        """SIGSTOP, then wait until the kernel shows every thread stopped: a
        JVM's threads stop one by one, and a request sent in between would
        still be answered."""
        super().pause()
        assert self.proc is not None
        tasks = Path(f"/proc/{self.proc.pid}/task")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                states = [
                    (t / "stat").read_text().rsplit(")", 1)[1].split()[0] for t in tasks.iterdir()
                ]
            except OSError:
                continue  # a thread ended while being listed
            if all(state in "Tt" for state in states):
                return
            time.sleep(0.01)
        raise TimeoutError(f"S3Proxy (pid {self.proc.pid}) did not stop within 10 s of SIGSTOP")

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """SIGSTOP for the block, SIGCONT after it, whatever the block raised
        (a session's server must never stay paused for the next test)."""
        self.pause()
        try:
            yield
        finally:
            self.resume()

    def stop(self, timeout: float = 20.0) -> int:
        """SIGTERM and wait (S3Proxy has no state to flush: objects are files)."""
        if self.proc is None:
            return 0
        if self.proc.poll() is None:
            self.resume()  # a paused process cannot handle SIGTERM
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        return self.proc.returncode


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    """A running S3Proxy. In CI (``CI`` set) a missing install fails the test,
    since ``scripts/test.sh`` always installs; elsewhere it skips with the command."""
    try:
        install = load_object_store()
    except ObjectStoreMissing as missing:
        if os.environ.get("CI"):
            raise
        pytest.skip(str(missing))
    server = S3Server(install, tmp_path_factory.mktemp("s3") / "buckets")
    server.start()
    try:
        yield server
    finally:
        server.stop()
        server.kill()


@pytest.fixture
def s3_bucket(s3_server: S3Server) -> str:
    """A bucket of the test's own on the session's server."""
    if not s3_server.running:
        pytest.fail("the session's S3 server is not running")
    return s3_server.create_bucket()
