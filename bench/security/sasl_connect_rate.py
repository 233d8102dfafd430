"""SASL connection set-up rate as a ratio of PLAINTEXT, on one broker, in one run.

One Samsa broker serves PLAINTEXT and SASL_PLAINTEXT (PLAIN from the JAAS
line, SCRAM-SHA-256/512 users seeded into the metadata log).  The same client
(a blocking socket speaking Kafka's frames, with Samsa's sans-I/O SASL
exchange, so no client library's start-up is measured) opens a connection,
sends ApiVersions, logs in where the listener asks for it, gets a Metadata
answer and closes; connections run back to back.  Reported: medians of
connections per second per protocol, the ratio to PLAINTEXT, and the broker's
CPU milliseconds per connection.  SCRAM's cost is mostly PBKDF2 with 4096
iterations, which the client pays too (Kafka's clients pay it the same way).

    .venv/bin/python -m bench.security.sasl_connect_rate --runs 3 --connections 300
"""

from __future__ import annotations

import argparse
import re
import socket
import statistics
import struct
import tempfile
import time
from pathlib import Path
from typing import Any

from samsa.protocol.api import decode_response, encode_request
from samsa.protocol.sasl.exchange import SaslClientExchange
from samsa.testing import BrokerProcess

USER, PASSWORD = "bench", "bench-secret"
CASES = (
    ("PLAINTEXT", ""),
    ("SASL_PLAINTEXT", "PLAIN"),
    ("SASL_PLAINTEXT", "SCRAM-SHA-256"),
    ("SASL_PLAINTEXT", "SCRAM-SHA-512"),
)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100


def call(sock: socket.socket, api_key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
    sock.sendall(encode_request(api_key, version, 1, "bench", body))
    (size,) = struct.unpack(">i", read(sock, 4))
    return decode_response(api_key, version, memoryview(read(sock, size)))[1]


def read(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionError("broker closed the connection")
        data += chunk
    return data


def connect_once(port: int, mechanism: str) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        call(sock, 18, 3, {"client_software_name": "bench", "client_software_version": "1"})
        if mechanism:
            assert call(sock, 17, 1, {"mechanism": mechanism})["error_code"] == 0
            exchange = SaslClientExchange(mechanism, USER, PASSWORD)
            token: bytes | None = exchange.first()
            while token is not None:
                answer = call(sock, 36, 2, {"auth_bytes": token})
                assert answer["error_code"] == 0, answer["error_message"]
                token = exchange.next(bytes(answer["auth_bytes"]))
        call(sock, 3, 12, {"topics": [], "allow_auto_topic_creation": False})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--connections", type=int, default=300)
    args = ap.parse_args()
    rates: dict[str, list[float]] = {m or p: [] for p, m in CASES}
    cpu_ms: dict[str, list[float]] = {m or p: [] for p, m in CASES}
    seeds = " ".join(
        f"{m}=[name={USER},password={PASSWORD}]" for m in ("SCRAM-SHA-256", "SCRAM-SHA-512")
    )
    with tempfile.TemporaryDirectory(prefix="samsa-sasl-bench-") as tmp:
        broker = BrokerProcess(
            Path(tmp) / "data",
            {
                "listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
                "inter.broker.listener.name": "PLAINTEXT",
                "sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule "
                f'required user_{USER}="{PASSWORD}";',
                "scram.bootstrap.credentials": seeds,
            },
            port=None,
        )
        broker.start(timeout=60)
        try:
            ports = dict(
                re.findall(r"listener (\w+) \(\w+\) bound to [\d.]+:(\d+)", broker.log_text())
            )
            assert broker.proc is not None
            pid = broker.proc.pid
            for run in range(args.runs):
                order = CASES if run % 2 == 0 else tuple(reversed(CASES))
                for protocol, mechanism in order:
                    name = mechanism or protocol
                    port = int(ports[protocol])
                    cpu0 = cpu_seconds(pid)
                    started = time.perf_counter()
                    for _ in range(args.connections):
                        connect_once(port, mechanism)
                    elapsed = time.perf_counter() - started
                    rates[name].append(args.connections / elapsed)
                    cpu_ms[name].append(1000 * (cpu_seconds(pid) - cpu0) / args.connections)
                    print(
                        f"run {run + 1} {name:14}: {rates[name][-1]:,.0f} connections/s", flush=True
                    )
        finally:
            broker.stop()
    plain = statistics.median(rates["PLAINTEXT"])
    print(f"\n{args.runs} runs, alternating order; medians of {args.connections} sequential "
          "connections (connect, ApiVersions, login, Metadata, close), same client.\n")  # fmt: skip
    print(
        "| listener / mechanism | connections/s | ratio to PLAINTEXT | broker CPU ms/connection |"
    )
    print("|---|---|---|---|")
    for name in rates:
        rate = statistics.median(rates[name])
        print(
            f"| {name} | {rate:,.0f} | {rate / plain:.2f} | {statistics.median(cpu_ms[name]):.2f} |"
        )


if __name__ == "__main__":
    main()
