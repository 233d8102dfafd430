"""Kafka's ``meta.properties``: the data dir's persistent cluster id and node id.

Clients (librdkafka admin calls, kafka-python) refuse a cluster without a stable
cluster id and controller id, so both are fixed the first time a data dir is
used and checked on every later start.
"""

from __future__ import annotations

import base64
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from samsa.config.values import parse_properties
from samsa.errors import ConfigError
from samsa.storage.files.atomic_file import atomic_write

FILE_NAME = "meta.properties"


def random_cluster_id() -> str:
    """Kafka's format: a random UUID as 22 characters of URL-safe base64."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


def directory_uuid(directory_id: str) -> uuid.UUID | None:
    """meta.properties' ``directory.id`` (Kafka's base64 Uuid) as a UUID."""
    if not directory_id:
        return None
    padded = directory_id + "=" * (-len(directory_id) % 4)
    try:
        return uuid.UUID(bytes=base64.urlsafe_b64decode(padded))
    except ValueError:
        return None


@dataclass(frozen=True)
class MetaProperties:
    cluster_id: str
    node_id: int
    directory_id: str


def load_or_create(data_dir: Path, node_id: int, cluster_id: str = "") -> MetaProperties:
    """Read meta.properties, or write it for a new data dir (atomically)."""
    path = data_dir / FILE_NAME
    if path.exists():
        values = parse_properties(path.read_text())
        stored_node = int(values.get("node.id", values.get("broker.id", "-1")))
        if stored_node != node_id:
            raise ConfigError(
                f"{path} belongs to node.id={stored_node}, but this broker is node.id={node_id}"
            )
        stored_cluster = values.get("cluster.id", "")
        if cluster_id and stored_cluster != cluster_id:
            raise ConfigError(f"{path} belongs to cluster {stored_cluster!r}, not {cluster_id!r}")
        return MetaProperties(stored_cluster, stored_node, values.get("directory.id", ""))
    meta = MetaProperties(cluster_id or random_cluster_id(), node_id, random_cluster_id())
    data_dir.mkdir(parents=True, exist_ok=True)
    text = (
        "#\n"
        f"#{time.strftime('%a %b %d %H:%M:%S UTC %Y', time.gmtime())}\n"
        f"cluster.id={meta.cluster_id}\n"
        f"directory.id={meta.directory_id}\n"
        f"node.id={meta.node_id}\n"
        "version=1\n"
    )
    atomic_write(path, text.encode())
    return meta
