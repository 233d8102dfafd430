"""Delegation tokens on the controller: Kafka's rules, the records, replay and snapshots."""

from __future__ import annotations

import base64
import hashlib
import hmac
import random
from typing import Any

import pytest

from samsa.controller.controller_config import ControllerConfig
from samsa.controller.image.metadata_image import MetadataImage
from samsa.controller.quorum_controller import QuorumController
from samsa.controller.security.delegation_token_control import DelegationTokenControl, new_token_id
from samsa.controller.snapshot_records import image_from_records, snapshot_records
from samsa.errors import ErrorCode
from samsa.protocol.metadata_records import (
    decode_metadata_record,
    encode_metadata_record,
    make_record,
)

SECRET = "the-secret"
DAY, WEEK = 86_400_000, 604_800_000
NOW = 1_700_000_000_000
ALICE, BOB, CAROL = "User:alice", "User:bob", "User:carol"


def control(image: MetadataImage, **config: Any) -> DelegationTokenControl:
    settings = {"delegation_token_secret_key": SECRET, **config}
    return DelegationTokenControl(image, ControllerConfig(**settings), random.Random(7))


def commit(image: MetadataImage, result: Any) -> dict[str, Any]:
    """Replay the result's records as every node would (through their bytes)."""
    for record in result.records:
        image.replay(decode_metadata_record(encode_metadata_record(record)))
    assert result.response is not None
    return dict(result.response)


def create(
    tokens: DelegationTokenControl,
    requester: str = ALICE,
    *,
    owner: tuple[str, str] | None = None,
    renewers: tuple[str, ...] = (),
    max_lifetime_ms: int = -1,
    now: int = NOW,
) -> dict[str, Any]:
    request = {
        "owner_principal_type": owner[0] if owner else None,
        "owner_principal_name": owner[1] if owner else None,
        "renewers": [
            {"principal_type": r.split(":")[0], "principal_name": r.split(":")[1]} for r in renewers
        ],
        "max_lifetime_ms": max_lifetime_ms,
    }
    return commit(tokens.image, tokens.create(request, requester, now))


def renew(tokens: DelegationTokenControl, mac: bytes, who: str, period: int, now: int) -> Any:
    answer = commit(tokens.image, tokens.renew({"hmac": mac, "renew_period_ms": period}, who, now))
    return answer["error_code"], answer["expiry_timestamp_ms"]


def expire(tokens: DelegationTokenControl, mac: bytes, who: str, period: int, now: int) -> Any:
    answer = commit(
        tokens.image, tokens.expire({"hmac": mac, "expiry_time_period_ms": period}, who, now)
    )
    return answer["error_code"], answer["expiry_timestamp_ms"]


def test_a_new_token_carries_kafkas_timestamps_and_an_hmac_of_its_id() -> None:
    image = MetadataImage()
    answer = create(control(image), renewers=(BOB,))
    assert answer["error_code"] == ErrorCode.NONE
    assert (answer["principal_type"], answer["principal_name"]) == ("User", "alice")
    assert answer["token_requester_principal_name"] == "alice"
    assert answer["issue_timestamp_ms"] == NOW
    assert answer["expiry_timestamp_ms"] == NOW + DAY
    assert answer["max_timestamp_ms"] == NOW + WEEK
    token_id = answer["token_id"]
    assert len(token_id) == 22 and not token_id.startswith("-")
    base64.urlsafe_b64decode(token_id + "==")  # a Kafka Uuid's text
    expected = hmac.new(SECRET.encode(), token_id.encode(), hashlib.sha512).digest()
    assert answer["hmac"] == expected
    token = image.delegation_tokens.get(token_id)
    assert token is not None
    assert (token.owner, token.requester, token.renewers) == (ALICE, ALICE, (BOB,))
    assert (token.issue_timestamp, token.expiry_timestamp) == (NOW, NOW + DAY)


def test_the_record_holds_no_secret() -> None:
    image = MetadataImage()
    tokens = control(image)
    result = tokens.create(
        {"renewers": [], "max_lifetime_ms": -1, "owner_principal_name": None}, ALICE, NOW
    )
    (record,) = result.records
    encoded = encode_metadata_record(record)
    assert result.response is not None
    assert result.response["hmac"] not in encoded and SECRET.encode() not in encoded
    assert record.name == "DelegationTokenRecord"


def test_tokens_disabled_without_a_secret_key() -> None:
    image = MetadataImage()
    tokens = control(image, delegation_token_secret_key=None)
    answer = create(tokens)
    assert answer["error_code"] == ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED
    assert (answer["token_id"], answer["hmac"]) == ("", b"")
    assert len(image.delegation_tokens) == 0
    assert renew(tokens, b"x", ALICE, 1, NOW) == (ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED, 0)
    assert expire(tokens, b"x", ALICE, 1, NOW) == (ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED, 0)


