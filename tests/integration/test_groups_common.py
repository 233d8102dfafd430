"""Shared harness for the group tests of every client (no tests of its own).

Each group member runs in its **own process** (``python -c MEMBER_SCRIPT``) so
a test can end it the three ways real consumers end: ``close`` (a clean close,
which sends LeaveGroup for dynamic members), SIGKILL (no goodbye at all: the
coordinator must notice through the session timeout), and SIGKILL followed by
a restart with the same ``group.instance.id`` (static membership).  A member
reports its rebalance callbacks as JSON lines on stdout; the test waits on
those reports with short polling and a deadline, never with sleeps.

The same scenarios run for confluent-kafka, kafka-python and aiokafka; only
the member script's client block differs.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

PARTITIONS = 6

MEMBER_SCRIPT = r"""
import json, sys, threading

cfg = json.loads(sys.argv[1])
stop = threading.Event()


def emit(ev, parts=()):
    sys.stdout.write(json.dumps({"ev": ev, "parts": sorted(parts)}) + "\n")
    sys.stdout.flush()


def watch_stdin():
    # "close" (or the parent going away) ends the member cleanly.
    for line in sys.stdin:
        if line.strip() == "close":
            break
    stop.set()


threading.Thread(target=watch_stdin, daemon=True).start()
if cfg.get("log_level"):
    import logging

    logging.basicConfig(level=cfg["log_level"], format="%(asctime)s %(name)s %(message)s")
kind, session_ms, instance_id = cfg["kind"], cfg["session_ms"], cfg.get("instance_id")

if kind == "confluent":
    from confluent_kafka import Consumer

    conf = {
        "bootstrap.servers": cfg["bootstrap"], "group.id": cfg["group"],
        "client.id": cfg["name"], "session.timeout.ms": session_ms,
        "heartbeat.interval.ms": 200, "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
    }
    if instance_id:
        conf["group.instance.id"] = instance_id
    c = Consumer(conf)
    c.subscribe(
        [cfg["topic"]],
        on_assign=lambda _c, ps: emit("assigned", [p.partition for p in ps]),
        on_revoke=lambda _c, ps: emit("revoked", [p.partition for p in ps]),
    )
    emit("started")
    while not stop.is_set():
        c.poll(0.05)
    c.close()
elif kind == "kafka-python":
    from kafka import ConsumerRebalanceListener, KafkaConsumer

    class Listener(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked):
            emit("revoked", [p.partition for p in revoked])

        def on_partitions_assigned(self, assigned):
            emit("assigned", [p.partition for p in assigned])

    c = KafkaConsumer(
        bootstrap_servers=cfg["bootstrap"], group_id=cfg["group"], client_id=cfg["name"],
        session_timeout_ms=session_ms, heartbeat_interval_ms=200,
        enable_auto_commit=False, auto_offset_reset="earliest",
        group_instance_id=instance_id,
    )
    c.subscribe([cfg["topic"]], listener=Listener())
    # Have the topic's metadata before the first join: a kafka-python 3.0.12
    # leader that assigned without it rejoins when it arrives, and that rejoin
    # can leave the client spinning in its join loop without heartbeats.
    c.partitions_for_topic(cfg["topic"])
    emit("started")
    while not stop.is_set():
        c.poll(timeout_ms=50)
    c.close()
elif kind == "aiokafka":
    import asyncio

    from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener

    class AListener(ConsumerRebalanceListener):
        async def on_partitions_revoked(self, revoked):
            emit("revoked", [p.partition for p in revoked])

        async def on_partitions_assigned(self, assigned):
            emit("assigned", [p.partition for p in assigned])

    async def run():
        c = AIOKafkaConsumer(
            bootstrap_servers=cfg["bootstrap"], group_id=cfg["group"], client_id=cfg["name"],
            session_timeout_ms=session_ms, heartbeat_interval_ms=200,
            enable_auto_commit=False, auto_offset_reset="earliest",
            group_instance_id=instance_id,
        )
        await c.start()
        c.subscribe([cfg["topic"]], listener=AListener())
        emit("started")
        while not stop.is_set():
            await c.getmany(timeout_ms=50)
        await c.stop()

    asyncio.run(run())
else:
    raise SystemExit(f"unknown client kind {kind}")
