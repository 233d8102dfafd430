"""``samsa broker``: run the embedded single-node broker in the foreground.

Precedence of settings: explicit flags, then ``--set key=value``, then
``--config server.properties``, then Kafka's defaults.  Once listening, the
broker prints ``samsa broker listening on HOST:PORT`` on stdout (the port it
really bound, also for ``--listen 127.0.0.1:0``); tools and the test fixture
wait for that line instead of sleeping.  SIGINT/SIGTERM stop it cleanly.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.metadata
import logging
import signal
import time
from pathlib import Path
from typing import Any

from samsa.cli import logging_setup
from samsa.config.broker_config import BrokerConfig
from samsa.config.synonyms import is_sensitive
from samsa.config.values import parse_properties
from samsa.errors import ConfigError
from samsa.security.scram_spec import parse_scram_specs
from samsa.server.connections.open_files import raise_open_files_limit
from samsa.server.observability.slow_callbacks import install as time_loop_callbacks

READY_PREFIX = "samsa broker listening on "
CONTROLLER_READY_PREFIX = "samsa controller listening on "


def add_parser(sub: Any) -> None:
    p = sub.add_parser("broker", help="run a broker (single node by default)")
    p.add_argument("--listen", metavar="HOST:PORT", help="address to bind (default 127.0.0.1:9092)")
    p.add_argument("--advertised-listener", metavar="HOST:PORT", help="address given to clients")
    p.add_argument("--data-dir", metavar="DIR", help="data directory (default ./samsa-data)")
    p.add_argument("--config", metavar="FILE", help="a server.properties file (Kafka's key names)")
    p.add_argument(
        "--set", metavar="KEY=VALUE", action="append", default=[], help="override one config key"
    )
    p.add_argument(
        "--add-scram",
        metavar="'SCRAM-SHA-256=[name=USER,password=PASSWORD]'",
        action="append",
        default=[],
        help="a SCRAM user to create if the metadata log has none by that name and "
        "mechanism, as kafka-storage format --add-scram (setting scram.bootstrap.credentials)",
    )
    p.add_argument(
        "--metrics-listen",
        metavar="HOST:PORT",
        help="serve Prometheus metrics at http://HOST:PORT/metrics (setting metrics.listen)",
    )
    p.add_argument(
        "--console-listen",
        metavar="HOST:PORT",
        help="serve the web console at http://HOST:PORT/ (setting console.listen; read-only "
        "unless console.allow.actions=true)",
    )
    p.add_argument(
        "--registry-listen",
        metavar="HOST:PORT",
        help="serve the schema registry (Confluent's REST API) at http://HOST:PORT/ "
        "(setting registry.listen)",
    )
    p.add_argument(
        "--log-level",
        choices=("DEBUG", "INFO", "WARNING", "ERROR"),
        type=str.upper,
        help="level of the broker's log (default: log4j.level, INFO)",
    )
    p.add_argument(
        "--log-format",
        choices=("text", "json"),
        default="text",
        help="text for people, json for log shippers (one object per line)",
    )
    p.set_defaults(run=run)


def resolve_config(args: argparse.Namespace) -> BrokerConfig:
    config = BrokerConfig()
    if args.config:
        path = Path(args.config)
        try:
            text = path.read_text()
        except OSError as exc:
            raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from None
        config.update(parse_properties(text))
    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(f"--set expects KEY=VALUE, got {item!r}")
        config.set(key.strip(), value.strip())
    if args.listen:
        config.set("listeners", args.listen)
    if args.advertised_listener:
        config.set("advertised.listeners", args.advertised_listener)
    if args.data_dir:
        config.set("log.dirs", args.data_dir)
    if getattr(args, "add_scram", None):
        given = str(config["scram.bootstrap.credentials"])
        config.set("scram.bootstrap.credentials", " ".join([given, *args.add_scram]).strip())
    # Checked here too, so a mistake stops the command before anything binds.
    parse_scram_specs(str(config["scram.bootstrap.credentials"]), "--add-scram")
    if getattr(args, "metrics_listen", None):
        config.set("metrics.listen", args.metrics_listen)
    if getattr(args, "console_listen", None):
        config.set("console.listen", args.console_listen)
    if getattr(args, "registry_listen", None):
        config.set("registry.listen", args.registry_listen)
    return config


def run(args: argparse.Namespace) -> int:
    config = resolve_config(args)
    if args.log_level:
        config.set("log4j.level", args.log_level)
    try:
        logging_setup.configure(str(config["log4j.level"]), args.log_format)
    except ValueError as exc:
        raise ConfigError(f"log4j.level: {exc}") from None
    log_startup(config)
    raise_open_files_limit()
    time_loop_callbacks()
    return asyncio.run(_serve(config))


SECRET_MARKERS = ("password", "secret", "jaas", "credential", "key.pem", "token", "keystore.key")


def _secret(name: str) -> bool:
    """Masked in the start-up line: Kafka's PASSWORD settings (and the remote
    store's credentials, ``is_sensitive``) and anything named like a secret."""
    return is_sensitive(name) or any(marker in name for marker in SECRET_MARKERS)


