"""Schema registry lookups per second beside the HTTP floor, and serialize+produce of Avro vs raw bytes.

1. **Lookups**, one client on one kept-alive connection (what a deserializing
   consumer does on a cache miss), each case run for ``--seconds``, the cases
   alternating over ``--rounds``:

   * ``floor``: GET on ``samsa.http``'s endpoint answering a fixed body
     (``_echo_server``: the registry endpoint's stack and options, in a process of
     its own as the broker is), what the HTTP layer alone costs;
   * ``GET /schemas/ids/{id}`` and ``POST /subjects/{subject}`` (look a schema up
     by its text: parse and canonical form) on a broker's registry (uncached:
     every one is a request);
   * confluent-kafka's ``SchemaRegistryClient.get_schema``, its cache cleared
     before each call (uncached: a request through its HTTP client) and kept
     (cached: what a deserializer does after the first record).

   Ratios: each registry case to the floor, cached to uncached.

2. **Serialize+produce**: confluent-kafka's Producer sending ``--records`` Avro
   records through ``AvroSerializer`` (its schema id cached after the first)
   against the same records already encoded (raw bytes of the same size), to a
   topic of the same broker, alternating; records per second and the ratio.

Karapace (the other open-source registry) is not on PyPI (``pip download
karapace`` finds no distribution) and Confluent's is not on Maven Central, so
the peer is the floor.

    .venv/bin/python -m bench.registry.registry_lookups [--seconds 5] [--rounds 3]
        [--records 100000]
"""

from __future__ import annotations

import argparse
import http.client
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from samsa.testing import BrokerProcess

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
ORDER = json.dumps(
    {
        "type": "record",
        "name": "Order",
        "namespace": "bench",
        "fields": [
            {"name": "id", "type": "string"},
            {"name": "qty", "type": "int"},
            {"name": "price", "type": "double"},
            {"name": "note", "type": ["null", "string"], "default": None},
        ],
    }
)
SUBJECTS = 20


@contextmanager
def registry_broker() -> Iterator[tuple[str, str]]:
    """(bootstrap, registry URL) of a fresh broker serving the registry."""
    with tempfile.TemporaryDirectory(prefix="samsa-bench-registry-") as tmp:
        proc = BrokerProcess(Path(tmp) / "data", args=["--registry-listen", "127.0.0.1:0"])
        bootstrap = proc.start(timeout=120)
        try:
            if not proc.wait_for_log("schema registry listening on ", 120):
                raise SystemExit("the registry did not start:\n" + proc.log_text()[-3000:])
            found = re.search(
                r"schema registry listening on (http://\S+?)/?$", proc.log_text(), re.M
            )
            assert found is not None
            yield bootstrap, found.group(1)
        finally:
            proc.stop()


@contextmanager
def echo_server() -> Iterator[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "bench.registry._echo_server"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line.startswith("echo listening on "):
            raise SystemExit(f"the echo server did not start: {line!r}")
        yield line.split()[-1]
    finally:
        proc.terminate()
        proc.wait(10)


class Connection:
    """One kept-alive connection; ``request`` returns the body (status 200 checked)."""

    def __init__(self, url: str) -> None:
        parts = urllib.parse.urlsplit(url)
        self.conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)

    def request(self, method: str, path: str, body: bytes | None = None) -> bytes:
        try:
            self.conn.request(method, path, body, {"Content-Type": CONTENT_TYPE})
            response = self.conn.getresponse()
        except (http.client.RemoteDisconnected, ConnectionError):
            # the server closes a connection idle for 10 s (another case ran meanwhile)
            self.conn.close()
            self.conn.request(method, path, body, {"Content-Type": CONTENT_TYPE})
            response = self.conn.getresponse()
        data = response.read()
        if response.status != 200:
            raise RuntimeError(f"{method} {path}: {response.status} {data[:200]!r}")
        return data


def per_second(seconds: float, op: Callable[[], object]) -> float:
    for _ in range(50):  # warm: connections, caches, the interpreter's
        op()
    count, start = 0, time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(20):
            op()
        count += 20
        now = time.perf_counter()
        if now >= deadline:
            return count / (now - start)


