"""Committed offsets on the wire: OffsetCommit, TxnOffsetCommit, OffsetFetch and
OffsetDelete, dicts in and out.

A mixin of the GroupCoordinator façade (coordinator.py), apart from the
classic group APIs (classic_apis): each method maps one request version onto
the plain values of ``offsets`` and ``txn_offsets``, and lets a KIP-848
consumer group check its members' epochs first.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from samsa.coordinator.consumer.admin import ConsumerGroupAdmin
from samsa.coordinator.offsets import OffsetManager, OffsetToCommit
from samsa.coordinator.registry import GroupRegistry
from samsa.coordinator.streams import StreamsGroupAdmin
from samsa.coordinator.txn_offsets import TxnOffsets
from samsa.errors import ErrorCode

Body = dict[str, Any]


def _partition_errors(
    topics: Iterable[Body], results: Mapping[tuple[str, int], ErrorCode]
) -> list[Body]:
    """Echo the request's topics and partitions, each with its error code."""
    return [
        {
            "name": t["name"],
            "partitions": [
                {
                    "partition_index": p["partition_index"],
                    "error_code": int(results[(t["name"], p["partition_index"])]),
                }
                for p in t.get("partitions") or ()
            ],
        }
        for t in topics
    ]


class OffsetApis:
    """OffsetCommit, TxnOffsetCommit, OffsetFetch and OffsetDelete."""

    registry: GroupRegistry
    offsets: OffsetManager
    txn_offsets: TxnOffsets
    consumer_admin: ConsumerGroupAdmin
    streams_admin: StreamsGroupAdmin

    async def offset_commit(self, request: Body, version: int) -> Body:
        """OffsetCommit (8): durable once answered; errors per partition."""
        topics = request.get("topics") or ()
        offsets = [
            OffsetToCommit(
                t["name"],
                p["partition_index"],
                p["committed_offset"],
                p.get("committed_leader_epoch", -1) if version >= 6 else -1,
                p.get("committed_metadata"),
            )
            for t in topics
            for p in t.get("partitions") or ()
        ]
        retention = request.get("retention_time_ms", -1) if 2 <= version <= 4 else -1
        generation = request.get("generation_id_or_member_epoch", -1)
        member_id = request.get("member_id") or ""
        instance_id = request.get("group_instance_id") if version >= 7 else None
        streams_check = self.streams_admin.check_commit(
            request["group_id"],
            member_id,
            generation,
            instance_id,
            [(o.topic, o.partition) for o in offsets],
            transactional=False,
            version=version,
        )
        if streams_check is not None:
            return await self._streams_commit(request, topics, offsets, streams_check, retention)
        consumer_check = self.consumer_admin.check_commit(
            request["group_id"], member_id, generation
        )
        if consumer_check is not None and consumer_check is not ErrorCode.NONE:
            failed = {(o.topic, o.partition): consumer_check for o in offsets}
            return {"throttle_time_ms": 0, "topics": _partition_errors(topics, failed)}
        if consumer_check is not None:
            # Checked against member epochs: stored as a standalone commit would be.
            generation, member_id, instance_id = -1, "", None
        results = await self.offsets.commit(
            request["group_id"],
            generation,
            member_id,
            instance_id,
            retention if retention is not None else -1,
            offsets,
        )
        return {
            "throttle_time_ms": 0,
            "topics": _partition_errors(topics, results),
        }

    async def _streams_commit(
        self,
        request: Body,
        topics: Iterable[Body],
        offsets: list[OffsetToCommit],
        verdicts: Mapping[tuple[str, int], ErrorCode],
        retention: int | None,
    ) -> Body:
        """A streams group's commit: the partitions its member may commit (by member
        epoch, or by task assignment epoch for an older one) are stored as a
        standalone commit would be; the others get their error."""
        allowed = [o for o in offsets if verdicts[(o.topic, o.partition)] is ErrorCode.NONE]
        results = dict(verdicts)
        if allowed:
            results.update(
                await self.offsets.commit(
                    request["group_id"],
                    -1,
                    "",
                    None,
                    retention if retention is not None else -1,
                    allowed,
                )
            )
        return {"throttle_time_ms": 0, "topics": _partition_errors(topics, results)}

    async def txn_offset_commit(self, request: Body, version: int) -> Body:
        """TxnOffsetCommit (28): offsets the group sees once the transaction commits.

        A KIP-848 group checks the member's epoch first, as OffsetCommit does; the
        API has no STALE_MEMBER_EPOCH, so a stale one is ILLEGAL_GENERATION (Kafka's
        validateTransactionalOffsetCommit)."""
        topics = request.get("topics") or ()
        group_id = request["group_id"]
        offsets = [
            OffsetToCommit(
                t["name"],
                p["partition_index"],
                p["committed_offset"],
                p.get("committed_leader_epoch", -1),
                p.get("committed_metadata"),
            )
            for t in topics
            for p in t.get("partitions") or ()
        ]
        generation = request.get("generation_id", -1)
        member_id = request.get("member_id") or ""
        instance_id = request.get("group_instance_id")
        error = self.registry.check(group_id, allow_empty=True)
        streams_check = None
        if error is None:
            streams_check = self.streams_admin.check_commit(
                group_id,
                member_id,
                generation,
                instance_id,
                [(o.topic, o.partition) for o in offsets],
                transactional=True,
                version=version,
            )
        if error is None and streams_check is None:
            error = self.consumer_admin.check_commit(
                group_id, member_id, generation, instance_id, transactional=True
            )
            if error is ErrorCode.STALE_MEMBER_EPOCH:
                error = ErrorCode.ILLEGAL_GENERATION
            elif error is ErrorCode.NONE:
                # Checked against member epochs: stored as a standalone commit would be.
                error, generation, member_id, instance_id = None, -1, "", None
        if error is not None:
            results = {(o.topic, o.partition): error for o in offsets}
        elif streams_check is not None:
            # Checked against the streams member (by member epoch, or by task
            # assignment epoch for an older one): stored as a standalone commit would be.
            allowed = [
                o for o in offsets if streams_check[(o.topic, o.partition)] is ErrorCode.NONE
            ]
            results = dict(streams_check)
            if allowed:
                results.update(
                    await self.txn_offsets.commit(
                        group_id,
                        request["producer_id"],
                        request["producer_epoch"],
                        -1,
                        "",
                        None,
                        allowed,
                    )
                )
        else:
            results = await self.txn_offsets.commit(
                group_id,
                request["producer_id"],
                request["producer_epoch"],
                generation,
                member_id,
                instance_id,
                offsets,
            )
        return {
            "throttle_time_ms": 0,
            "topics": _partition_errors(topics, results),
        }

    def complete_transaction(self, partition: int, producer_id: int, commit: bool) -> int:
        """A COMMIT/ABORT marker reached ``__consumer_offsets-partition``."""
        return self.txn_offsets.complete(partition, producer_id, commit)

    async def offset_fetch(self, request: Body, version: int) -> Body:
        """OffsetFetch (9): v1-7 one group, v8+ many; null topics mean every committed partition."""
        if version >= 8:
            return {
                "throttle_time_ms": 0,
                "groups": [
                    self._fetch_member_group(g, version) for g in request.get("groups") or ()
                ],
            }
        single = self._fetch_group(request["group_id"], request.get("topics"), version)
        return {
            "throttle_time_ms": 0,
            "topics": single["topics"],
            "error_code": single["error_code"],
        }

    def _fetch_member_group(self, group: Body, version: int) -> Body:
        """One group of OffsetFetch v8+; v9 members of consumer groups prove their epoch."""
        error = self.consumer_admin.check_fetch(
            group["group_id"], group.get("member_id"), group.get("member_epoch", -1)
        )
        if error is ErrorCode.NONE:
            error = self.streams_admin.check_fetch(
                group["group_id"], group.get("member_id"), group.get("member_epoch", -1)
            )
        if error is not ErrorCode.NONE:
            return {"group_id": group["group_id"], "topics": [], "error_code": int(error)}
        return self._fetch_group(group["group_id"], group.get("topics"), version)

    def _fetch_group(self, group_id: str, topics: list[Body] | None, version: int) -> Body:
        wanted = (
            None
            if topics is None
            else [(t["name"], p) for t in topics for p in t.get("partition_indexes") or ()]
        )
        error, fetched = self.offsets.fetch(group_id, wanted)
        if error is not ErrorCode.NONE and version < 2:
            # v1 has no group-level error: report it on every requested partition.
            by_topic_err: dict[str, list[Body]] = {}
            for t, p in wanted or ():
                by_topic_err.setdefault(t, []).append(
                    {
                        "partition_index": p,
                        "committed_offset": -1,
                        "committed_leader_epoch": -1,
                        "metadata": "",
                        "error_code": int(error),
                    }
                )
            return {
                "group_id": group_id,
                "topics": [{"name": t, "partitions": ps} for t, ps in by_topic_err.items()],
                "error_code": int(error),
            }
        by_topic: dict[str, list[Body]] = {}
        for f in fetched:
            by_topic.setdefault(f.topic, []).append(
                {
                    "partition_index": f.partition,
                    "committed_offset": f.offset,
                    "committed_leader_epoch": f.leader_epoch,
                    "metadata": f.metadata,
                    "error_code": int(f.error),
                }
            )
        return {
            "group_id": group_id,
            "topics": [{"name": t, "partitions": ps} for t, ps in by_topic.items()],
            "error_code": int(error),
        }

    async def offset_delete(self, request: Body, version: int) -> Body:
        """OffsetDelete (47): remove offsets of topics the group no longer consumes."""
        topics = request.get("topics") or ()
        wanted = [
            (t["name"], p["partition_index"]) for t in topics for p in t.get("partitions") or ()
        ]
        # A consumer group's members still read their topics: those offsets stay.
        subscribed = self.consumer_admin.subscribed_topics(
            request["group_id"]
        ) | self.streams_admin.subscribed_topics(request["group_id"])
        refused = {tp: ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC for tp in wanted if tp[0] in subscribed}
        wanted = [tp for tp in wanted if tp not in refused]
        error, results = await self.offsets.delete(request["group_id"], wanted)
        if error is not ErrorCode.NONE:
            return {"error_code": int(error), "throttle_time_ms": 0, "topics": []}
        results.update(refused)
        return {
            "error_code": 0,
            "throttle_time_ms": 0,
            "topics": _partition_errors(topics, results),
        }
