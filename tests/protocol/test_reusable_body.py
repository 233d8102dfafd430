"""A reusable answer is encoded once per slot, and afresh once a wrapper changed it."""

from __future__ import annotations

from typing import Any

from samsa.protocol.api import decode_response, encode_response
from samsa.protocol.reusable_body import EncodedSlot, ReusableBody

METADATA = 3
VERSION = 12


def _body(leader: int = 1) -> dict[str, Any]:
    return {
        "throttle_time_ms": 0,
        "brokers": [{"node_id": 1, "host": "h", "port": 9092, "rack": None}],
        "cluster_id": "c",
        "controller_id": 1,
        "topics": [
            {
                "error_code": 0,
                "name": "t",
                "topic_id": b"\x01" * 16,
                "is_internal": False,
                "partitions": [
                    {
                        "error_code": 0,
                        "partition_index": 0,
                        "leader_id": leader,
                        "leader_epoch": 0,
                        "replica_nodes": [1],
                        "isr_nodes": [1],
                        "offline_replicas": [],
                    }
                ],
                "topic_authorized_operations": -(2**31),
            }
        ],
    }


def _decoded(chunks: list[Any]) -> tuple[int, dict[str, Any]]:
    frame = b"".join(bytes(c) for c in chunks)
    return decode_response(METADATA, VERSION, memoryview(frame)[4:])


def test_answers_of_one_slot_share_the_encoding_and_keep_their_own_header() -> None:
    slot = EncodedSlot()
    first = encode_response(METADATA, VERSION, 7, ReusableBody(_body(), slot))
    assert slot.chunks is not None
    second = encode_response(METADATA, VERSION, 8, ReusableBody(_body(), slot))
    assert second[1:] == first[1:] and all(
        a is b for a, b in zip(second[1:], first[1:], strict=True)
    )
    assert _decoded(first) == (7, _decoded(second)[1]) and _decoded(second)[0] == 8
    assert _decoded(second)[1]["topics"][0]["partitions"][0]["leader_id"] == 1


def test_a_changed_answer_is_encoded_afresh_and_not_kept() -> None:
    slot = EncodedSlot()
    encode_response(METADATA, VERSION, 1, ReusableBody(_body(), slot))
    kept = slot.chunks
    throttled = ReusableBody(_body(), slot)
    throttled["throttle_time_ms"] = 250  # what client throttling does
    assert _decoded(encode_response(METADATA, VERSION, 2, throttled))[1]["throttle_time_ms"] == 250
    filtered = ReusableBody(_body(), slot)
    filtered["topics"] = []  # what the access guard does
    assert _decoded(encode_response(METADATA, VERSION, 3, filtered))[1]["topics"] == []
    assert slot.chunks is kept
    assert (
        _decoded(encode_response(METADATA, VERSION, 4, ReusableBody(_body(), slot)))[1][
            "throttle_time_ms"
        ]
        == 0
    )
