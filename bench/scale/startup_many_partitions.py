"""Start-up of one broker hosting many partitions: after a clean stop and after SIGKILL.

Creates one topic of ``--partitions`` partitions (RF 1) on a single node and
writes one small record to each, so every log has a segment, an index entry
and a producer; then restarts the broker ``--rounds`` times each way and
prints, per restart, seconds from process start to:

- ``ready``: the broker's readiness line (what ``samsa.testing`` waits for);
- ``metadata``: the first Metadata answer listing every partition with a leader;
- ``produce``: the first acknowledged record (acks=all) on the last partition;

and, once it serves, its RSS and open files.  Creating 10,000 partitions takes
minutes on a loaded machine: ``--keep DIR`` keeps the data dir after the run
and ``--reuse DIR`` starts from a copy of one kept before (the topic is then
not created again, and every run starts from the same state: each restart
adds leadership records to the metadata log).  ``--profile OUT`` runs the restarts under py-spy (speedscope files
``OUT-clean-N.json`` / ``OUT-kill-N.json``, covering start to ready).

    .venv/bin/python -m bench.scale.startup_many_partitions --partitions 10000 --keep /tmp/p10k
    .venv/bin/python -m bench.scale.startup_many_partitions --reuse /tmp/p10k --rounds 3

The machine is shared: quote the load beside the figures.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from bench.common.cluster import cache_broker_bytecode, machine_line, rss_mb, wait_until
from samsa.testing import BrokerProcess

TOPIC = "many"


@dataclass(slots=True)
class Restart:
    ready_s: float
    metadata_s: float
    produce_s: float
    rss_mb: float
    open_files: int
    cpu_s: float


def cpu_seconds(pid: int) -> float:
    """User plus system CPU the process used so far: on a machine shared with
    other work, a steadier figure than the wall time."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def open_files(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def create_and_fill(broker: BrokerProcess, partitions: int) -> None:
    """The topic, and one record in every partition (acks=all, all delivered)."""
    admin = AdminClient({"bootstrap.servers": broker.bootstrap, "log_level": 0})
    future = admin.create_topics(
        [NewTopic(TOPIC, partitions, 1)], request_timeout=600, operation_timeout=600
    )[TOPIC]
    try:
        future.result(900)
    except KafkaException as exc:
        # A client timeout while the broker still creates them is not a failure.
        if exc.args[0].code() != KafkaError._TIMED_OUT:
            raise
    wait_until(lambda: led_partitions(admin) == partitions, 900, "every partition led")
    producer = Producer(
        {"bootstrap.servers": broker.bootstrap, "acks": "all", "linger.ms": 50, "log_level": 0}
    )
    failed: list[str] = []
    for partition in range(partitions):
        while True:
            try:
                producer.produce(
                    TOPIC,
                    b"x" * 100,
                    partition=partition,
                    on_delivery=lambda err, _m: err and failed.append(str(err)),
                )
                break
            except BufferError:
                producer.poll(0.1)
    if producer.flush(600) or failed:
        raise SystemExit(f"filling the partitions failed: {failed[:3]}")


def led_partitions(admin: AdminClient) -> int:
    try:
        topic = admin.list_topics(TOPIC, timeout=30).topics[TOPIC]
    except KafkaException:
        return 0
    if topic.error is not None:
        return 0
    return sum(1 for p in topic.partitions.values() if p.leader >= 0)


def restart(broker: BrokerProcess, partitions: int, *, kill: bool, profile: str | None) -> Restart:
    """Stop (SIGTERM, or SIGKILL), start again and time the start to serving."""
    if kill:
        broker.kill()
    else:
        broker.stop(600)
    if profile:
        broker.command_prefix = [
            shutil.which("py-spy", path=Path(sys.executable).parent) or "py-spy",
            *("record", "--format", "speedscope", "--rate", "50", "-o", profile, "--"),
        ]
    started = time.monotonic()
    ready_event = broker.launch()
    broker.wait_ready(ready_event, timeout=900)
    ready_s = time.monotonic() - started
    admin = AdminClient({"bootstrap.servers": broker.bootstrap, "log_level": 0})
    wait_until(lambda: led_partitions(admin) == partitions, 900, "every partition led")
    metadata_s = time.monotonic() - started
    producer = Producer(
        {"bootstrap.servers": broker.bootstrap, "acks": "all", "linger.ms": 0, "log_level": 0}
    )
    delivered = threading.Event()
    producer.produce(
        TOPIC, b"y", partition=partitions - 1, on_delivery=lambda e, m: delivered.set()
    )
    while not delivered.is_set():
        producer.poll(0.01)
        if time.monotonic() - started > 900:
            raise SystemExit("no produce answer within 900 s")
    produce_s = time.monotonic() - started
    pid = broker_pid(broker)
    result = Restart(ready_s, metadata_s, produce_s, rss_mb(pid), open_files(pid), cpu_seconds(pid))
    if profile:
        # py-spy writes its file when the broker it started exits: stop the broker
        # itself, then start it again without py-spy for the next round.
        os.kill(pid, signal.SIGTERM)
        assert broker.proc is not None
        broker.proc.wait(600)
        broker.command_prefix = []
        broker.start(timeout=900)
    return result


