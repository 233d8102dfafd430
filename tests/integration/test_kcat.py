"""kcat (Debian's build, bundling librdkafka 2.0.x) against a real Samsa broker."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from tests.integration.conftest import stored_batches

from samsa.protocol.batches.compression import Compression
from samsa.testing import BrokerProcess

KCAT = shutil.which("kcat") or shutil.which("kafkacat")
pytestmark = pytest.mark.skipif(
    KCAT is None, reason="kcat is not installed (scripts/setup.sh --with-system-packages)"
)


def kcat(*args: str, stdin: str | None = None) -> str:
    assert KCAT is not None
    result = subprocess.run(
        [KCAT, *args], input=stdin, capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_produce_consume(broker: BrokerProcess, topic_name: str, codec: str) -> None:
    # librdkafka sends a batch uncompressed when compressing would not shrink it, and
    # how it splits 30 lines into batches depends on timing: values that compress well
    # even alone make the stored codec deterministic.
    values = [f"value-{i}-" + "samsa" * 40 for i in range(30)]
    lines = [f"key{i}:{value}" for i, value in enumerate(values)]
    kcat(
        "-b",
        broker.bootstrap,
        "-P",
        "-t",
        topic_name,
        "-K",
        ":",
        "-z",
        codec,
        "-H",
        "origin=kcat",
        stdin="\n".join(lines) + "\n",
    )
    out = kcat(
        "-b",
        broker.bootstrap,
        "-C",
        "-t",
        topic_name,
        "-p",
        "0",
        "-o",
        "beginning",
        "-e",
        "-f",
        "%k=%s|%h\n",
    )
    assert out.splitlines() == [f"key{i}={value}|origin=kcat" for i, value in enumerate(values)]
    expected = Compression[codec.upper()]
    assert {h.compression for h in stored_batches(broker.data_dir, topic_name)} == {expected}


def test_metadata_listing(broker: BrokerProcess, topic_name: str) -> None:
    kcat("-b", broker.bootstrap, "-P", "-t", topic_name, stdin="x\n")
    out = kcat("-b", broker.bootstrap, "-L", "-t", topic_name)
    assert f'topic "{topic_name}" with 1 partitions' in out


def test_query_offsets(broker: BrokerProcess, topic_name: str) -> None:
    kcat("-b", broker.bootstrap, "-P", "-t", topic_name, stdin="a\nb\nc\n")
    out = kcat("-b", broker.bootstrap, "-Q", "-t", f"{topic_name}:0:-1")
    assert out.strip().endswith("3")


def test_null_values_large_record_and_offsets(
    broker: BrokerProcess, topic_name: str, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    # -Z turns empty keys and values into NULLs.
    kcat("-b", broker.bootstrap, "-P", "-t", topic_name, "-K", ":", "-Z", stdin="k1:\n:v2\n")
    big = tmp_path / "big.bin"
    big.write_bytes(b"B" * 900_000)
    kcat(
        "-b", broker.bootstrap, "-P", "-t", topic_name, "-X", "message.max.bytes=2000000", str(big)
    )
    out = kcat(
        "-b",
        broker.bootstrap,
        "-C",
        "-t",
        topic_name,
        "-p",
        "0",
        "-o",
        "beginning",
        "-c",
        "2",
        "-e",
        "-Z",
        "-f",
        "%k|%s|%S\n",
    )
    assert out.splitlines() == ["k1|NULL|-1", "NULL|v2|2"]
    sizes = kcat(
        "-b",
        broker.bootstrap,
        "-C",
        "-t",
        topic_name,
        "-p",
        "0",
        "-o",
        "2",
        "-c",
        "1",
        "-e",
        "-f",
        "%S\n",
    )
    assert sizes.strip() == "900000"
    assert kcat("-b", broker.bootstrap, "-Q", "-t", f"{topic_name}:0:-2").strip().endswith("0")
    assert kcat("-b", broker.bootstrap, "-Q", "-t", f"{topic_name}:0:-1").strip().endswith("3")
    assert kcat("-b", broker.bootstrap, "-Q", "-t", f"{topic_name}:0:1").strip().endswith("0")
