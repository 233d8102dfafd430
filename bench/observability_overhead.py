"""Produce throughput with metrics and console on vs off, side by side in one run.

Each run starts a fresh Samsa broker (metrics + console on, or both off), and
the confluent-kafka load client of ``broker_vs_peer.py`` produces the same
records to it in its own process; the variants alternate so both see the same
machine.  While metrics are on, a scraper reads ``/metrics`` and what the
console's overview page fetches (header, topics, groups, rates) once a second,
as Prometheus and an open console page would.
Reported: medians of records/s and of broker CPU seconds per GB, and the
on/off ratios (target: at most 3% slower).

    .venv/bin/python bench/observability_overhead.py --runs 5
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import urllib.request
from pathlib import Path

from samsa.testing import BrokerProcess

HERE = Path(__file__).resolve().parent
ON_ARGS = ["--metrics-listen", "127.0.0.1:0", "--console-listen", "127.0.0.1:0"]
# What an open console overview page fetches every second.
CONSOLE_OVERVIEW = ("api/brokers", "api/topics?offset=0&limit=100&q=", "api/groups", "api/rates")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100  # utime + stime, in clock ticks


def scrape_every_second(urls: list[str], stop: threading.Event) -> None:
    while not stop.wait(1.0):
        for url in urls:
            with urllib.request.urlopen(url, timeout=5) as response:
                response.read()


def one_run(metrics_on: bool, records: int, run: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="samsa-obs-bench-") as tmp:
        broker = BrokerProcess(Path(tmp) / "data", args=ON_ARGS if metrics_on else [])
        bootstrap = broker.start()
        stop = threading.Event()
        scraper = None
        try:
            if metrics_on:
                text = broker.log_text()
                console = re.search(r"console listening on (http://\S+/)", text).group(1)  # type: ignore[union-attr]
                urls = [
                    re.search(r"metrics listening on (http://\S+/)", text).group(1) + "metrics",  # type: ignore[union-attr]
                    *(console + path for path in CONSOLE_OVERVIEW),
                ]
                scraper = threading.Thread(target=scrape_every_second, args=(urls, stop))
                scraper.start()
            assert broker.proc is not None
            cpu0 = cpu_seconds(broker.proc.pid)
            out = subprocess.run(
                [
                    sys.executable, str(HERE / "load_client.py"), "--bootstrap", bootstrap,
                    "--topic", f"obs-{run}", "produce", "--records", str(records),
                ],
                capture_output=True, text=True, check=True, timeout=600,
            )  # fmt: skip
            cpu = cpu_seconds(broker.proc.pid) - cpu0
        finally:
            stop.set()
            if scraper is not None:
                scraper.join()
            broker.stop()
    result: dict[str, float] = json.loads(out.stdout.split("RESULT ", 1)[1])
    result["cpu_s_per_gb"] = cpu / (records * 100 / 1e9)
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--records", type=int, default=1_000_000)
    args = ap.parse_args()
    results: dict[bool, list[dict[str, float]]] = {False: [], True: []}
    for run in range(args.runs):
        for metrics_on in (False, True) if run % 2 == 0 else (True, False):
            r = one_run(metrics_on, args.records, run)
            results[metrics_on].append(r)
            label = "on " if metrics_on else "off"
            print(f"run {run + 1} metrics {label}: {r['records_per_s']:,.0f} records/s, "
                  f"broker {r['cpu_s_per_gb']:.2f} CPU s/GB", flush=True)  # fmt: skip
    med = {k: {m: statistics.median(r[m] for r in v) for m in ("records_per_s", "cpu_s_per_gb")}
           for k, v in results.items()}  # fmt: skip
    print(f"\n{args.runs} runs each, alternating; medians. {args.records:,} records of 100 B, "
          "confluent-kafka producer (linger.ms=5, 1 MB batches, acks=1).\n")  # fmt: skip
    print("| measure | off | metrics + console on | on/off |")
    print("|---|---|---|---|")
    for name, key in (("records/s", "records_per_s"), ("broker CPU s/GB", "cpu_s_per_gb")):
        off, on = med[False][key], med[True][key]
        print(f"| {name} | {off:,.2f} | {on:,.2f} | {on / off:.3f} |")
    slowdown = 1 - med[True]["records_per_s"] / med[False]["records_per_s"]
    verdict = "within" if slowdown <= 0.03 else "OVER"
    print(f"\nthroughput change with metrics on: {-slowdown:+.1%} ({verdict} the 3% budget)")


if __name__ == "__main__":
    main()
