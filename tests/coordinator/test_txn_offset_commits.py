"""TxnOffsetCommit against live groups, as Kafka's validateTransactionalOffsetCommit
checks it (issue 36, bugs 1 and 2): socket-free, through the wire codec.

- classic group with members: a commit naming no member (v0-2 have no member
  fields; aiokafka sends them) is accepted, one naming a member is checked;
- KIP-848 group: the member id and epoch are checked as OffsetCommit checks them,
  a stale epoch answered ILLEGAL_GENERATION (the API has no STALE_MEMBER_EPOCH).
"""

from __future__ import annotations

from typing import Any

from samsa.errors import ErrorCode
from samsa.protocol.api import decode_message, encode_message

from .helpers import Client, Cluster, async_test, fetch_v8, offsets_of
from .test_consumer_groups import Groups

TXN_OFFSET_COMMIT = 28


async def txn_commit(
    coordinator: Any,
    version: int,
    *,
    group: str = "g",
    member_id: str = "",
    generation: int = -1,
    instance_id: str | None = None,
    offset: int = 7,
) -> int:
    """One TxnOffsetCommit of ``t-0``; its error code, and the pending offset applied
    at once (as the transaction's COMMIT marker would) when it was accepted."""
    body = {
        "transactional_id": "tx",
        "group_id": group,
        "producer_id": 1000,
        "producer_epoch": 0,
        "generation_id": generation,
        "member_id": member_id,
        "group_instance_id": instance_id,
        "topics": [
            {"name": "t", "partitions": [{"partition_index": 0, "committed_offset": offset}]}
        ],
    }
    key = TXN_OFFSET_COMMIT
    request = decode_message(key, version, encode_message(key, version, body, True), True)
    response = await coordinator.txn_offset_commit(request, version)
    wire = decode_message(key, version, encode_message(key, version, response, False), False)
    error = int(wire["topics"][0]["partitions"][0]["error_code"])
    if error == 0:
        coordinator.complete_transaction(coordinator.partition_for(group), 1000, True)
    return error


@async_test
async def test_classic_group_with_members_accepts_a_commit_that_names_no_member() -> None:
    cluster = await Cluster().start()
    member = Client(cluster, "g", "a")
    await member.join_and_sync()
    c = cluster.coordinator
    assert await txn_commit(c, 0, offset=5) == ErrorCode.NONE  # aiokafka's v0
    assert await txn_commit(c, 3, offset=6) == ErrorCode.NONE  # v3, fields left unset
    # Naming a member still means being one, at the group's generation.
    assert await txn_commit(c, 3, member_id="ghost", generation=1) == ErrorCode.UNKNOWN_MEMBER_ID
    assert (
        await txn_commit(c, 3, member_id=member.member_id, generation=member.generation + 1)
        == ErrorCode.ILLEGAL_GENERATION
    )
    assert (
        await txn_commit(c, 3, member_id=member.member_id, generation=member.generation, offset=9)
        == ErrorCode.NONE
    )
    fetched = await fetch_v8(cluster, "g", [{"name": "t", "partition_indexes": [0]}])
    assert offsets_of(fetched["topics"]) == {("t", 0): 9}
    # A plain OffsetCommit naming no member is still refused while the group has members.
    assert await member.commit({("t", 0): 1}, generation=-1, member_id="") == {
        ("t", 0): ErrorCode.UNKNOWN_MEMBER_ID
    }


@async_test
async def test_kip848_member_commits_transactionally_at_its_epoch() -> None:
    groups = await Groups().start()
    joined = await groups.join("m1")
    epoch = joined["member_epoch"]
    c = groups.coordinator
    assert await txn_commit(c, 3, member_id="m1", generation=epoch, offset=11) == ErrorCode.NONE
    assert (
        await txn_commit(c, 3, member_id="m1", generation=epoch + 1) == ErrorCode.ILLEGAL_GENERATION
    )
    assert (
        await txn_commit(c, 3, member_id="m1", generation=epoch - 1) == ErrorCode.ILLEGAL_GENERATION
    )
    assert await txn_commit(c, 3, member_id="m9", generation=epoch) == ErrorCode.UNKNOWN_MEMBER_ID
    assert await txn_commit(c, 0, offset=12) == ErrorCode.NONE  # names no member
    answer = await groups.call(
        9,
        9,
        {"groups": [{"group_id": "g", "member_id": "m1", "member_epoch": epoch, "topics": None}]},
    )
    partitions = answer["groups"][0]["topics"][0]["partitions"]
    assert [(p["partition_index"], p["committed_offset"]) for p in partitions] == [(0, 12)]