def broker_pid(broker: BrokerProcess) -> int:
    """The broker's own pid (under py-spy, the profiler's only child)."""
    assert broker.proc is not None
    if not broker.command_prefix:
        return broker.proc.pid
    children = Path(f"/proc/{broker.proc.pid}/task/{broker.proc.pid}/children").read_text()
    return int(children.split()[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=10_000)
    parser.add_argument("--nodes", type=int, default=1, choices=[1], help="single node only")
    parser.add_argument("--rounds", type=int, default=1, help="restarts of each kind")
    parser.add_argument("--keep", metavar="DIR", help="keep the data dir here after the run")
    parser.add_argument("--reuse", metavar="DIR", help="start from a data dir kept before")
    parser.add_argument("--profile", metavar="OUT", help="profile each restart with py-spy")
    parser.add_argument("--only", choices=["clean", "kill"], help="one kind of restart only")
    args = parser.parse_args()
    print(machine_line(), flush=True)
    print(cache_broker_bytecode(), flush=True)
    scratch = None
    if args.reuse:
        scratch = tempfile.TemporaryDirectory(prefix="samsa-startup-")
        data_dir = Path(scratch.name) / "data"
        shutil.copytree(args.reuse, data_dir, symlinks=True)
    elif args.keep:
        data_dir = Path(args.keep)
        if data_dir.exists():
            raise SystemExit(f"{data_dir} exists: pass it as --reuse, or remove it")
    else:
        scratch = tempfile.TemporaryDirectory(prefix="samsa-startup-")
        data_dir = Path(scratch.name) / "data"
    broker = BrokerProcess(data_dir)
    try:
        started = time.monotonic()
        broker.start(timeout=900)
        if not args.reuse:
            create_and_fill(broker, args.partitions)
            print(
                f"created and filled {args.partitions} partitions in "
                f"{time.monotonic() - started:.0f} s",
                flush=True,
            )
        else:
            admin = AdminClient({"bootstrap.servers": broker.bootstrap, "log_level": 0})
            wait_until(lambda: led_partitions(admin) > 0, 900, "the kept topic")
            args.partitions = led_partitions(admin)
        pid = broker_pid(broker)
        print(
            f"{args.partitions} partitions (RF 1, one node): RSS {rss_mb(pid):.0f} MB, "
            f"{open_files(pid)} open files",
            flush=True,
        )
        kinds = [k for k in ("clean", "kill") if args.only in (None, k)]
        results: dict[str, list[Restart]] = {k: [] for k in kinds}
        for round_ in range(args.rounds):
            for kind in kinds:
                profile = f"{args.profile}-{kind}-{round_}.json" if args.profile else None
                r = restart(broker, args.partitions, kill=kind == "kill", profile=profile)
                results[kind].append(r)
                print(
                    f"after {'SIGKILL' if kind == 'kill' else 'clean stop'}: ready {r.ready_s:.2f} s"
                    f", metadata {r.metadata_s:.2f} s, produce {r.produce_s:.2f} s "
                    f"(broker CPU {r.cpu_s:.2f} s); "
                    f"RSS {r.rss_mb:.0f} MB, {r.open_files} open files",
                    flush=True,
                )
        for kind, rs in results.items():
            print(
                f"median after {'SIGKILL' if kind == 'kill' else 'clean stop'} "
                f"({len(rs)} rounds): produce {statistics.median(r.produce_s for r in rs):.2f} s, "
                f"broker CPU {statistics.median(r.cpu_s for r in rs):.2f} s, "
                f"RSS {statistics.median(r.rss_mb for r in rs):.0f} MB"
            )
    finally:
        broker.stop(600)
        broker.kill()
        if scratch is not None:
            scratch.cleanup()


if __name__ == "__main__":
    main()