emit("closed")
"""


@dataclass
class Event:
    at: float  # time.monotonic() when the parent read the line
    ev: str
    parts: frozenset[int]


@dataclass
class Member:
    """One group consumer in a child process; ``events`` are its callbacks."""

    kind: str
    bootstrap: str
    topic: str
    group: str
    name: str
    session_ms: int
    instance_id: str | None = None
    events: list[Event] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)
    proc: subprocess.Popen[str] | None = None

    def start(self) -> Member:
        cfg = {
            "kind": self.kind, "bootstrap": self.bootstrap, "topic": self.topic,
            "group": self.group, "name": self.name, "session_ms": self.session_ms,
            "instance_id": self.instance_id,
            "log_level": os.environ.get("SAMSA_TEST_MEMBER_LOG"),
        }  # fmt: skip
        self.proc = subprocess.Popen(
            [sys.executable, "-c", MEMBER_SCRIPT, json.dumps(cfg)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        threading.Thread(target=self._pump_stdout, daemon=True).start()
        threading.Thread(target=self._pump_stderr, daemon=True).start()
        return self

    def _pump_stdout(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                data = json.loads(line)
            except ValueError:
                self.stderr.append(line.rstrip())
                continue
            self.events.append(Event(time.monotonic(), data["ev"], frozenset(data["parts"])))

    def _pump_stderr(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line.rstrip())

    @property
    def assignment(self) -> frozenset[int]:
        """Partitions held now, as the member's own callbacks reported them."""
        held: frozenset[int] = frozenset()
        for e in list(self.events):
            if e.ev == "assigned":
                held = e.parts
            elif e.ev in ("revoked", "closed"):
                held = frozenset()
        return held

    def events_after(self, t: float, *kinds: str) -> list[Event]:
        return [e for e in list(self.events) if e.at > t and e.ev in kinds and e.parts]

    def close(self, timeout: float = 20.0) -> None:
        """Clean close: the client leaves the group (dynamic members send LeaveGroup)."""
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write("close\n")
        self.proc.stdin.flush()
        self.proc.wait(timeout)

    def kill(self) -> None:
        """SIGKILL: the member vanishes without LeaveGroup or a last heartbeat."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def describe(self) -> str:
        evs = [(round(e.at, 2), e.ev, sorted(e.parts)) for e in self.events]
        if os.environ.get("SAMSA_TEST_MEMBER_LOG") and self.proc is not None:
            # Full client logs for debugging, next to the short summary.
            path = f"/tmp/samsa-member-{self.group}-{self.name}-{self.proc.pid}.log"
            with open(path, "w") as f:
                f.write("\n".join(self.stderr))
        return f"{self.name}: events={evs} stderr_tail={self.stderr[-60:]}"


def wait_until(
    check: Callable[[], bool],
    timeout: float,
    what: str,
    members: list[Member] = (),  # type: ignore[assignment]
) -> float:
    """Poll ``check`` every 20 ms until it holds; returns the monotonic time it held."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return time.monotonic()
        time.sleep(0.02)
    detail = "\n".join(m.describe() for m in members)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}\n{detail}")


def split_evenly(members: list[Member], partitions: int = PARTITIONS) -> bool:
    """Every partition owned by exactly one member and the load balanced."""
    held = [m.assignment for m in members]
    if any(not h for h in held):
        return False
    union: set[int] = set().union(*held)
    sizes = {len(h) for h in held}
    return (
        union == set(range(partitions))
        and sum(len(h) for h in held) == partitions
        and max(sizes) - min(sizes) <= 1
    )


def create_topic(bootstrap: str, topic: str, partitions: int = PARTITIONS) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(15)


