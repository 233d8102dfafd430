"""The failover bench's probe reads the leader ids the codec decodes."""

from __future__ import annotations

from bench.scale.leader_probe import _leader_ids
from hypothesis import given, settings
from hypothesis import strategies as st

from samsa.protocol.api import decode_response, encode_response


def _answer(leaders: list[int], replicas: int, rack: str | None) -> bytes:
    body = {
        "throttle_time_ms": 0,
        "brokers": [
            {"node_id": n, "host": f"host-{n}", "port": 9000 + n, "rack": rack} for n in (1, 2, 3)
        ],
        "cluster_id": "cluster",
        "controller_id": 1,
        "topics": [
            {
                "error_code": 0,
                "name": "idle",
                "topic_id": b"\x01" * 16,
                "is_internal": False,
                "partitions": [
                    {
                        "error_code": 0,
                        "partition_index": i,
                        "leader_id": leader,
                        "leader_epoch": 7,
                        "replica_nodes": list(range(replicas)),
                        "isr_nodes": list(range(replicas // 2)),
                        "offline_replicas": [],
                    }
                    for i, leader in enumerate(leaders)
                ],
                "topic_authorized_operations": -2147483648,
            }
        ],
    }
    return b"".join(bytes(chunk) for chunk in encode_response(3, 12, 9, body))[4:]


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.integers(-1, 2**31 - 1), max_size=300),
    st.sampled_from([0, 1, 3, 200]),
    st.sampled_from([None, "", "rack-a"]),
)
def test_the_probe_reads_the_leaders_the_codec_decodes(
    leaders: list[int], replicas: int, rack: str | None
) -> None:
    frame = _answer(leaders, replicas, rack)
    _, body = decode_response(3, 12, memoryview(frame))
    [topic] = body["topics"]
    assert [p["leader_id"] for p in topic["partitions"]] == leaders
    assert _leader_ids(frame, 5) == leaders
