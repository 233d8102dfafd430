"""KIP-858 on the controller: replicas assigned to log dirs, a failed dir's
partitions moved off its broker, the broker's other partitions left alone."""

from __future__ import annotations

from typing import Any

from tests.controller.harness import Cluster

from samsa.errors import ErrorCode

DIR_A, DIR_B = b"\x01" * 16, b"\x02" * 16


def _assign(c: Cluster, broker: int, directory: bytes, topic: str, partitions: list[int]) -> Any:
    request = {
        "broker_id": broker,
        "broker_epoch": c.image.brokers[broker].epoch,
        "directories": [
            {
                "id": directory,
                "topics": [
                    {
                        "topic_id": c.topic_id(topic),
                        "partitions": [{"partition_index": p} for p in partitions],
                    }
                ],
            }
        ],
    }
    return c.run(c.controller.assign_replicas_to_dirs, request)


def _heartbeat_with_offline(c: Cluster, broker: int, dirs: list[bytes]) -> None:
    request = {
        "broker_id": broker,
        "broker_epoch": c.image.brokers[broker].epoch,
        "current_metadata_offset": c.image.last_offset,
        "want_fence": False,
        "want_shut_down": False,
        "offline_log_dirs": dirs,
    }
    c.run(c.controller.broker_heartbeat, request, c.now_ms)


def test_a_failed_dir_moves_only_its_partitions_off_the_broker() -> None:
    c = Cluster()
    c.start_brokers([1, 2, 3])
    c.create_topic("t", assignments=[[1, 2, 3], [1, 3, 2]])
    response = _assign(c, 1, DIR_A, "t", [0])
    assert response["directories"][0]["topics"][0]["partitions"] == [
        {"partition_index": 0, "error_code": 0}
    ]
    _assign(c, 1, DIR_B, "t", [1])
    assert c.partition("t", 0).directory_of(1) == DIR_A
    assert c.partition("t", 1).directory_of(1) == DIR_B
    assert c.partition("t", 0).directory_of(2) is None  # not assigned yet

    _heartbeat_with_offline(c, 1, [DIR_A])
    moved, kept = c.partition("t", 0), c.partition("t", 1)
    assert moved.leader in (2, 3) and 1 not in moved.isr
    assert kept.leader == 1 and 1 in kept.isr
    assert moved.directory_of(1) == DIR_A  # the assignment survives the change
    records = len(c.last_result.records)  # type: ignore[union-attr]
    _heartbeat_with_offline(c, 1, [DIR_A])  # told again: nothing more to do
    assert c.last_result.records == []  # type: ignore[union-attr]
    assert records == 1


def test_assignments_of_a_stale_epoch_or_a_foreign_replica_are_refused() -> None:
    c = Cluster()
    c.start_brokers([1, 2, 3, 4])
    c.create_topic("t", assignments=[[1, 2, 3]])
    assert _assign(c, 4, DIR_A, "t", [0])["directories"][0]["topics"][0]["partitions"][0][
        "error_code"
    ] == int(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    request = {"broker_id": 1, "broker_epoch": 12345, "directories": []}
    response = c.run(c.controller.assign_replicas_to_dirs, request)
    assert response["error_code"] == int(ErrorCode.STALE_BROKER_EPOCH)
