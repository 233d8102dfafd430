"""``samsa cluster add-voter|remove-voter``: change the metadata quorum (KIP-853).

A controller joins a dynamic quorum in two steps, as in Kafka 4: it starts
with ``controller.quorum.bootstrap.servers`` and fetches the metadata log as an
observer; once it has caught up, ``add-voter`` asks the quorum leader to make
it a voter.  The leader needs the node's id, the directory id of its metadata
log (so a node whose disk was wiped cannot vote with a log it no longer has)
and the controller listener(s) other voters reach it on.

``--node-config server.properties`` reads all three from the node's own
configuration the way Kafka's ``kafka-metadata-quorum add-controller`` does:
``node.id``, the ``directory.id`` in ``meta.properties`` of its metadata log
dir (``metadata.log.dir``, else the first of ``log.dirs``; Kafka's base64 Uuid,
shown here as a standard UUID), and the listeners named in
``controller.listener.names`` (advertised address where one is given).  Flags
given next to it win.  Relative data dirs are taken from the current
directory, as the node itself takes them.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import uuid
from pathlib import Path

from samsa.cli.common import CliError, open_admin
from samsa.client.admin import Admin, QuorumInfo
from samsa.config.broker_config import BrokerConfig
from samsa.config.broker_keys import KEYS
from samsa.config.listeners import Listener, parse_listeners
from samsa.config.node_settings import NodeSettings
from samsa.config.values import parse_properties
from samsa.errors import ConfigError, SamsaError

Endpoint = tuple[str, str, int]
"""(listener name, host, port), as AddRaftVoter carries it."""

WILDCARD_HOSTS = ("", "0.0.0.0", "::")


def parse_directory_id(text: str) -> str:
    """A UUID as ``8-4-4-4-12`` hex, or Kafka's 22-character base64 form."""
    value = text.strip()
    try:
        return str(uuid.UUID(value))
    except ValueError:
        pass
    if len(value) == 22:
        try:
            raw = base64.urlsafe_b64decode(value + "==")
        except (binascii.Error, ValueError):
            raw = b""
        if len(raw) == 16:
            return str(uuid.UUID(bytes=raw))
    raise CliError(
        f"bad directory id {text!r}: expected a UUID (like 5f1c7a2e-...) or "
        "Kafka's 22-character base64 form from meta.properties"
    )


def parse_endpoint(text: str) -> Endpoint:
    if "://" not in text:
        raise CliError(
            f"bad --endpoint {text!r}: expected NAME://HOST:PORT, e.g. CONTROLLER://h:9093"
        )
    try:
        (listener,) = parse_listeners(text, "--endpoint")
    except ConfigError as exc:
        raise CliError(str(exc)) from None
    return listener.name, listener.host, listener.port


def _node_config(path: Path) -> tuple[BrokerConfig, dict[str, str]]:
    try:
        raw = parse_properties(path.read_text())
    except OSError as exc:
        raise CliError(f"cannot read --node-config {path}: {exc.strerror}") from None
    # A Kafka server.properties has keys Samsa does not know; only ours matter here.
    config = BrokerConfig({k: v for k, v in raw.items() if k in KEYS})
    return config, raw


def node_from_config(path: Path) -> tuple[int, str, list[Endpoint], str]:
    """(node id, directory id, controller endpoints, cluster id) of the node configured
    in ``path``, from the config and its data dir's meta.properties."""
    config, raw = _node_config(path)
    try:
        settings = NodeSettings.from_config(config)
    except ConfigError as exc:
        raise CliError(f"--node-config {path}: {exc}") from None
    if not settings.is_controller:
        roles = ",".join(sorted(settings.roles))
        raise CliError(
            f"node {settings.node_id} in {path} is not a controller (process.roles={roles})"
        )
    data_dir = Path(raw.get("metadata.log.dir") or config.data_dir)
    meta_path = data_dir / "meta.properties"
    try:
        meta = parse_properties(meta_path.read_text())
    except OSError:
        raise CliError(
            f"no {meta_path}: start node {settings.node_id} once (it joins as an observer) "
            "before adding it as a voter"
        ) from None
    if "directory.id" not in meta:
        raise CliError(f"{meta_path} has no directory.id")
    directory_id = parse_directory_id(meta["directory.id"])
    if int(meta.get("node.id", settings.node_id)) != settings.node_id:
        raise CliError(f"{meta_path} belongs to node {meta['node.id']}, not {settings.node_id}")
    return (
        settings.node_id,
        directory_id,
        controller_endpoints(settings),
        meta.get("cluster.id", ""),
    )