def produce(bootstrap: str, topic: str, per_partition: int, partitions: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for p in range(partitions):
        for i in range(per_partition):
            producer.produce(topic, value=f"{p}-{i}".encode(), partition=p)
    assert producer.flush(15) == 0


class Group:
    """Starts members of one group and stops whatever is left at the end."""

    def __init__(self, kind: str, bootstrap: str, topic: str, group: str, session_ms: int) -> None:
        self.kind, self.bootstrap, self.topic, self.group = kind, bootstrap, topic, group
        self.session_ms = session_ms
        self.members: list[Member] = []

    def add(self, name: str, instance_id: str | None = None) -> Member:
        member = Member(
            self.kind, self.bootstrap, self.topic, self.group, name, self.session_ms, instance_id
        )
        self.members.append(member)
        return member.start()

    def __enter__(self) -> Group:
        return self

    def __exit__(self, *exc: object) -> None:
        for m in self.members:
            m.kill()


# -- scenarios shared by every client ---------------------------------------------------


def scenario_split_then_leave(kind: str, bootstrap: str, topic: str) -> float:
    """Three members split 6 partitions 2/2/2; one closes (LeaveGroup) and the two
    survivors own everything again well inside the session timeout.  Returns the
    takeover time in seconds."""
    session_ms = 6000
    create_topic(bootstrap, topic)
    with Group(kind, bootstrap, topic, f"{topic}-g", session_ms) as g:
        a, b, c = (g.add(n) for n in ("a", "b", "c"))
        wait_until(lambda: split_evenly([a, b, c]), 30, "a 2/2/2 split", g.members)
        assert [len(m.assignment) for m in (a, b, c)] == [2, 2, 2]

        t0 = time.monotonic()
        c.close()
        done = wait_until(lambda: split_evenly([a, b]), 15, "takeover after leave", g.members)
        took = done - t0
        assert sorted(len(m.assignment) for m in (a, b)) == [3, 3]
        # LeaveGroup, not the session timeout, triggered the rebalance.
        assert took < session_ms / 1000 / 2, f"takeover took {took:.2f}s"
        return took


def scenario_killed_member_expires(kind: str, bootstrap: str, topic: str) -> float:
    """A SIGKILLed member sends nothing; its partitions move once its session
    expires (not before).  Returns seconds from kill to takeover."""
    session_ms = 1500
    create_topic(bootstrap, topic)
    with Group(kind, bootstrap, topic, f"{topic}-g", session_ms) as g:
        a, b, c = (g.add(n) for n in ("a", "b", "c"))
        wait_until(lambda: split_evenly([a, b, c]), 30, "a 2/2/2 split", g.members)

        t0 = time.monotonic()
        c.kill()
        done = wait_until(lambda: split_evenly([a, b]), 20, "takeover after kill", g.members)
        took = done - t0
        # Nobody could have known before the session ran out (some slack for the
        # coordinator's timer granularity); and it did not take much longer.
        assert took >= session_ms / 1000 * 0.8, f"moved after {took:.2f}s: before expiry?"
        assert took < session_ms / 1000 + 8
        return took


def scenario_static_restart(kind: str, bootstrap: str, topic: str) -> None:
    """A static member (group.instance.id) killed and restarted within the session
    timeout gets its old partitions back and nobody else rebalances."""
    session_ms = 4000
    create_topic(bootstrap, topic)
    with Group(kind, bootstrap, topic, f"{topic}-g", session_ms) as g:
        # ``a`` joins first and alone, so it is the leader; we restart ``c``.
        a = g.add("a", "static-a")
        wait_until(lambda: len(a.assignment) == PARTITIONS, 30, "a alone", g.members)
        b, c = g.add("b", "static-b"), g.add("c", "static-c")
        wait_until(lambda: split_evenly([a, b, c]), 30, "a 2/2/2 split", g.members)
        before = {m.name: m.assignment for m in (a, b, c)}

        t0 = time.monotonic()
        c.kill()
        c2 = g.add("c2", "static-c")
        wait_until(lambda: bool(c2.assignment), session_ms / 1000, "restarted c", g.members)
        assert c2.assignment == before["c"]
        restarted = time.monotonic()
        assert restarted - t0 < session_ms / 1000, "restart was not within the session"

        # Watch past the old session's expiry: still no rebalance anywhere.
        def disturbed() -> bool:
            return any(m.events_after(t0, "revoked", "assigned") for m in (a, b)) or bool(
                c2.events_after(restarted, "revoked", "assigned")
            )

        quiet_until = t0 + session_ms / 1000 + 1.0
        while time.monotonic() < quiet_until:
            assert not disturbed(), "a rebalance happened:\n" + "\n".join(
                m.describe() for m in g.members
            )
            time.sleep(0.05)
        assert {m.name: m.assignment for m in (a, b)} == {n: before[n] for n in ("a", "b")}
