"""``pip install`` of a clone, without extras, gives a working ``samsa broker``
(issue 38, item 4; the README's "Installing with pip").

A fresh venv, ``pip install CLONE`` (a built wheel, not an editable install),
then the installed ``samsa broker`` serves a real client from this test's venv.
The broker's interpreter must import Samsa from its own site-packages, never
from the clone, and carry none of the test toolchain.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from tests.docs.fresh_clone import fresh_clone, newcomer_env

from samsa.testing import READY_PREFIX

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(900)]


def test_pip_install_without_extras_runs_a_broker(tmp_path: Path) -> None:
    clone = fresh_clone(tmp_path / "samsa")
    env = newcomer_env()
    venv = tmp_path / "samsa-env"
    subprocess.run(["python3", "-m", "venv", str(venv)], env=env, check=True, timeout=120)
    install = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "--quiet", "."],
        cwd=clone, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import samsa; print(samsa.__file__)"],
        cwd=tmp_path, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert str(venv) in where.stdout, where.stdout  # installed, not read from the clone
    listed = subprocess.run(
        [str(venv / "bin" / "pip"), "list", "--format=freeze"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    names = {line.split("==")[0].lower() for line in listed.stdout.splitlines()}
    assert {"samsa", "numpy", "crc32c"} <= names
    assert not names & {"pytest", "confluent-kafka", "pyspark", "playwright"}, names

    broker = subprocess.Popen(
        [str(venv / "bin" / "samsa"), "broker", "--listen", "127.0.0.1:0",
         "--data-dir", str(tmp_path / "data")],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        assert broker.stdout is not None
        line = broker.stdout.readline()  # the readiness line, or "" if it died
        assert line.startswith(READY_PREFIX), line
        bootstrap = line[len(READY_PREFIX) :].strip()
        producer = Producer({"bootstrap.servers": bootstrap})
        for i in range(3):
            producer.produce("installed", value=b"v%d" % i)
        assert producer.flush(30) == 0
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "pip-check"})
        consumer.assign([TopicPartition("installed", 0, 0)])
        values = []
        while len(values) < 3:
            message = consumer.poll(30)
            assert message is not None and message.error() is None, message
            values.append(message.value())
        consumer.close()
        assert values == [b"v0", b"v1", b"v2"]
    finally:
        broker.terminate()
        assert broker.wait(60) == 0