def setup_schemas(url: str) -> list[tuple[str, int, str]]:
    """(subject, id, schema text) of ``SUBJECTS`` registered schemas."""
    conn = Connection(url)
    out = []
    for i in range(SUBJECTS):
        schema = json.loads(ORDER)
        schema["name"] = f"Order{i}"
        text = json.dumps(schema)
        body = json.dumps({"schema": text}).encode()
        answer = json.loads(conn.request("POST", f"/subjects/bench-{i}-value/versions", body))
        out.append((f"bench-{i}-value", int(answer["id"]), text))
    return out


def lookup_cases(url: str, floor_url: str) -> dict[str, Callable[[], object]]:
    from confluent_kafka.schema_registry import SchemaRegistryClient

    schemas = setup_schemas(url)
    registry, floor = Connection(url), Connection(floor_url)
    client = SchemaRegistryClient({"url": url})
    turn = iter(range(10**12))

    def pick() -> tuple[str, int, str]:
        return schemas[next(turn) % len(schemas)]

    def by_id() -> object:
        return registry.request("GET", f"/schemas/ids/{pick()[1]}")

    def by_text() -> object:
        subject, _, text = pick()
        return registry.request(
            "POST", f"/subjects/{subject}", json.dumps({"schema": text}).encode()
        )

    def uncached() -> object:
        client._cache.clear()
        return client.get_schema(pick()[1])

    def cached() -> object:
        return client.get_schema(pick()[1])

    return {
        "floor (samsa.http echo)": lambda: floor.request("GET", "/schemas/ids/1"),
        "GET /schemas/ids/{id}": by_id,
        "POST /subjects/{subject} (lookup)": by_text,
        "confluent client, cache cleared": uncached,
        "confluent client, cached": cached,
    }


def produce_rates(bootstrap: str, url: str, records: int, rounds: int) -> dict[str, list[float]]:
    from confluent_kafka import Producer
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    values = [
        {"id": f"order-{i}", "qty": i % 100, "price": i * 0.5, "note": None if i % 3 else "x"}
        for i in range(1000)
    ]
    serializer = AvroSerializer(SchemaRegistryClient({"url": url}), ORDER)
    context = SerializationContext("bench-orders", MessageField.VALUE)
    encoded = [serializer(v, context) for v in values]  # raw: the same bytes, made beforehand

    def run(avro: bool) -> float:
        producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
        start = time.perf_counter()
        for i in range(records):
            value = serializer(values[i % 1000], context) if avro else encoded[i % 1000]
            while True:
                try:
                    producer.produce("bench-orders", value)
                    break
                except BufferError:
                    producer.poll(0.01)
            if i % 1000 == 0:
                producer.poll(0)
        producer.flush(120)
        return records / (time.perf_counter() - start)

    out: dict[str, list[float]] = {"raw bytes": [], "Avro (AvroSerializer)": []}
    for _ in range(rounds):
        out["raw bytes"].append(run(False))
        out["Avro (AvroSerializer)"].append(run(True))
    return out


def median_line(name: str, rates: list[float], base: float | None, unit: str) -> str:
    value = statistics.median(rates)
    spread = f"{min(rates):,.0f}-{max(rates):,.0f}"
    ratio = f"{value / base:6.3f}x" if base else "     -"
    return f"  {name:38s} {value:12,.0f} {unit}  (runs {spread})  {ratio}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="per lookup case and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--records", type=int, default=100_000, help="per produce run")
    args = parser.parse_args(argv)
    print("Karapace: not on PyPI (pip download karapace: no distribution); peer: the HTTP floor")
    with registry_broker() as (bootstrap, url), echo_server() as floor_url:
        cases = lookup_cases(url, floor_url)
        results: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.rounds):
            for name, op in cases.items():
                results[name].append(per_second(args.seconds, op))
        floor = statistics.median(results["floor (samsa.http echo)"])
        uncached = statistics.median(results["confluent client, cache cleared"])
        print(f"\nlookups per second, one client, one kept-alive connection ({args.rounds} rounds "
              f"x {args.seconds:g} s; ratio to the floor, the cached row to the uncached one)")  # fmt: skip
        for name, rates in results.items():
            base = uncached if name == "confluent client, cached" else floor
            print(median_line(name, rates, None if "floor" in name else base, "/s"))
        produced = produce_rates(bootstrap, url, args.records, args.rounds)
        raw = statistics.median(produced["raw bytes"])
        print(f"\nserialize+produce, confluent-kafka, {args.records:,} records per run "
              f"({args.rounds} runs each; ratio to raw bytes)")  # fmt: skip
        for name, rates in produced.items():
            print(median_line(name, rates, None if name == "raw bytes" else raw, "records/s"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
