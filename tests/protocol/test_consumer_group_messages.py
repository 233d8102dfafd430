"""ConsumerGroupHeartbeat/Describe bytes, in particular Kafka's nullable struct marker."""

from __future__ import annotations

from samsa.protocol.api import decode_message, encode_message

T = bytes(range(16))
BASE = {
    "throttle_time_ms": 0,
    "error_code": 0,
    "error_message": None,
    "member_id": "m",
    "member_epoch": 3,
    "heartbeat_interval_ms": 5000,
}
# throttle, error, null message, "m", epoch, interval (flexible v1)
PREFIX = bytes.fromhex("00000000000000026d0000000300001388")


def test_null_assignment_is_a_minus_one_byte() -> None:
    data = encode_message(68, 1, {**BASE, "assignment": None}, False)
    assert bytes(data) == PREFIX + b"\xff" + b"\x00"
    assert decode_message(68, 1, data, False)["assignment"] is None


def test_present_assignment_is_marked_with_one() -> None:
    body = {**BASE, "assignment": {"topic_partitions": [{"topic_id": T, "partitions": [4]}]}}
    data = encode_message(68, 1, body, False)
    expected = b"\x01" + b"\x02" + T + b"\x02" + b"\x00\x00\x00\x04" + b"\x00" + b"\x00" + b"\x00"
    assert bytes(data) == PREFIX + expected
    assert decode_message(68, 1, data, False)["assignment"] == body["assignment"]


def test_request_v0_has_no_regex_and_v1_does() -> None:
    body = {
        "group_id": "g",
        "member_id": "m",
        "member_epoch": 0,
        "rebalance_timeout_ms": 1000,
        "subscribed_topic_names": ["t"],
        "subscribed_topic_regex": "t.*",
        "topic_partitions": [],
    }
    v0 = decode_message(68, 0, encode_message(68, 0, body, True), True)
    v1 = decode_message(68, 1, encode_message(68, 1, body, True), True)
    assert v0["subscribed_topic_regex"] is None
    assert v1["subscribed_topic_regex"] == "t.*"