def test_the_master_key_is_the_old_name_of_the_secret_key() -> None:
    config = ControllerConfig.from_properties({"delegation.token.master.key": "old"})
    assert config.delegation_token_secret_key == "old"
    both = {"delegation.token.master.key": "old", "delegation.token.secret.key": "new"}
    assert ControllerConfig.from_properties(both).delegation_token_secret_key == "new"
    assert ControllerConfig.from_properties({}).delegation_token_secret_key is None


def test_lifetimes_take_the_shorter_of_the_request_and_the_settings() -> None:
    image = MetadataImage()
    tokens = control(image, delegation_token_expiry_time_ms=5000)
    short = create(tokens, max_lifetime_ms=3000)
    assert (short["expiry_timestamp_ms"], short["max_timestamp_ms"]) == (NOW + 3000, NOW + 3000)
    long = create(tokens, max_lifetime_ms=10 * WEEK)
    assert (long["expiry_timestamp_ms"], long["max_timestamp_ms"]) == (NOW + 5000, NOW + WEEK)


def test_an_owner_named_by_the_request_and_renewers_must_be_users() -> None:
    image = MetadataImage()
    tokens = control(image)
    answer = create(tokens, ALICE, owner=("User", "carol"))
    assert (answer["principal_name"], answer["token_requester_principal_name"]) == (
        "carol",
        "alice",
    )
    token = image.delegation_tokens.get(answer["token_id"])
    assert token is not None and (token.owner, token.requester) == (CAROL, ALICE)
    refused = create(tokens, renewers=("Group:ops",))
    assert refused["error_code"] == ErrorCode.INVALID_PRINCIPAL_TYPE
    assert refused["token_id"] == ""
    assert len(image.delegation_tokens) == 1


def test_renewal_by_owner_or_renewer_within_the_maximum() -> None:
    image = MetadataImage()
    tokens = control(image, delegation_token_max_lifetime_ms=10_000)
    answer = create(tokens, renewers=(BOB,))
    mac, token_id = answer["hmac"], answer["token_id"]
    assert answer["expiry_timestamp_ms"] == NOW + 10_000  # capped by the maximum
    assert renew(tokens, mac, BOB, 2000, NOW + 1000) == (ErrorCode.NONE, NOW + 3000)
    assert image.delegation_tokens.get(token_id).expiry_timestamp == NOW + 3000  # type: ignore[union-attr]
    assert renew(tokens, mac, ALICE, 60_000, NOW + 2000) == (ErrorCode.NONE, NOW + 10_000)
    # The default period applies to 0 or a negative one, still capped.
    assert renew(tokens, mac, ALICE, -1, NOW + 2000) == (ErrorCode.NONE, NOW + 10_000)


def test_renewal_refusals_in_kafkas_order() -> None:
    image = MetadataImage()
    tokens = control(image)
    answer = create(tokens, ALICE, owner=("User", "carol"), renewers=(BOB,))
    mac = answer["hmac"]
    assert renew(tokens, b"not-a-token", CAROL, 1, NOW) == (
        ErrorCode.DELEGATION_TOKEN_NOT_FOUND,
        0,
    )
    # The requester that is neither owner nor renewer may not renew.
    assert renew(tokens, mac, ALICE, 1, NOW) == (ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH, 0)
    assert renew(tokens, mac, "User:mallory", 1, NOW) == (
        ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH,
        0,
    )
    late = NOW + DAY + 1
    assert renew(tokens, mac, BOB, 1, late) == (ErrorCode.DELEGATION_TOKEN_EXPIRED, 0)


def test_expire_now_removes_and_later_moves_the_expiry() -> None:
    image = MetadataImage()
    tokens = control(image)
    first = create(tokens, renewers=(BOB,))
    second = create(tokens)
    assert expire(tokens, first["hmac"], BOB, 5000, NOW + 10) == (ErrorCode.NONE, NOW + 5010)
    assert image.delegation_tokens.get(first["token_id"]).expiry_timestamp == NOW + 5010  # type: ignore[union-attr]
    assert expire(tokens, first["hmac"], "User:mallory", -1, NOW) == (
        ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH,
        0,
    )
    assert expire(tokens, first["hmac"], ALICE, -1, NOW + 20) == (ErrorCode.NONE, NOW + 20)
    assert first["token_id"] not in image.delegation_tokens
    assert second["token_id"] in image.delegation_tokens
    assert expire(tokens, first["hmac"], ALICE, -1, NOW + 20) == (
        ErrorCode.DELEGATION_TOKEN_NOT_FOUND,
        0,
    )


