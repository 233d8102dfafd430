"""How the Admin reaches brokers: one request to a node within a deadline, and the
nodes to ask (the controller, a group's coordinator, each partition's leader).

The base of the Admin façade (admin.py), apart from the API: every API
family's module (topics, configs, groups, ...) calls back into these through
``plumbing.AdminPlumbing``, and the Admin's public methods only pick the
family and convert the timeout.  A request is retried on a retriable error
(a disconnect, a broker not ready) until its deadline.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from samsa.client.admin.item_errors import check_item
from samsa.client.config import COMMON_DEFS, parse_config
from samsa.client.consumer.consumer import build_network_client
from samsa.client.errors import DisconnectedError, KafkaTimeoutError
from samsa.client.metadata import TopicPartition
from samsa.errors import ErrorCode, KafkaError

log = logging.getLogger("samsa.client.admin.admin")

METADATA, FIND_COORDINATOR = 3, 10


class AdminChannel:
    """The Admin's network client and the plumbing its API modules call back into."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        self._cfg = parse_config(COMMON_DEFS, config, "admin")
        self._timeout_ms: int = self._cfg["request.timeout.ms"]
        self._client = build_network_client(self._cfg, self._timeout_ms)

    def _ms(self, timeout: float | None) -> int:
        return self._timeout_ms if timeout is None else int(timeout * 1000)

    def _call(
        self, node_id: int | None, api_key: int, body: dict[str, Any], timeout_ms: int
    ) -> Any:
        """Send to ``node_id`` (None: least loaded broker) and wait; retries disconnects."""
        client = self._client
        deadline = client.now_ms() + timeout_ms
        while True:
            target = node_id
            if target is None:
                target = client.least_loaded_node()
                if target is None:
                    if client.now_ms() >= deadline:
                        raise client.timed_out("no broker reachable", timeout_ms)
                    client.poll(50)
                    continue
            try:
                return client.wait(
                    client.send(target, api_key, body), max(1, deadline - client.now_ms())
                )
            except KafkaTimeoutError:
                raise client.timed_out("no response", timeout_ms) from None
            except KafkaError as exc:
                if isinstance(exc, DisconnectedError) and client.now_ms() >= deadline:
                    raise client.timed_out("no response", timeout_ms) from exc
                if not exc.retriable or client.now_ms() >= deadline:
                    raise
                log.debug("admin request %d failed: %s; retrying", api_key, exc)
                client.poll(min(100, max(0, deadline - client.now_ms())))

    def _metadata(self, topics: list[str] | None, timeout_ms: int) -> dict[str, Any]:
        body = {
            "topics": None
            if topics is None
            else [{"topic_id": b"\x00" * 16, "name": t} for t in topics],
            "allow_auto_topic_creation": False,
            "include_cluster_authorized_operations": False,
            "include_topic_authorized_operations": False,
        }
        resp: dict[str, Any] = self._call(None, METADATA, body, timeout_ms)
        return resp

    def _controller(self, timeout_ms: int) -> int:
        resp = self._metadata([], timeout_ms)
        controller = resp.get("controller_id", -1)
        if controller < 0 or controller not in {b["node_id"] for b in resp["brokers"]}:
            controller = resp["brokers"][0]["node_id"]
        self._client.metadata.update(resp, self._client.now_ms())
        return int(controller)

    def _broker_ids(self) -> list[int]:
        return sorted(self._client.metadata.cluster.nodes)

    def _coordinator(self, group_id: str, timeout_ms: int) -> int:
        body = {"key": group_id, "key_type": 0, "coordinator_keys": [group_id]}
        resp = self._call(None, FIND_COORDINATOR, body, timeout_ms)
        entry = resp["coordinators"][0] if resp.get("coordinators") else resp
        check_item(entry["error_code"], entry.get("error_message"), f"FindCoordinator {group_id!r}")
        return int(entry["node_id"])

    def _by_leader(
        self, partitions: Iterable[Any], timeout_ms: int
    ) -> dict[int, list[TopicPartition]]:
        parts = [TopicPartition(*tp) for tp in partitions]
        resp = self._metadata(sorted({tp.topic for tp in parts}), timeout_ms)
        leaders: dict[TopicPartition, int] = {}
        for t in resp["topics"]:
            check_item(t["error_code"], None, f"topic {t['name']!r}")
            for p in t["partitions"]:
                leaders[TopicPartition(t["name"], p["partition_index"])] = p["leader_id"]
        self._client.metadata.update(resp, self._client.now_ms())
        out: dict[int, list[TopicPartition]] = {}
        for tp in parts:
            if tp not in leaders:
                raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"{tp.topic}-{tp.partition}")
            out.setdefault(leaders[tp], []).append(tp)
        return out
