"""The share coordinator: share partitions' durable state over ``__share_group_state``.

Each share partition (group, topic id, partition) has one key in one partition
of ``__share_group_state`` (Kafka's placement: the Java hash of
``group:topicId:partition``).  The leader of that partition serves
ReadShareGroupState / WriteShareGroupState / InitializeShareGroupState /
DeleteShareGroupState from a map it rebuilds by replaying the partition the
first time it serves it under a leader epoch, so a new leader of a state
partition answers from what its replica holds.  Writes are ShareSnapshot
records appended with acks=all before they are answered, so an acknowledged
write survives the state partition's leader.

A write from a data-partition leader of an older leader epoch than the stored
one is refused (FENCED_LEADER_EPOCH), so a deposed leader cannot overwrite the
state its successor wrote; so is one of an older state epoch (FENCED_STATE_EPOCH).
"""

from __future__ import annotations

import base64
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from samsa.coordinator.store import OffsetsStore
from samsa.errors import DecodeError, ErrorCode, KafkaError
from samsa.protocol.internal_records.share_state_records import (
    SHARE_SNAPSHOT,
    SHARE_UPDATE,
    ShareStateKey,
    decode_share_state_key,
    decode_share_state_value,
    encode_share_state_value,
)

log = logging.getLogger("samsa.coordinator")

Body = dict[str, Any]
StateKey = tuple[str, bytes, int]
SHARE_STATE_TOPIC = "__share_group_state"


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode`` (over UTF-16 code units), as a signed 32-bit int."""
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def uuid_string(topic_id: bytes) -> str:
    """Kafka's ``Uuid.toString``: URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(topic_id).decode().rstrip("=")


def state_partition(group_id: str, topic_id: bytes, partition: int, partitions: int) -> int:
    """The ``__share_group_state`` partition of a share partition (Kafka's placement)."""
    h = java_string_hash(f"{group_id}:{uuid_string(topic_id)}:{partition}")
    return (h & 0x7FFFFFFF if h != -(1 << 31) else 0) % partitions


@dataclass(slots=True)
class StoredState:
    state_epoch: int = 0
    leader_epoch: int = -1
    start_offset: int = -1
    snapshot_epoch: int = -1
    create_timestamp: int = 0
    state_batches: list[Body] = field(default_factory=list)