def test_an_expired_token_can_only_be_expired_now_and_checks_differ_in_order() -> None:
    """Kafka 4.4: renewal checks the expiry before the renewer; expiry checks the
    renewer first, and an expiry now removes an expired token too."""
    image = MetadataImage()
    tokens = control(image)
    mac = create(tokens, max_lifetime_ms=1000)["hmac"]
    late = NOW + 2000
    assert renew(tokens, mac, "User:mallory", 1, late)[0] == ErrorCode.DELEGATION_TOKEN_EXPIRED
    assert expire(tokens, mac, "User:mallory", 1, late)[0] == (
        ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH
    )
    assert renew(tokens, mac, ALICE, 1, late)[0] == ErrorCode.DELEGATION_TOKEN_EXPIRED
    assert expire(tokens, mac, ALICE, 1000, late)[0] == ErrorCode.DELEGATION_TOKEN_EXPIRED
    assert expire(tokens, mac, ALICE, -1, late) == (ErrorCode.NONE, late)
    assert len(image.delegation_tokens) == 0


def test_timestamps_saturate_instead_of_overflowing() -> None:
    image = MetadataImage()
    tokens = control(
        image,
        delegation_token_max_lifetime_ms=2**63 - 1,
        delegation_token_expiry_time_ms=2**63 - 1,
    )
    answer = create(tokens)
    assert answer["max_timestamp_ms"] == answer["expiry_timestamp_ms"] == 2**63 - 1
    assert expire(tokens, answer["hmac"], ALICE, 2**63 - 1, NOW) == (ErrorCode.NONE, 2**63 - 1)


def test_a_big_sweep_goes_on_at_the_next_poll() -> None:
    image = MetadataImage()
    tokens = control(image, delegation_token_expiry_check_interval_ms=1000)
    for _ in range(1005):
        create(tokens, max_lifetime_ms=10)
    tokens.sweep(NOW)
    first = tokens.sweep(NOW + 1000)
    assert len(first) == 1000
    image.replay_all(first)
    rest = tokens.sweep(NOW + 1001)
    assert len(rest) == 5
    image.replay_all(rest)
    assert tokens.sweep(NOW + 1002) == []


def test_the_sweep_removes_expired_tokens_once_per_interval() -> None:
    image = MetadataImage()
    tokens = control(image, delegation_token_expiry_check_interval_ms=1000)
    short = create(tokens, max_lifetime_ms=500)
    kept = create(tokens)
    assert tokens.sweep(NOW) == []  # the first call schedules the first sweep
    assert tokens.sweep(NOW + 999) == []
    records = tokens.sweep(NOW + 1000)
    assert [r.body["token_id"] for r in records] == [short["token_id"]]
    for record in records:
        image.replay(record)
    assert [t.token_id for t in image.delegation_tokens] == [kept["token_id"]]
    assert tokens.sweep(NOW + 1500) == []  # not before the next interval


def test_the_sweep_runs_from_the_controllers_poll_by_the_wall_clock() -> None:
    image = MetadataImage()
    config = ControllerConfig(
        delegation_token_secret_key=SECRET, delegation_token_expiry_check_interval_ms=100
    )
    controller = QuorumController(image, config, random.Random(1))
    request = {"renewers": [], "max_lifetime_ms": 50, "owner_principal_name": None}
    commit(image, controller.create_delegation_token(request, ALICE, NOW))
    assert controller.poll(0, NOW).records == []
    assert controller.poll(0).records == []  # no wall clock, no sweep
    (removal,) = controller.poll(0, NOW + 100).records
    assert removal.name == "RemoveDelegationTokenRecord"


def test_tokens_survive_a_snapshot_and_a_removal_of_nothing_is_ignored() -> None:
    image = MetadataImage()
    tokens = control(image)
    create(tokens, renewers=(BOB, CAROL))
    create(tokens, ALICE, owner=("User", "carol"))
    rebuilt = image_from_records(
        [decode_metadata_record(encode_metadata_record(r)) for r in snapshot_records(image)]
    )
    assert rebuilt == image
    assert rebuilt.delegation_tokens == image.delegation_tokens
    before = list(image.delegation_tokens)
    image.replay(make_record("RemoveDelegationTokenRecord", token_id="unknown"))
    assert list(image.delegation_tokens) == before


@pytest.mark.parametrize("seed", range(20))
def test_token_ids_are_kafka_uuids_and_never_reused(seed: int) -> None:
    rng = random.Random(seed)
    taken = {new_token_id(random.Random(seed), set())}
    again = new_token_id(rng, taken)
    assert again not in taken
    assert len(again) == 22 and not again.startswith("-")
