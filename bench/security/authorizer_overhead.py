"""Produce throughput with the StandardAuthorizer holding 10,000 ACLs vs no authorizer.

Each run starts a fresh Samsa broker with the same two listeners: PLAINTEXT
for the load (its clients are ``User:ANONYMOUS``) and SASL_PLAINTEXT/PLAIN for
``admin``, who sets up the ACLs.  With the authorizer on, admin first creates
10,000 ACLs (literal and prefixed, on topics, groups and the cluster, for many
principals and hosts), among them the few that let ANONYMOUS create, describe
and write the bench topics; ANONYMOUS is not a super user, so every produce
request is really decided by the ACLs.  The confluent-kafka load client of
``broker_vs_peer.py`` then produces the same records in its own process; the
variants alternate so both see the same machine.

Both variants start the load the same time after start-up (``--settle``), so
the ACL set-up is not a warm-up only one variant gets.  Reported: medians of
records/s and of broker CPU seconds per GB, and the on/off ratio (target: at
least 0.95 of no authorizer).

    .venv/bin/python -m bench.security.authorizer_overhead --runs 5
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from samsa.net.channel import ChannelSecurity
from samsa.net.channels import ChannelPool
from samsa.testing import BrokerProcess

AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
ADMIN_PASSWORD = "admin-secret"
CREATE_ACLS = 30
TOPIC, GROUP, CLUSTER = 2, 3, 4
LITERAL, PREFIXED = 3, 4
READ, WRITE, CREATE, DESCRIBE = 3, 4, 5, 8
ALLOW, DENY = 3, 2


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100  # utime + stime, in clock ticks


def acl(rtype: int, name: str, pattern: int, principal: str, host: str, op: int, perm: int) -> dict:
    return {
        "resource_type": rtype,
        "resource_name": name,
        "resource_pattern_type": pattern,
        "principal": principal,
        "host": host,
        "operation": op,
        "permission_type": perm,
    }


def bench_acls(count: int) -> list[dict[str, Any]]:
    """``count`` ACLs: what ANONYMOUS needs, then a realistic crowd of others."""
    rng = random.Random(42)
    anonymous = "User:ANONYMOUS"
    acls = [
        acl(TOPIC, "authz-", PREFIXED, anonymous, "*", WRITE, ALLOW),
        acl(TOPIC, "authz-", PREFIXED, anonymous, "*", CREATE, ALLOW),
        acl(TOPIC, "authz-", PREFIXED, "User:mallory", "*", WRITE, DENY),
    ]
    while len(acls) < count:
        user = f"User:team{rng.randrange(500)}"
        host = "*" if rng.random() < 0.8 else f"10.0.{rng.randrange(256)}.{rng.randrange(256)}"
        kind = rng.random()
        if kind < 0.6:
            name, pattern, rtype = f"app{rng.randrange(5000)}-events", LITERAL, TOPIC
        elif kind < 0.8:
            name, pattern, rtype = f"svc{rng.randrange(300)}-", PREFIXED, TOPIC
        elif kind < 0.97:
            name, pattern, rtype = f"group{rng.randrange(3000)}", LITERAL, GROUP
        else:
            name, pattern, rtype = "kafka-cluster", LITERAL, CLUSTER
        op = rng.choice((READ, WRITE, DESCRIBE)) if rtype != CLUSTER else DESCRIBE
        acls.append(acl(rtype, name, pattern, user, host, op, ALLOW))
    return acls


async def create_acls(port: int, acls: list[dict[str, Any]]) -> None:
    security = ChannelSecurity(None, "PLAIN", "admin", ADMIN_PASSWORD)
    pool = ChannelPool(client_id="authz-bench", security=security)
    try:
        channel = pool.to_address("127.0.0.1", port)
        for start in range(0, len(acls), 1000):
            chunk = acls[start : start + 1000]
            answer = await channel.request(CREATE_ACLS, 3, {"creations": chunk}, timeout_ms=60000)
            failed = [r for r in answer["results"] if r["error_code"]]
            if failed:
                raise RuntimeError(f"CreateAcls failed: {failed[:3]}")
    finally:
        await pool.close()


def one_run(authorizer_on: bool, args: argparse.Namespace, run: int) -> dict[str, float]:
    admin_port = free_port()
    jaas = (
        "org.apache.kafka.common.security.plain.PlainLoginModule required "
        f'user_admin="{ADMIN_PASSWORD}";'
    )
    settings = {
        "listeners": f"PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:{admin_port}",
        "inter.broker.listener.name": "PLAINTEXT",
        "sasl.enabled.mechanisms": "PLAIN",
        "sasl.jaas.config": jaas,
    }
    if authorizer_on:
        settings |= {"authorizer.class.name": AUTHORIZER, "super.users": "User:admin"}
    with tempfile.TemporaryDirectory(prefix="samsa-authz-bench-") as tmp:
        broker = BrokerProcess(Path(tmp) / "data", settings, port=None)
        bootstrap = broker.start(timeout=120)
        up = time.perf_counter()
        try:
            setup = 0.0
            if authorizer_on:
                asyncio.run(create_acls(admin_port, bench_acls(args.acls)))
                setup = time.perf_counter() - up
            # Both variants start the load equally long after start-up, so the
            # ACL set-up does not double as a warm-up only one of them gets.
            time.sleep(max(0.0, args.settle - (time.perf_counter() - up)))
            assert broker.proc is not None
            cpu0 = cpu_seconds(broker.proc.pid)
            out = subprocess.run(
                [
                    sys.executable, "-m", "bench.common.load_client", "--bootstrap", bootstrap,
                    "--topic", f"authz-{run}", "produce", "--records", str(args.records),
                    "--partitions", str(args.partitions),
                ],
                capture_output=True, text=True, check=True, timeout=900,
            )  # fmt: skip
            cpu = cpu_seconds(broker.proc.pid) - cpu0
        finally:
            broker.stop()
    result: dict[str, float] = json.loads(out.stdout.split("RESULT ", 1)[1])
    result["cpu_s_per_gb"] = cpu / (args.records * 100 / 1e9)
    result["acl_setup_s"] = setup
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--partitions", type=int, default=8)
    ap.add_argument("--acls", type=int, default=10_000)
    ap.add_argument(
        "--settle", type=float, default=20.0, help="seconds from start-up to the load (both)"
    )
    args = ap.parse_args()
    results: dict[bool, list[dict[str, float]]] = {False: [], True: []}
    for run in range(args.runs):
        for on in (False, True) if run % 2 == 0 else (True, False):
            r = one_run(on, args, run)
            results[on].append(r)
            label = f"{args.acls:,} ACLs" if on else "no authorizer"
            extra = f" (ACLs created in {r['acl_setup_s']:.1f} s)" if on else ""
            print(f"run {run + 1} {label}: {r['records_per_s']:,.0f} records/s, "
                  f"broker {r['cpu_s_per_gb']:.2f} CPU s/GB{extra}", flush=True)  # fmt: skip
    med = {k: {m: statistics.median(r[m] for r in v) for m in ("records_per_s", "cpu_s_per_gb")}
           for k, v in results.items()}  # fmt: skip
    print(f"\n{args.runs} runs each, alternating; medians. {args.records:,} records of 100 B "
          f"over {args.partitions} partitions, confluent-kafka producer (linger.ms=5, 1 MB "
          "batches, acks=1) as User:ANONYMOUS on PLAINTEXT.\n")  # fmt: skip
    print(f"| measure | no authorizer | {args.acls:,} ACLs | on/off |")
    print("|---|---|---|---|")
    for name, key in (("records/s", "records_per_s"), ("broker CPU s/GB", "cpu_s_per_gb")):
        off, on = med[False][key], med[True][key]
        print(f"| {name} | {off:,.2f} | {on:,.2f} | {on / off:.3f} |")
    ratio = med[True]["records_per_s"] / med[False]["records_per_s"]
    verdict = "meets" if ratio >= 0.95 else "MISSES"
    print(f"\nthroughput with the authorizer: {ratio:.3f} of none ({verdict} the 0.95 target)")


if __name__ == "__main__":
    main()