class ShareStateCoordinator:
    def __init__(
        self,
        store: OffsetsStore,
        partitions: int,
        leader_epoch: Callable[[int], int | None],
    ) -> None:
        self.store = store
        self.partitions = partitions
        self.leader_epoch = leader_epoch
        """The leader epoch of a state partition this broker leads, else None."""
        self.states: dict[int, dict[StateKey, StoredState]] = {}
        self._loaded_epoch: dict[int, int] = {}

    def partition_for(self, group_id: str, topic_id: bytes, partition: int) -> int:
        return state_partition(group_id, topic_id, partition, self.partitions)

    def _loaded(self, index: int) -> dict[StateKey, StoredState]:
        epoch = self.leader_epoch(index)
        if epoch is None:
            raise KafkaError(ErrorCode.NOT_COORDINATOR, f"not the leader of {index}")
        if self._loaded_epoch.get(index) != epoch:
            states: dict[StateKey, StoredState] = {}
            for key, value in self.store.read(index):
                self._replay(states, key, value)
            self.states[index] = states
            self._loaded_epoch[index] = epoch
            log.info("share coordinator loaded %d share partitions of %d", len(states), index)
        return self.states[index]

    @staticmethod
    def _replay(states: dict[StateKey, StoredState], key: bytes, value: bytes | None) -> None:
        try:
            decoded = decode_share_state_key(key)
            full = (decoded.group_id, decoded.topic_id, decoded.partition)
            if value is None:
                states.pop(full, None)
                return
            body = decode_share_state_value(decoded.record_type, value)
        except DecodeError as exc:
            log.warning("skipping undecodable share state record: %s", exc)
            return
        if decoded.record_type == SHARE_SNAPSHOT:
            states[full] = StoredState(
                body["state_epoch"],
                body["leader_epoch"],
                body["start_offset"],
                body["snapshot_epoch"],
                body["create_timestamp"],
                list(body["state_batches"]),
            )
        elif decoded.record_type == SHARE_UPDATE and full in states:
            state = states[full]
            state.leader_epoch = body["leader_epoch"]
            if body["start_offset"] >= 0:
                state.start_offset = body["start_offset"]
            state.state_batches = _merge(state.state_batches, body["state_batches"])

    # -------------------------------------------------------------- APIs

    async def handle(self, api: str, req: Body) -> Body:
        """One of ``read``, ``read_summary``, ``write``, ``initialize``, ``delete``
        for a whole request."""
        group_id: str = req["group_id"]
        results = []
        for topic in req.get("topics") or ():
            topic_id = bytes(topic["topic_id"])
            parts = []
            for p in topic["partitions"]:
                entry: Body = {"partition": p["partition"], "error_code": 0, "error_message": None}
                try:
                    entry.update(await getattr(self, f"_{api}")(group_id, topic_id, p))
                except KafkaError as exc:
                    entry.update(error_code=int(exc.code), error_message=str(exc))
                    if api == "read":
                        entry.update(state_epoch=-1, start_offset=-1, state_batches=[])
                    elif api == "read_summary":
                        entry.update(state_epoch=-1, leader_epoch=-1, start_offset=-1)
                parts.append(entry)
            results.append({"topic_id": topic_id, "partitions": parts})
        return {"results": results}

    async def _read(self, group_id: str, topic_id: bytes, p: Body) -> Body:
        index = self.partition_for(group_id, topic_id, p["partition"])
        state = self._loaded(index).get((group_id, topic_id, p["partition"]))
        if state is None:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "no state for this partition")
        return {
            "state_epoch": state.state_epoch,
            "start_offset": state.start_offset,
            "state_batches": state.state_batches,
        }

    async def _read_summary(self, group_id: str, topic_id: bytes, p: Body) -> Body:
        """ReadShareGroupStateSummary: the start offset alone, for describing a
        group's offsets; ``delivery_complete_count`` is not kept (-1, unknown)."""
        index = self.partition_for(group_id, topic_id, p["partition"])
        state = self._loaded(index).get((group_id, topic_id, p["partition"]))
        if state is None:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "no state for this partition")
        return {
            "state_epoch": state.state_epoch,
            "leader_epoch": state.leader_epoch,
            "start_offset": state.start_offset,
            "delivery_complete_count": -1,
        }

    async def _write(self, group_id: str, topic_id: bytes, p: Body) -> Body:
        key = (group_id, topic_id, p["partition"])
        index = self.partition_for(*key)
        current = self._loaded(index).get(key)
        if current is not None:
            if p["leader_epoch"] < current.leader_epoch:
                raise KafkaError(
                    ErrorCode.FENCED_LEADER_EPOCH,
                    f"leader epoch {p['leader_epoch']} < {current.leader_epoch}",
                )
            if p["state_epoch"] < current.state_epoch:
                raise KafkaError(
                    ErrorCode.FENCED_STATE_EPOCH,
                    f"state epoch {p['state_epoch']} < {current.state_epoch}",
                )
        await self._store(
            index,
            key,
            StoredState(
                p["state_epoch"],
                p["leader_epoch"],
                p["start_offset"],
                -1 if current is None else current.snapshot_epoch,
                0 if current is None else current.create_timestamp,
                list(p["state_batches"]),
            ),
        )
        return {}

    async def _initialize(self, group_id: str, topic_id: bytes, p: Body) -> Body:
        key = (group_id, topic_id, p["partition"])
        index = self.partition_for(*key)
        current = self._loaded(index).get(key)
        if current is not None and p["state_epoch"] < current.state_epoch:
            raise KafkaError(ErrorCode.FENCED_STATE_EPOCH, "an older state epoch")
        await self._store(
            index,
            key,
            StoredState(p["state_epoch"], -1, p["start_offset"], -1, 0, []),
        )
        return {}

    async def _delete(self, group_id: str, topic_id: bytes, p: Body) -> Body:
        key = (group_id, topic_id, p["partition"])
        index = self.partition_for(*key)
        states = self._loaded(index)
        encoded = ShareStateKey(SHARE_SNAPSHOT, *key).encode()
        await self.store.append(index, [(encoded, None)])
        states.pop(key, None)
        return {}

    async def _store(self, index: int, key: StateKey, state: StoredState) -> None:
        now = time.time_ns() // 1_000_000
        state.snapshot_epoch += 1
        if not state.create_timestamp:
            state.create_timestamp = now
        value = encode_share_state_value(
            SHARE_SNAPSHOT,
            {
                "snapshot_epoch": state.snapshot_epoch,
                "state_epoch": state.state_epoch,
                "leader_epoch": state.leader_epoch,
                "start_offset": state.start_offset,
                "create_timestamp": state.create_timestamp,
                "write_timestamp": now,
                "state_batches": state.state_batches,
            },
        )
        await self.store.append(index, [(ShareStateKey(SHARE_SNAPSHOT, *key).encode(), value)])
        self._loaded(index)[key] = state

    def summary(self, group_id: str) -> list[tuple[bytes, int, int]]:
        """(topic id, partition, start offset) of a group's share partitions stored here."""
        return sorted(
            (tid, p, s.start_offset)
            for states in self.states.values()
            for (g, tid, p), s in states.items()
            if g == group_id
        )


def _merge(batches: list[Body], update: list[Body]) -> list[Body]:
    """An update's batches replace the offsets they cover (a ShareUpdate on a snapshot)."""
    covered: dict[int, Body] = {}
    for batch in [*batches, *update]:
        for offset in range(batch["first_offset"], batch["last_offset"] + 1):
            covered[offset] = batch
    out: list[Body] = []
    for offset in sorted(covered):
        b = covered[offset]
        last = out[-1] if out else None
        if (
            last is not None
            and last["last_offset"] == offset - 1
            and last["delivery_state"] == b["delivery_state"]
            and last["delivery_count"] == b["delivery_count"]
        ):
            last["last_offset"] = offset
        else:
            out.append(
                {
                    "first_offset": offset,
                    "last_offset": offset,
                    "delivery_state": b["delivery_state"],
                    "delivery_count": b["delivery_count"],
                }
            )
    return out