def log_startup(config: BrokerConfig) -> None:
    """One line an operator can check a start against: version, listeners, data
    dir and every setting that is not Kafka's default (secrets masked)."""
    overrides = ", ".join(
        f"{name}={'******' if _secret(name) else config.value_of(name)}"
        for name in sorted(config.explicit_keys())
    )
    logging.getLogger("samsa.server").info(
        "samsa %s starting: listeners=%s advertised.listeners=%s data dir=%s overrides: %s",
        samsa_version(),
        config["listeners"],
        config["advertised.listeners"] or "(the bound address)",
        config.data_dir,
        overrides or "none",
    )


def samsa_version() -> str:
    try:
        return importlib.metadata.version("samsa")
    except importlib.metadata.PackageNotFoundError:
        return "(not installed)"


def _dump_tasks() -> None:
    """SIGUSR1: every asyncio task's stack to the log (what a stuck broker waits on)."""
    out = logging.getLogger("samsa.server")
    for task in asyncio.all_tasks():
        frames = task.get_stack()
        where = " <- ".join(f"{f.f_code.co_name}:{f.f_lineno}" for f in reversed(frames))
        out.warning("task %s: %s", task.get_name(), where or "(not started)")
    out.warning("SIGUSR1: end of the task dump")  # what samsa.testing waits for


async def _serve(config: BrokerConfig) -> int:
    from samsa.server.node import Node

    started = time.monotonic()
    node = Node(config)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    loop.add_signal_handler(signal.SIGUSR1, _dump_tasks)
    starting = asyncio.ensure_future(node.start())
    stopping = asyncio.ensure_future(stop.wait())
    await asyncio.wait({starting, stopping}, return_when=asyncio.FIRST_COMPLETED)
    if not starting.done():
        # Stopped before the quorum formed (a node waiting for its peers).
        starting.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await starting
        await node.stop()
        return 0
    stopping.cancel()
    starting.result()  # a start-up failure propagates with its message
    elapsed = (time.monotonic() - started) * 1000
    if node.broker is not None:
        host, port = node.broker.advertised_endpoint()
        print(f"{READY_PREFIX}{host}:{port}", flush=True)
    else:
        listener = node.controller_listeners()[0]
        host, port = node.advertised(listener)
        print(f"{CONTROLLER_READY_PREFIX}{host}:{port}", flush=True)
    logging.getLogger("samsa.server").info(
        "node %d of cluster %s ready in %.0f ms, data in %s (process.roles=%s)",
        node.node_id,
        node.cluster_id,
        elapsed,
        config.data_dir,
        ",".join(sorted(node.settings.roles)),
    )
    # SIGTERM, or the node itself (every log dir failed: exit status 1).
    waits = {asyncio.ensure_future(stop.wait()), asyncio.ensure_future(node.stop_requested.wait())}
    _, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    for wait in pending:
        wait.cancel()
    await node.stop()
    return node.exit_code
