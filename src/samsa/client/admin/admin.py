"""Admin: topics, configs, groups, offsets and cluster information (Kafka's Admin client).

Every call is synchronous: it builds one request per target broker (the
controller for topic changes, the group coordinator for group calls, the
partition leaders for offsets, any broker otherwise), waits at most its
``timeout`` and raises ``KafkaError`` carrying the broker's error code and
message for the first failed item.  Results are plain dataclasses
(``results.py``).

Threading: one application thread at a time; calls are serialised by the
network client's lock.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from samsa.client.admin.acls import create_acls, delete_acls, describe_acls
from samsa.client.admin.configs import describe_topic_configs
from samsa.client.admin.consumer_groups import ConsumerGroupDescription, describe_consumer_groups
from samsa.client.admin.elections import ElectionType, elect_leaders
from samsa.client.admin.group_offsets import alter_group_offsets, delete_group_offsets
from samsa.client.admin.log_dirs import describe_log_dirs, failed_log_dirs
from samsa.client.admin.quorum import (
    QuorumInfo,
    add_raft_voter,
    describe_quorum,
    remove_raft_voter,
)
from samsa.client.admin.reassignments import (
    PartitionReassignment,
    alter_partition_reassignments,
    list_partition_reassignments,
)
from samsa.client.admin.results import (
    BrokerInfo,
    ClusterDescription,
    ConfigEntry,
    GroupDescription,
    GroupListing,
    MemberDescription,
    NewTopic,
    PartitionDescription,
    TopicDescription,
)
from samsa.client.admin.retry import retry_coordinator_errors
from samsa.client.admin.scram_users import (
    alter_user_scram_credentials,
    describe_user_scram_credentials,
)
from samsa.client.admin.share_groups import (
    ShareGroupDescription,
    alter_share_group_offsets,
    delete_share_group_offsets,
    describe_share_group,
    list_share_group_offsets,
)
from samsa.client.admin.transactions import (
    ProducerState,
    TransactionDescription,
    TransactionListing,
    abort_transaction,
    describe_producers,
    describe_transactions,
    list_transactions,
)
from samsa.client.config import COMMON_DEFS, parse_config
from samsa.client.consumer.consumer import build_network_client
from samsa.client.consumer.errors import kafka_error
from samsa.client.consumer.offsets import (
    EARLIEST,
    LATEST,
    LIST_OFFSETS,
    list_offsets_request,
    parse_list_offsets,
)
from samsa.client.consumer.records import OffsetAndMetadata
from samsa.client.errors import KafkaTimeoutError
from samsa.client.metadata import TopicPartition
from samsa.errors import ErrorCode, KafkaError
from samsa.protocol.acl import ANY_ACL, AclBinding, AclFilter
from samsa.protocol.consumer_protocol import decode_assignment

__all__ = ["EARLIEST", "LATEST", "Admin"]

log = logging.getLogger(__name__)

METADATA, OFFSET_FETCH, FIND_COORDINATOR = 3, 9, 10
DESCRIBE_GROUPS, LIST_GROUPS = 15, 16
CREATE_TOPICS, DELETE_TOPICS, DELETE_RECORDS = 19, 20, 21
DESCRIBE_CONFIGS, CREATE_PARTITIONS, DELETE_GROUPS = 32, 37, 42
INCREMENTAL_ALTER_CONFIGS, DESCRIBE_CLUSTER = 44, 60
RESOURCE_TYPES = {"topic": 2, "broker": 4, "group": 3}
CONFIG_OPS = {"set": 0, "delete": 1, "append": 2, "subtract": 3}


def _check(code: int, message: str | None, what: str) -> None:
    if code:
        raise kafka_error(code, f"{what}: {message}" if message else what)


class Admin:
    def __init__(self, config: Mapping[str, Any]) -> None:
        self._cfg = parse_config(COMMON_DEFS, config, "admin")
        self._timeout_ms: int = self._cfg["request.timeout.ms"]
        self._client = build_network_client(self._cfg, self._timeout_ms)

    # -- plumbing ------------------------------------------------------------------
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
                        raise KafkaTimeoutError("no broker reachable")
                    client.poll(50)
                    continue
            try:
                return client.wait(
                    client.send(target, api_key, body), max(1, deadline - client.now_ms())
                )
            except KafkaError as exc:
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
        _check(entry["error_code"], entry.get("error_message"), f"FindCoordinator {group_id!r}")
        return int(entry["node_id"])

    # -- topics ----------------------------------------------------------------------
    def create_topics(
        self, topics: Iterable[NewTopic], timeout: float | None = None, validate_only: bool = False
    ) -> None:
        timeout_ms = self._ms(timeout)
        new = list(topics)
        body = {
            "topics": [
                {
                    "name": t.name,
                    "num_partitions": t.num_partitions,
                    "replication_factor": t.replication_factor,
                    "assignments": [],
                    "configs": [{"name": k, "value": v} for k, v in t.configs.items()],
                }
                for t in new
            ],
            "timeout_ms": timeout_ms,
            "validate_only": validate_only,
        }
        resp = self._call(self._controller(timeout_ms), CREATE_TOPICS, body, timeout_ms)
        for t in resp["topics"]:
            _check(t["error_code"], t.get("error_message"), f"create topic {t['name']!r}")

    def delete_topics(self, topics: Iterable[str], timeout: float | None = None) -> None:
        timeout_ms = self._ms(timeout)
        names = list(topics)
        body = {
            "topic_names": names,
            "topics": [{"name": n, "topic_id": b"\x00" * 16} for n in names],
            "timeout_ms": timeout_ms,
        }
        resp = self._call(self._controller(timeout_ms), DELETE_TOPICS, body, timeout_ms)
        for t in resp["responses"]:
            _check(t["error_code"], t.get("error_message"), f"delete topic {t['name']!r}")

    def list_topics(self, timeout: float | None = None, include_internal: bool = False) -> set[str]:
        resp = self._metadata(None, self._ms(timeout))
        return {
            t["name"]
            for t in resp["topics"]
            if t["error_code"] == 0 and (include_internal or not t.get("is_internal", False))
        }

    def describe_topics(
        self, topics: Iterable[str], timeout: float | None = None
    ) -> dict[str, TopicDescription]:
        resp = self._metadata(list(topics), self._ms(timeout))
        out: dict[str, TopicDescription] = {}
        for t in resp["topics"]:
            _check(t["error_code"], None, f"describe topic {t['name']!r}")
            parts = tuple(
                PartitionDescription(
                    p["partition_index"],
                    p["leader_id"],
                    p.get("leader_epoch", -1),
                    tuple(p["replica_nodes"]),
                    tuple(p["isr_nodes"]),
                )
                for p in sorted(t["partitions"], key=lambda p: p["partition_index"])
            )
            out[t["name"]] = TopicDescription(
                t["name"], t.get("topic_id"), t.get("is_internal", False), parts
            )
        return out

    def create_partitions(
        self, new_counts: Mapping[str, int], timeout: float | None = None
    ) -> None:
        """Grow each topic to the given total partition count."""
        timeout_ms = self._ms(timeout)
        body = {
            "topics": [{"name": t, "count": n, "assignments": None} for t, n in new_counts.items()],
            "timeout_ms": timeout_ms,
            "validate_only": False,
        }
        resp = self._call(self._controller(timeout_ms), CREATE_PARTITIONS, body, timeout_ms)
        for r in resp["results"]:
            _check(r["error_code"], r.get("error_message"), f"create partitions {r['name']!r}")

    # -- configs ---------------------------------------------------------------------
    def describe_configs(
        self, resource_type: str, name: str, keys: Iterable[str] | None = None,
        timeout: float | None = None,
    ) -> dict[str, ConfigEntry]:  # fmt: skip
        body = {
            "resources": [
                {
                    "resource_type": RESOURCE_TYPES[resource_type],
                    "resource_name": name,
                    "configuration_keys": None if keys is None else list(keys),
                }
            ],
            "include_synonyms": False,
            "include_documentation": False,
        }
        resp = self._call(None, DESCRIBE_CONFIGS, body, self._ms(timeout))
        out: dict[str, ConfigEntry] = {}
        for r in resp["results"]:
            _check(r["error_code"], r.get("error_message"), f"describe configs of {name!r}")
            for c in r["configs"]:
                out[c["name"]] = ConfigEntry(
                    c["name"],
                    c["value"],
                    c["read_only"],
                    c["is_sensitive"],
                    c.get("config_source", -1),
                )
        return out

    def alter_configs(
        self, resource_type: str, name: str, changes: Mapping[str, str | None],
        timeout: float | None = None,
    ) -> None:  # fmt: skip
        """Incremental alter: a string value sets the key, None deletes it (back to default)."""
        body = {
            "resources": [
                {
                    "resource_type": RESOURCE_TYPES[resource_type],
                    "resource_name": name,
                    "configs": [
                        {
                            "name": k,
                            "config_operation": CONFIG_OPS["delete" if v is None else "set"],
                            "value": v,
                        }
                        for k, v in changes.items()
                    ],
                }
            ],
            "validate_only": False,
        }
        resp = self._call(None, INCREMENTAL_ALTER_CONFIGS, body, self._ms(timeout))
        for r in resp["responses"]:
            _check(r["error_code"], r.get("error_message"), f"alter configs of {name!r}")

    # -- groups ----------------------------------------------------------------------
    @retry_coordinator_errors
    def list_groups(self, timeout: float | None = None) -> list[GroupListing]:
        timeout_ms = self._ms(timeout)
        self._controller(timeout_ms)  # learn every broker
        out: list[GroupListing] = []
        for node_id in list(self._client.metadata.cluster.nodes):
            resp = self._call(
                node_id, LIST_GROUPS, {"states_filter": [], "types_filter": []}, timeout_ms
            )
            _check(resp["error_code"], None, "list groups")
            out += [
                GroupListing(
                    g["group_id"],
                    g["protocol_type"],
                    g.get("group_state"),
                    g.get("group_type") or "",
                )
                for g in resp["groups"]
            ]
        return out

    @retry_coordinator_errors
    def describe_groups(
        self, group_ids: Iterable[str], timeout: float | None = None
    ) -> dict[str, GroupDescription]:
        timeout_ms = self._ms(timeout)
        out: dict[str, GroupDescription] = {}
        for group_id in group_ids:
            node = self._coordinator(group_id, timeout_ms)
            body = {"groups": [group_id], "include_authorized_operations": False}
            resp = self._call(node, DESCRIBE_GROUPS, body, timeout_ms)
            for g in resp["groups"]:
                _check(g["error_code"], None, f"describe group {group_id!r}")
                members = []
                for m in g["members"]:
                    raw = m.get("member_assignment") or b""
                    assignment: dict[str, tuple[int, ...]] = {}
                    if raw and g["protocol_type"] == "consumer":
                        try:
                            assignment = dict(decode_assignment(raw).partitions)
                        except Exception:  # a non-standard assignment payload
                            assignment = {}
                    members.append(
                        MemberDescription(
                            m["member_id"], m.get("group_instance_id"), m["client_id"],
                            m["client_host"], assignment,
                        )
                    )  # fmt: skip
                out[g["group_id"]] = GroupDescription(
                    g["group_id"], g["group_state"], g["protocol_type"], g["protocol_data"],
                    tuple(members),
                )  # fmt: skip
        return out

    @retry_coordinator_errors
    def describe_consumer_groups(
        self, group_ids: Iterable[str], timeout: float | None = None
    ) -> dict[str, ConsumerGroupDescription | None]:
        """KIP-848 groups with epochs and target assignments (None: not such a group)."""
        return describe_consumer_groups(self, group_ids, self._ms(timeout))

    @retry_coordinator_errors
    def describe_share_group(
        self, group_id: str, timeout: float | None = None
    ) -> ShareGroupDescription | None:
        """A share group's members and assignment (None: no such share group)."""
        return describe_share_group(self, group_id, self._ms(timeout))

    @retry_coordinator_errors
    def list_share_group_offsets(
        self, group_id: str, timeout: float | None = None
    ) -> dict[TopicPartition, int]:
        """Each partition's start offset in the share group (-1: no state yet)."""
        return list_share_group_offsets(self, group_id, self._ms(timeout))

    @retry_coordinator_errors
    def alter_share_group_offsets(
        self, group_id: str, offsets: Mapping[TopicPartition, int], timeout: float | None = None
    ) -> None:
        alter_share_group_offsets(self, group_id, offsets, self._ms(timeout))

    @retry_coordinator_errors
    def delete_share_group_offsets(
        self, group_id: str, topics: Iterable[str], timeout: float | None = None
    ) -> None:
        delete_share_group_offsets(self, group_id, topics, self._ms(timeout))

    @retry_coordinator_errors
    def delete_groups(self, group_ids: Iterable[str], timeout: float | None = None) -> None:
        timeout_ms = self._ms(timeout)
        for group_id in group_ids:
            node = self._coordinator(group_id, timeout_ms)
            resp = self._call(node, DELETE_GROUPS, {"groups_names": [group_id]}, timeout_ms)
            for r in resp["results"]:
                _check(r["error_code"], None, f"delete group {r['group_id']!r}")

    @retry_coordinator_errors
    def list_consumer_group_offsets(
        self, group_id: str, partitions: Iterable[Any] | None = None, timeout: float | None = None
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        """Committed offsets of a group (all partitions it committed, or only ``partitions``)."""
        timeout_ms = self._ms(timeout)
        node = self._coordinator(group_id, timeout_ms)
        topics: list[dict[str, Any]] | None = None
        if partitions is not None:
            by_topic: dict[str, list[int]] = {}
            for tp in partitions:
                by_topic.setdefault(tp[0], []).append(tp[1])
            topics = [{"name": t, "partition_indexes": ps} for t, ps in by_topic.items()]
        body = {
            "group_id": group_id,
            "topics": topics,
            "groups": [
                {"group_id": group_id, "member_id": None, "member_epoch": -1, "topics": topics}
            ],
            "require_stable": False,
        }
        resp = self._call(node, OFFSET_FETCH, body, timeout_ms)
        group = resp["groups"][0] if resp.get("groups") else resp
        _check(group.get("error_code", 0), None, f"offsets of group {group_id!r}")
        out: dict[TopicPartition, OffsetAndMetadata] = {}
        for t in group["topics"]:
            for p in t["partitions"]:
                _check(p["error_code"], None, f"offset of {t['name']}-{p['partition_index']}")
                if p["committed_offset"] >= 0:
                    out[TopicPartition(t["name"], p["partition_index"])] = OffsetAndMetadata(
                        p["committed_offset"], p.get("metadata") or ""
                    )
        return out

    @retry_coordinator_errors
    def alter_consumer_group_offsets(
        self, group_id: str, offsets: Mapping[Any, int], timeout: float | None = None
    ) -> None:
        """Set committed offsets of a group without members (see group_offsets)."""
        parts = {TopicPartition(*tp): offset for tp, offset in offsets.items()}
        alter_group_offsets(self, group_id, parts, self._ms(timeout))

    @retry_coordinator_errors
    def delete_consumer_group_offsets(
        self, group_id: str, partitions: Iterable[Any], timeout: float | None = None
    ) -> None:
        parts = [TopicPartition(*tp) for tp in partitions]
        delete_group_offsets(self, group_id, parts, self._ms(timeout))

    def describe_log_dirs(
        self, topics: Iterable[str] | None = None, timeout: float | None = None
    ) -> dict[int, dict[TopicPartition, int]]:
        """Bytes on disk per partition, per broker (DescribeLogDirs)."""
        wanted = None if topics is None else list(topics)
        return describe_log_dirs(self, wanted, self._ms(timeout))

    def failed_log_dirs(self, timeout: float | None = None) -> dict[int, list[tuple[str, int]]]:
        """Per broker that answers, its log dirs taken offline by an I/O error
        and their error codes (DescribeLogDirs)."""
        return failed_log_dirs(self, self._ms(timeout))

    # -- offsets and records -------------------------------------------------------------
    def _by_leader(
        self, partitions: Iterable[Any], timeout_ms: int
    ) -> dict[int, list[TopicPartition]]:
        parts = [TopicPartition(*tp) for tp in partitions]
        resp = self._metadata(sorted({tp.topic for tp in parts}), timeout_ms)
        leaders: dict[TopicPartition, int] = {}
        for t in resp["topics"]:
            _check(t["error_code"], None, f"topic {t['name']!r}")
            for p in t["partitions"]:
                leaders[TopicPartition(t["name"], p["partition_index"])] = p["leader_id"]
        self._client.metadata.update(resp, self._client.now_ms())
        out: dict[int, list[TopicPartition]] = {}
        for tp in parts:
            if tp not in leaders:
                raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"{tp.topic}-{tp.partition}")
            out.setdefault(leaders[tp], []).append(tp)
        return out

    def list_offsets(
        self, specs: Mapping[Any, int], timeout: float | None = None, isolation_level: int = 0
    ) -> dict[TopicPartition, tuple[int, int]]:
        """(offset, timestamp) per partition for a timestamp, EARLIEST (-2) or LATEST (-1)."""
        timeout_ms = self._ms(timeout)
        wanted = {TopicPartition(*tp): ts for tp, ts in specs.items()}
        out: dict[TopicPartition, tuple[int, int]] = {}
        for node, parts in self._by_leader(wanted, timeout_ms).items():
            body = list_offsets_request({tp: wanted[tp] for tp in parts}, isolation_level)
            found, errors = parse_list_offsets(self._call(node, LIST_OFFSETS, body, timeout_ms))
            for tp, code in errors.items():
                _check(code, None, f"list offsets {tp.topic}-{tp.partition}")
            for tp, (offset, ts, _epoch) in found.items():
                out[tp] = (offset, ts)
        return out

    def delete_records(
        self, before: Mapping[Any, int], timeout: float | None = None
    ) -> dict[TopicPartition, int]:
        """Delete records below the given offsets; returns each partition's new low watermark."""
        timeout_ms = self._ms(timeout)
        wanted = {TopicPartition(*tp): off for tp, off in before.items()}
        out: dict[TopicPartition, int] = {}
        for node, parts in self._by_leader(wanted, timeout_ms).items():
            topics: dict[str, list[dict[str, int]]] = {}
            for tp in parts:
                topics.setdefault(tp.topic, []).append(
                    {"partition_index": tp.partition, "offset": wanted[tp]}
                )
            body = {
                "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()],
                "timeout_ms": timeout_ms,
            }
            resp = self._call(node, DELETE_RECORDS, body, timeout_ms)
            for t in resp["topics"]:
                for p in t["partitions"]:
                    _check(
                        p["error_code"], None, f"delete records {t['name']}-{p['partition_index']}"
                    )
                    out[TopicPartition(t["name"], p["partition_index"])] = p["low_watermark"]
        return out

    # -- cluster ---------------------------------------------------------------------------
    def describe_cluster(self, timeout: float | None = None) -> ClusterDescription:
        """DescribeCluster where the broker has it, else the same facts from Metadata."""
        timeout_ms = self._ms(timeout)
        try:
            resp = self._call(
                None, DESCRIBE_CLUSTER,
                {"include_cluster_authorized_operations": False, "endpoint_type": 1},
                timeout_ms,
            )  # fmt: skip
            _check(resp["error_code"], resp.get("error_message"), "describe cluster")
            brokers = [
                BrokerInfo(b["broker_id"], b["host"], b["port"], b.get("rack"))
                for b in resp["brokers"]
            ]
        except KafkaError as exc:
            if exc.code is not ErrorCode.UNSUPPORTED_VERSION:
                raise
            resp = self._metadata([], timeout_ms)
            brokers = [
                BrokerInfo(b["node_id"], b["host"], b["port"], b.get("rack"))
                for b in resp["brokers"]
            ]
        return ClusterDescription(
            resp.get("cluster_id"), resp.get("controller_id", -1), tuple(brokers)
        )

    def describe_metadata_quorum(self, timeout: float | None = None) -> QuorumInfo:
        """The Raft quorum: leader, epoch, high watermark, voters' and observers' lag."""
        return describe_quorum(self, self._ms(timeout))

    def add_raft_voter(
        self,
        voter_id: int,
        directory_id: str,
        listeners: list[tuple[str, str, int]],
        timeout: float | None = None,
    ) -> None:
        """Make a caught-up controller a voter (KIP-853); returns once committed."""
        add_raft_voter(self, voter_id, directory_id, listeners, self._ms(timeout))

    def remove_raft_voter(
        self, voter_id: int, directory_id: str, timeout: float | None = None
    ) -> None:
        remove_raft_voter(self, voter_id, directory_id, self._ms(timeout))

    # -- leaders and replica placement (elections.py, reassignments.py) ---------------
    def elect_leaders(
        self, election_type: ElectionType, partitions: Iterable[TopicPartition] | None = None,
        timeout: float | None = None,
    ) -> dict[TopicPartition, KafkaError | None]:  # fmt: skip
        """Preferred or unclean elections; None partitions: every partition."""
        return elect_leaders(self, election_type, partitions, self._ms(timeout))

    def alter_partition_reassignments(
        self, targets: Mapping[TopicPartition, list[int] | None], timeout: float | None = None
    ) -> dict[TopicPartition, KafkaError | None]:
        """Start (target replicas) or cancel (None) reassignments; errors per partition."""
        return alter_partition_reassignments(self, targets, self._ms(timeout))

    def list_partition_reassignments(
        self, partitions: Iterable[TopicPartition] | None = None, timeout: float | None = None
    ) -> dict[TopicPartition, PartitionReassignment]:
        return list_partition_reassignments(self, partitions, self._ms(timeout))

    def describe_user_scram_credentials(
        self, users: Iterable[str] | None = None, timeout: float | None = None
    ) -> dict[str, dict[str, int]]:
        """{user: {mechanism: iterations}} of ``users``, or of every SCRAM user."""
        return describe_user_scram_credentials(self, users, self._ms(timeout))

    def alter_user_scram_credentials(
        self,
        upsertions: Mapping[tuple[str, str], tuple[str, int]] | None = None,
        deletions: Iterable[tuple[str, str]] = (),
        timeout: float | None = None,
    ) -> dict[str, KafkaError | None]:
        """Set {(user, mechanism): (password, iterations)}, delete (user, mechanism)."""
        return alter_user_scram_credentials(self, upsertions or {}, deletions, self._ms(timeout))

    def describe_topic_configs(
        self, topics: Iterable[str], keys: Iterable[str] | None = None,
        timeout: float | None = None,
    ) -> dict[str, dict[str, str | None]]:  # fmt: skip
        """Configs of many topics in one request: topic -> name -> value."""
        return describe_topic_configs(self, topics, keys, self._ms(timeout))

    def create_acls(self, bindings: Iterable[AclBinding], timeout: float | None = None) -> None:
        create_acls(self, bindings, self._ms(timeout))

    def describe_acls(
        self, acl_filter: AclFilter = ANY_ACL, timeout: float | None = None
    ) -> list[AclBinding]:
        """The ACLs matching ``acl_filter`` (default: all of them)."""
        return describe_acls(self, acl_filter, self._ms(timeout))

    def delete_acls(
        self, filters: Iterable[AclFilter], timeout: float | None = None
    ) -> list[AclBinding]:
        """Delete the ACLs each filter matches; the ones deleted."""
        return delete_acls(self, filters, self._ms(timeout))

    def list_transactions(
        self, states: Iterable[str] = (), producer_ids: Iterable[int] = (),
        timeout: float | None = None,
    ) -> list[TransactionListing]:  # fmt: skip
        """Every transactional id of every coordinator (filtered by state names / ids)."""
        return list_transactions(self, states, producer_ids, self._ms(timeout))

    def describe_transactions(
        self, transactional_ids: Iterable[str], timeout: float | None = None
    ) -> dict[str, TransactionDescription]:
        """State, producer and partitions of each id, from its coordinator."""
        return describe_transactions(self, transactional_ids, self._ms(timeout))

    def describe_producers(
        self, partitions: Iterable[Any], timeout: float | None = None
    ) -> dict[TopicPartition, list[ProducerState]]:
        """The producers each partition's leader remembers, with their open transactions."""
        timeout_ms = self._ms(timeout)
        return describe_producers(self, self._by_leader(partitions, timeout_ms), timeout_ms)

    def abort_transaction(
        self, partition: Any, producer_id: int, producer_epoch: int, coordinator_epoch: int,
        timeout: float | None = None,
    ) -> None:  # fmt: skip
        """End a hanging transaction on one partition with an ABORT marker."""
        timeout_ms = self._ms(timeout)
        tp = TopicPartition(*partition)
        (leader,) = self._by_leader([tp], timeout_ms)
        abort_transaction(
            self, leader, tp, producer_id, producer_epoch, coordinator_epoch, timeout_ms
        )

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> Admin:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
