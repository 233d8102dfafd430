"""What tiering costs a broker: produce throughput with tiering on vs off, a read of
tiered history vs the same read of local data, and the broker's CPU per GB copied.

One Samsa broker with tiering enabled (to a real S3Proxy, as
``spark_tiered_reads.py``) takes, in each run, ``--gb`` of ``--size``-byte
records over ``--partitions`` partitions into two fresh topics in turn (the
order alternates between runs): one with ``remote.storage.enable=true`` and
local retention of 1 byte (closed segments are copied while the producer
still sends, then deleted locally), one without.  The producer is
confluent-kafka in a fresh process (acks=1).  After the tiered topic's
produce the run waits until only each partition's active segment is local;
then both topics are read from offset 0 by a confluent-kafka consumer (the
tiered one through the broker's remote fetches).  Printed per run and as
medians: produce records/s (on/off, aim >= 0.9), read records/s (tiered/local),
and the CPU seconds of the broker and of S3Proxy per GB during each phase; the
broker's CPU per GB copied is (produce + copy of the tiered topic) minus
(produce of the local one).

    .venv/bin/python -m bench.tiered.tiering_costs --gb 0.5 --runs 3 [--store filesystem]

With ``--store filesystem`` there is no S3Proxy (its column shows 0): what the
broker alone spends, where S3Proxy's JVM on the same two cores would compete
with the producer and the broker.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gb", type=float, default=0.5, help="per topic, 10^9 bytes of values")
    ap.add_argument("--size", type=int, default=1000, help="bytes per record value")
    ap.add_argument("--partitions", type=int, default=2)
    ap.add_argument("--segment-mib", type=int, default=32)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument(
        "--store",
        choices=("s3", "filesystem"),
        default="s3",
        help="S3Proxy on this machine, or the filesystem store (the broker's own cost alone)",
    )
    args = ap.parse_args()

    from bench.common.cluster import machine_line
    from bench.common.fresh_process import in_fresh_process
    from bench.tiered._common import (
        consume,
        cpu_seconds,
        create_topic,
        pid_of,
        produce,
        tiered_broker,
        wait_tiered,
    )

    records = int(args.gb * 1e9 / args.size)
    gb = records * args.size / 1e9
    print(machine_line(), flush=True)
    print(f"command: python -m bench.tiered.tiering_costs {' '.join(sys.argv[1:])}")
    segment = str(args.segment_mib * 1024 * 1024)
    configs = {
        "on": {"remote.storage.enable": "true", "local.retention.bytes": "1",
               "segment.bytes": segment},
        "off": {"segment.bytes": segment},
    }  # fmt: skip
    results: dict[str, list[dict[str, float]]] = {"on": [], "off": []}
    with tiered_broker(store=args.store) as setup:
        bootstrap = setup.bootstrap
        pids = {"broker": pid_of(setup.broker)}
        if setup.s3 is not None:
            pids["S3Proxy"] = pid_of(setup.s3)

        def cpu() -> dict[str, float]:
            return {name: cpu_seconds(pid) for name, pid in pids.items()}

        def spent(before: dict[str, float]) -> dict[str, float]:
            now = cpu()
            return {name: now[name] - before[name] for name in pids}

        warm = "warm-up"
        create_topic(bootstrap, warm, args.partitions, {})
        in_fresh_process("warm-up", produce, bootstrap, warm, 20_000, args.size, args.partitions)
        consume(bootstrap, warm, 20_000, args.partitions)
        for n in range(args.runs):
            for tiering in ("on", "off") if n % 2 == 0 else ("off", "on"):
                topic = f"run{n}-tiering-{tiering}"
                create_topic(bootstrap, topic, args.partitions, configs[tiering])
                before = cpu()
                rate = in_fresh_process(
                    "produce", produce, bootstrap, topic, records, args.size, args.partitions
                )
                produce_cpu = spent(before)
                waited = 0.0
                if tiering == "on":
                    waited = wait_tiered(setup, topic, args.partitions)
                stored_cpu = spent(before)  # produce, and for "on" the copy until tiered
                before = cpu()
                read_rate = consume(bootstrap, topic, records, args.partitions)
                read_cpu = spent(before)
                row = {
                    "produce rec/s": rate,
                    "read rec/s": read_rate,
                    "tiered after s": waited,
                    **{f"produce {k} cpu/GB": v / gb for k, v in produce_cpu.items()},
                    **{f"stored {k} cpu/GB": v / gb for k, v in stored_cpu.items()},
                    **{f"read {k} cpu/GB": v / gb for k, v in read_cpu.items()},
                }
                results[tiering].append(row)
                print(f"run {n + 1} tiering {tiering}: produce {rate:,.0f} rec/s (broker "
                      f"{row['produce broker cpu/GB']:.1f} CPU s/GB; with the copy "
                      f"{row['stored broker cpu/GB']:.1f}, S3Proxy {row.get('stored S3Proxy cpu/GB', 0):.1f}"
                      f"; tiered {waited:.1f} s after the last ack), read {read_rate:,.0f} rec/s "
                      f"(broker {row['read broker cpu/GB']:.1f} CPU s/GB, S3Proxy "
                      f"{row.get('read S3Proxy cpu/GB', 0):.1f})", flush=True)  # fmt: skip

    med = {t: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for t, rs in results.items()}
    on, off = med["on"], med["off"]
    print(f"\n{args.runs} run(s) each, medians. {records:,} records x {args.size} B = {gb:.2f} GB "
          f"per topic in {args.partitions} partitions, {args.segment_mib} MiB segments; tiering "
          f"to {'S3Proxy on the same machine' if setup.s3 else 'the filesystem store'}.\n")  # fmt: skip
    print(
        "| tiering | produce rec/s | broker CPU s/GB produce | ... with copy | S3Proxy CPU s/GB "
        "| read rec/s from 0 | broker CPU s/GB read | S3Proxy CPU s/GB read |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for t in ("on", "off"):
        m = med[t]
        print(f"| {t} | {m['produce rec/s']:,.0f} | {m['produce broker cpu/GB']:.1f} | "
              f"{m['stored broker cpu/GB']:.1f} | {m.get('stored S3Proxy cpu/GB', 0):.1f} | "
              f"{m['read rec/s']:,.0f} | {m['read broker cpu/GB']:.1f} | "
              f"{m.get('read S3Proxy cpu/GB', 0):.1f} |")  # fmt: skip
    copy = on["stored broker cpu/GB"] - off["stored broker cpu/GB"]
    print(f"\nproduce on/off: {on['produce rec/s'] / off['produce rec/s']:.2f} (aim >= 0.9); "
          f"read tiered/local: {on['read rec/s'] / off['read rec/s']:.2f}; "
          f"broker CPU per GB copied: {copy:.1f} s; "
          f"load average now {' '.join(f'{x:.2f}' for x in os.getloadavg())}")  # fmt: skip


if __name__ == "__main__":
    main()