def controller_endpoints(settings: NodeSettings) -> list[Endpoint]:
    advertised = {a.name: a for a in settings.advertised}
    out: list[Endpoint] = []
    listeners: list[Listener] = [x for x in settings.listeners if settings.serves_controller(x)]
    if not settings.controller_listener_names:
        listeners = listeners[:1]  # the single-node default: the first listener serves the quorum
    for listener in listeners:
        chosen = advertised.get(listener.name, listener)
        if chosen.host in WILDCARD_HOSTS or chosen.port == 0:
            raise CliError(
                f"listener {chosen} is not an address other nodes can reach: set "
                "advertised.listeners in the node's config, or give --endpoint"
            )
        out.append((chosen.name, chosen.host, chosen.port))
    return out


def run_add_voter(args: argparse.Namespace) -> int:
    node_id: int | None = args.node_id
    directory_id: str | None = None
    endpoints: list[Endpoint] = []
    node_cluster = ""
    if args.node_config:
        node_id, directory_id, endpoints, node_cluster = node_from_config(Path(args.node_config))
        if args.node_id is not None and args.node_id != node_id:
            raise CliError(f"--node-id {args.node_id} but {args.node_config} is node {node_id}")
    if args.directory_id:
        directory_id = parse_directory_id(args.directory_id)
    if args.endpoint:
        endpoints = [parse_endpoint(e) for e in args.endpoint]
    if node_id is None or directory_id is None or not endpoints:
        raise CliError("add-voter needs --node-config, or --node-id, --directory-id and --endpoint")
    with open_admin(args) as admin:
        if node_cluster:
            cluster = admin.describe_cluster(timeout=args.timeout).cluster_id
            if cluster and cluster != node_cluster:
                raise CliError(f"node {node_id} belongs to cluster {node_cluster}, not {cluster}")
        quorum = admin.describe_metadata_quorum(timeout=args.timeout)
        if any(v.replica_id == node_id for v in quorum.voters):
            raise CliError(f"node {node_id} is already a voter (voters: {voter_ids(quorum)})")
        admin.add_raft_voter(node_id, directory_id, endpoints, timeout=args.timeout)
        voters = current_voters(admin, args.timeout)
    shown = ", ".join(f"{n}://{h}:{p}" for n, h, p in endpoints)
    print(f"Added node {node_id} ({directory_id}, {shown}) as a voter; voters: {voters}.")
    return 0


def run_remove_voter(args: argparse.Namespace) -> int:
    with open_admin(args) as admin:
        quorum = admin.describe_metadata_quorum(timeout=args.timeout)
        voter = next((v for v in quorum.voters if v.replica_id == args.node_id), None)
        if voter is None:
            raise CliError(f"node {args.node_id} is not a voter (voters: {voter_ids(quorum)})")
        directory_id = parse_directory_id(args.directory_id) if args.directory_id else None
        directory_id = directory_id or voter.directory_id
        if directory_id is None:
            raise CliError(
                f"voter {args.node_id} has no directory id in DescribeQuorum; give --directory-id"
            )
        admin.remove_raft_voter(args.node_id, directory_id, timeout=args.timeout)
        remaining = current_voters(admin, args.timeout)
    print(f"Removed node {args.node_id} from the voters; voters: {remaining}.")
    return 0


def current_voters(admin: Admin, timeout: float) -> str:
    """The voters after a change; a leader that removed itself resigns, so the quorum
    may be electing and not answer at once."""
    try:
        return voter_ids(admin.describe_metadata_quorum(timeout=timeout))
    except SamsaError:
        return "(the quorum is electing a new leader)"


def voter_ids(quorum: QuorumInfo) -> str:
    return ", ".join(str(v.replica_id) for v in sorted(quorum.voters, key=lambda v: v.replica_id))
