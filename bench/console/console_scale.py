"""The web console on a broker with a 10,000-partition topic: does every page load in
under a second?

Not a test (creating 10,000 partitions takes minutes on a shared machine).
A cluster of ``--nodes`` combined broker+controller nodes (default 3: one
process here may open 20,000 files, and each partition keeps three open, so
10,000 partitions do not fit in one broker) with the console on; a topic of
``--partitions`` partitions (default 10,000, replication factor 1) holding
``--records`` records spread over all of them; a consumer group that committed
half of them on every partition.  The pages are read from node 1's console
(every console shows the whole topic from the metadata image; records from the
partitions its node leads), the group page from its coordinator's.  Then:

1. each JSON endpoint a page calls, timed from this process (best and median
   of ``--repeat`` calls, milliseconds), the time the broker itself took (its
   ``Server-Timing`` header: the rest is waiting for a CPU on a shared machine),
   and its size;
2. each page opened in headless Chromium (Debian's), timed from navigation to
   the page marking itself loaded (``body[data-loaded=true]``: its data fetched
   and drawn).

Target: every page under 1 s.

    .venv/bin/python -m bench.console.console_scale [--partitions 10000] [--records 20000] [--nodes 3]
        [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from samsa.testing.cluster import LocalCluster

TOPIC, GROUP = "wide", "wide-readers"
CREATE_TIMEOUT_S = 1800.0


def get(url: str) -> tuple[float, int, Any]:
    seconds, _, size, body = timed_get(url)
    return seconds, size, body


def timed_get(url: str) -> tuple[float, float, int, Any]:
    """(wall seconds, seconds inside the broker from Server-Timing, bytes, JSON)."""
    started = time.perf_counter()
    with urllib.request.urlopen(url, timeout=60) as response:
        body = response.read()
        timing = response.headers.get("Server-Timing", "")
    wall = time.perf_counter() - started
    inside = float(timing.split("dur=")[1]) / 1000 if "dur=" in timing else float("nan")
    return wall, inside, len(body), json.loads(body)


def create(admin: AdminClient, partitions: int) -> None:
    """Create the topic, asking again if an answer is lost on a loaded machine.

    The client gives up on CreateTopics after a minute while the controller may
    still commit it; whatever the answer, the topic is looked for before asking
    again (``fill`` then waits for every partition's leader)."""
    for _ in range(5):
        future = admin.create_topics([NewTopic(TOPIC, partitions, 1)])[TOPIC]
        try:
            future.result(120)
            return
        except KafkaException as exc:
            print(f"CreateTopics: {exc}", file=sys.stderr)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if TOPIC in admin.list_topics(timeout=30).topics:
                    return
            except KafkaException:
                pass
            time.sleep(2.0)
    raise RuntimeError(f"could not create {TOPIC}")


def fill(bootstrap: str, partitions: int, records: int) -> None:
    """Records on every partition; the producer waits for each partition's leader,
    so this returns once all 10,000 are hosted."""
    producer = Producer(
        {"bootstrap.servers": bootstrap, "linger.ms": 20, "message.timeout.ms": 1_800_000}
    )
    admin = AdminClient({"bootstrap.servers": bootstrap})
    deadline = time.monotonic() + CREATE_TIMEOUT_S
    while True:  # listing all topics never creates one
        try:
            topic = admin.list_topics(timeout=60).topics.get(TOPIC)
        except KafkaException:
            topic = None  # the brokers are busy making leaders: ask again
        if topic is not None and len(topic.partitions) == partitions:
            break
        if time.monotonic() > deadline:
            raise TimeoutError(f"{TOPIC} has not got {partitions} partitions")
        time.sleep(1.0)
    for i in range(records):
        value = json.dumps({"id": i, "note": "x" * 40}).encode()
        producer.produce(TOPIC, key=b"key-%d" % i, value=value, partition=i % partitions)
        if i % 1000 == 0:
            producer.poll(0)
    assert producer.flush(CREATE_TIMEOUT_S) == 0
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP})
    per_partition = records // partitions
    offsets = [TopicPartition(TOPIC, p, per_partition // 2) for p in range(partitions)]
    consumer.commit(offsets=offsets, asynchronous=False)
    consumer.close()


def group_console(consoles: list[str]) -> str:
    """The console of the node coordinating the group (the one that lists it)."""
    for console in consoles:
        if any(g["group"] == GROUP for g in get(console + "api/groups")[2]["groups"]):
            return console
    raise LookupError(f"no console lists group {GROUP}")


def time_pages(
    console: str, groups_at: str, repeat: int
) -> list[tuple[str, float, float, float, int]]:
    """Per call: best and median wall time, median time inside the broker, bytes."""
    paths = [
        "api/brokers",
        "api/cluster",
        "api/topics",
        "api/groups",
        "api/rates",
        f"api/topics/{TOPIC}",
        f"api/topics/{TOPIC}?offset=9900",
        f"api/topics/{TOPIC}/messages",
        f"api/topics/{TOPIC}/messages?from=oldest",
        f"api/topics/{TOPIC}/messages?from=timestamp&timestamp=0",
        f"api/topics/{TOPIC}/messages?partition=7&from=offset&offset=0",
        f"api/topics/{TOPIC}/messages?q=key-1234",
        f"api/topics/{TOPIC}/search?q=key-1234",
        f"api/topics/{TOPIC}/search?q=key-1234&from=oldest",
        "api/acls",
        "api/users",
        "api/quotas",
    ]
    on_coordinator = [f"api/groups/{GROUP}", f"api/topics/{TOPIC}/consumers"]
    rows = []
    for path in [*paths, *on_coordinator]:
        base = groups_at if path in on_coordinator else console
        walls, insides, size = [], [], 0
        for _ in range(repeat):
            wall, inside, size, _ = timed_get(base + path)
            walls.append(wall)
            insides.append(inside)
        rows.append((path, min(walls), statistics.median(walls), statistics.median(insides), size))
    return rows


def time_browser(console: str, groups_at: str, repeat: int) -> list[tuple[str, float, float]]:
    import playwright.sync_api as playwright_api

    routes = [
        "#/",
        "#/cluster",
        f"#/topics/{TOPIC}",
        f"#/topics/{TOPIC}/messages",
        f"#/topics/{TOPIC}/messages?from=timestamp&timestamp=0",
        f"#/groups/{GROUP}",
        "#/security",
    ]
    rows = []
    with playwright_api.sync_playwright() as p, tempfile.TemporaryDirectory() as profile:
        context = p.chromium.launch_persistent_context(
            profile,
            executable_path=shutil.which("chromium") or "/usr/bin/chromium",
            args=["--headless", "--no-sandbox", "--disable-gpu"],
            headless=True,
        )
        page = context.new_page()
        for route in routes:
            times = []
            for _ in range(repeat):
                page.goto("about:blank")
                started = time.perf_counter()
                page.goto((groups_at if route.startswith("#/groups/") else console) + route)
                page.wait_for_selector("body[data-loaded=true]", timeout=60_000)
                times.append(time.perf_counter() - started)
            rows.append((route, min(times), statistics.median(times)))
        context.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=10_000)
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--nodes", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    settings = {
        "console.listen": "127.0.0.1:0",
        # Making thousands of leaders keeps a broker's loop busy for minutes while
        # the topic is created; that must not fence it (this measures the console).
        "broker.session.timeout.ms": "1800000",
        "auto.create.topics.enable": "false",
    }
    with (
        tempfile.TemporaryDirectory(prefix="samsa-console-scale-") as tmp,
        LocalCluster(Path(tmp), controllers=args.nodes, settings=settings, fast=False) as cluster,
    ):
        cluster.start(timeout=120)
        consoles = []
        for node_id in sorted(cluster.nodes):
            found = re.search(
                r"console listening on (http://\S+/)", cluster.nodes[node_id].log_text()
            )
            assert found is not None
            consoles.append(found.group(1))
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
        started = time.monotonic()
        create(admin, args.partitions)
        fill(cluster.bootstrap, args.partitions, args.records)
        print(
            f"{args.partitions:,} partitions on {args.nodes} nodes, {args.records:,} records, "
            f"group {GROUP} committed: setup took {time.monotonic() - started:.0f} s\n"
        )
        console, groups_at = consoles[0], group_console(consoles)
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores\n")
        print("| API call | best ms | median ms | median in broker ms | bytes |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for path, best, median, inside, size in time_pages(console, groups_at, args.repeat):
            print(
                f"| `/{path}` | {best * 1000:.1f} | {median * 1000:.1f} | {inside * 1000:.1f} "
                f"| {size:,} |"
            )
        print("\n| page (Chromium, until loaded) | best ms | median ms |")
        print("| --- | ---: | ---: |")
        slowest = 0.0
        for route, best, median in time_browser(console, groups_at, args.repeat):
            slowest = max(slowest, median)
            print(f"| `{route}` | {best * 1000:.0f} | {median * 1000:.0f} |")
        verdict = "PASS" if slowest < 1.0 else "FAIL"
        print(f"\nslowest page median {slowest * 1000:.0f} ms: {verdict} (target < 1000 ms)")


if __name__ == "__main__":
    main()
