"""Consumer protocol subscription/assignment bytes, checked against kafka-python."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from samsa.errors import DecodeError
from samsa.protocol.consumer_protocol import (
    Assignment,
    Subscription,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)

kp_meta = pytest.importorskip("kafka.protocol.consumer.metadata")
kp_old = pytest.importorskip("kafka.protocol.old.consumer_protocol")
KpSubscription = kp_meta.ConsumerProtocolSubscription
KpAssignment = kp_meta.ConsumerProtocolAssignment


@pytest.mark.parametrize("version", range(4))
def test_subscription_round_trips_the_fields_of_its_version(version: int) -> None:
    data = encode_subscription(
        ["orders", "audit"],
        user_data=b"\x00\x01",
        owned_partitions={"orders": [0, 2]},
        generation_id=12,
        rack_id="eu-west-1a",
        version=version,
    )
    assert decode_subscription(data) == Subscription(
        topics=("orders", "audit"),
        user_data=b"\x00\x01",
        owned_partitions={"orders": (0, 2)} if version >= 1 else {},
        generation_id=12 if version >= 2 else -1,
        rack_id="eu-west-1a" if version >= 3 else None,
        version=version,
    )


@pytest.mark.parametrize("version", range(4))
def test_subscription_bytes_match_kafka_python(version: int) -> None:
    ours = encode_subscription(
        ["orders"], None, {"orders": [1]}, generation_id=3, rack_id=None, version=version
    )
    theirs = KpSubscription(
        topics=["orders"],
        user_data=None,
        owned_partitions=[KpSubscription.TopicPartition(topic="orders", partitions=[1])],
        generation_id=3,
        rack_id=None,
    )
    assert ours == bytes(theirs.encode(version=version))
    assert KpSubscription.decode(ours).topics == ["orders"]


@pytest.mark.parametrize("version", range(4))
def test_assignment_bytes_match_kafka_python(version: int) -> None:
    ours = encode_assignment({"orders": [0, 1], "audit": [3]}, b"sticky", version=version)
    theirs = KpAssignment(
        assigned_partitions=[
            KpAssignment.TopicPartition(topic="orders", partitions=[0, 1]),
            KpAssignment.TopicPartition(topic="audit", partitions=[3]),
        ],
        user_data=b"sticky",
    )
    assert ours == bytes(theirs.encode(version=version))
    assert decode_assignment(ours) == Assignment(
        {"orders": (0, 1), "audit": (3,)}, b"sticky", version=version
    )


def test_v0_matches_kafka_python_hand_written_structs() -> None:
    """kafka-python 2.x and aiokafka still speak these v0 layouts."""
    sub = kp_old.ConsumerProtocolMemberMetadata_v0(0, ["orders", "audit"], b"")
    assert encode_subscription(["orders", "audit"], b"", version=0) == sub.encode()
    assign = kp_old.ConsumerProtocolMemberAssignment_v0(0, [("orders", [0, 1])], b"")
    assert decode_assignment(assign.encode()) == Assignment({"orders": (0, 1)}, b"", version=0)


def test_newer_versions_are_read_with_the_newest_known_layout() -> None:
    """Kafka only appends fields, so a v9 peer's bytes start with our v3 layout."""
    v3 = encode_subscription(["orders"], owned_partitions={"orders": [4]}, rack_id="r1")
    future = struct.pack(">h", 9) + v3[2:] + b"\x00\x00\x00\x2afuture-field"
    decoded = decode_subscription(future)
    assert decoded.version == 9
    assert (decoded.topics, decoded.rack_id) == (("orders",), "r1")
    assert decoded.owned_partitions == {"orders": (4,)}
    future_assignment = struct.pack(">h", 7) + encode_assignment({"t": [1]})[2:] + b"extra"
    assert decode_assignment(future_assignment).partitions == {"t": (1,)}


def test_empty_assignment_bytes_mean_nothing_assigned() -> None:
    assert decode_assignment(b"") == Assignment()
    assert decode_assignment(b"").partitions == {}


@pytest.mark.parametrize("data", [b"\x00", b"\xff\xff", b"\x00\x01\x00\x00\x00\x05\x00"])
def test_malformed_bytes_raise_decode_error(data: bytes) -> None:
    with pytest.raises(DecodeError):
        decode_subscription(data)


def test_unknown_version_cannot_be_encoded() -> None:
    with pytest.raises(ValueError):
        encode_assignment({}, version=4)


@given(
    topics=st.lists(st.text(max_size=20), max_size=5),
    owned=st.dictionaries(st.text(max_size=10), st.lists(st.integers(0, 2**31 - 1), max_size=4)),
    user_data=st.none() | st.binary(max_size=30),
    generation_id=st.integers(-(2**31), 2**31 - 1),
    rack_id=st.none() | st.text(max_size=10),
)
def test_any_subscription_round_trips(
    topics: list[str],
    owned: dict[str, list[int]],
    user_data: bytes | None,
    generation_id: int,
    rack_id: str | None,
) -> None:
    data = encode_subscription(topics, user_data, owned, generation_id, rack_id)
    assert decode_subscription(data) == Subscription(
        tuple(topics),
        user_data,
        {t: tuple(p) for t, p in owned.items()},
        generation_id,
        rack_id,
    )
