"""SCRAM credentials in the metadata log: the controller's checks, replay, snapshots."""

from __future__ import annotations

from typing import Any

import pytest

from samsa.controller.image.metadata_image import MetadataImage, MetadataReplayError
from samsa.controller.security.scram_control import ScramControl
from samsa.controller.snapshot_records import image_from_records, snapshot_records
from samsa.errors import ErrorCode
from samsa.protocol.metadata_records import (
    decode_metadata_record,
    encode_metadata_record,
    make_record,
)
from samsa.protocol.sasl.scram import ScramClient, make_credential, salted_password
from samsa.security.sasl.scram_server import ScramServer

SHA256, SHA512 = 1, 2


def upsert(name: str, mechanism: int = SHA512, iterations: int = 4096, pw: str = "pw") -> Any:
    salt = b"salt-" + name.encode()
    hash_name = "SCRAM-SHA-512" if mechanism == SHA512 else "SCRAM-SHA-256"
    salted = salted_password(hash_name, pw, salt, iterations) if mechanism in (1, 2) else b"x" * 32
    return {
        "name": name,
        "mechanism": mechanism,
        "iterations": iterations,
        "salt": salt,
        "salted_password": salted,
    }


def alter(image: MetadataImage, deletions: list[Any] = [], upsertions: list[Any] = []) -> Any:  # noqa: B006
    result = ScramControl(image).alter_credentials(
        {"deletions": deletions, "upsertions": upsertions}
    )
    for record in result.records:
        image.replay(decode_metadata_record(encode_metadata_record(record)))
    assert result.response is not None
    return {r["user"]: (r["error_code"], r["error_message"]) for r in result.response["results"]}


def test_an_upserted_credential_logs_in_and_holds_no_password() -> None:
    image = MetadataImage()
    assert alter(image, upsertions=[upsert("alice", pw="alice-secret")]) == {
        "alice": (ErrorCode.NONE, None)
    }
    credential = image.scram.get("alice", "SCRAM-SHA-512")
    assert credential is not None and credential.iterations == 4096
    assert b"alice-secret" not in repr(credential).encode()
    # The stored keys are the ones a SCRAM exchange checks the client's proof against.
    client = ScramClient("SCRAM-SHA-512", "alice", "alice-secret")
    server = ScramServer("SCRAM-SHA-512", image.scram.get)
    final = server.evaluate(client.final_message(server.evaluate(client.first_message())))
    client.check_server_final(final)
    assert server.complete and server.authorization_id == "alice"


def test_each_user_is_checked_alone_with_kafkas_errors() -> None:
    image = MetadataImage()
    results = alter(
        image,
        deletions=[{"name": "ghost", "mechanism": SHA256}, {"name": "", "mechanism": SHA256}],
        upsertions=[
            upsert("few", iterations=4095),
            upsert("many", iterations=16385),
            upsert("odd", mechanism=3),
            upsert("twice", SHA256),
            upsert("twice", SHA512),
            upsert("ok", SHA256),
        ],
    )
    assert results == {
        "ghost": (
            ErrorCode.RESOURCE_NOT_FOUND,
            "Attempt to delete a user credential that does not exist",
        ),
        "": (ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"),
        "few": (ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations"),
        "many": (ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations"),
        "odd": (ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"),
        "twice": (
            ErrorCode.DUPLICATE_RESOURCE,
            "A user credential cannot be altered twice in the same request",
        ),
        "ok": (ErrorCode.NONE, None),
    }
    assert image.scram.users() == ["ok"]


def test_delete_removes_one_mechanism_and_a_second_delete_is_not_found() -> None:
    image = MetadataImage()
    alter(image, upsertions=[upsert("bob", SHA256)])
    alter(image, upsertions=[upsert("bob", SHA512)])
    assert [m for m, _ in image.scram.mechanisms_of("bob")] == ["SCRAM-SHA-256", "SCRAM-SHA-512"]
    assert alter(image, deletions=[{"name": "bob", "mechanism": SHA256}]) == {
        "bob": (ErrorCode.NONE, None)
    }
    assert image.scram.get("bob", "SCRAM-SHA-256") is None
    assert image.scram.get("bob", "SCRAM-SHA-512") is not None
    again = alter(image, deletions=[{"name": "bob", "mechanism": SHA256}])
    assert again["bob"][0] == ErrorCode.RESOURCE_NOT_FOUND


def test_removing_a_missing_credential_stops_replay() -> None:
    image = MetadataImage()
    with pytest.raises(MetadataReplayError, match="no such credential"):
        image.replay(make_record("RemoveUserScramCredentialRecord", name="x", mechanism=SHA256))
    with pytest.raises(MetadataReplayError, match="unknown SCRAM mechanism"):
        image.replay(
            make_record(
                "UserScramCredentialRecord",
                name="x",
                mechanism=9,
                salt=b"s",
                stored_key=b"k",
                server_key=b"k",
                iterations=4096,
            )
        )


def test_snapshot_keeps_credentials() -> None:
    image = MetadataImage()
    alter(image, upsertions=[upsert("alice", SHA256)])
    alter(image, upsertions=[upsert("alice", SHA512, iterations=8192)])
    rebuilt = image_from_records(snapshot_records(image))
    assert rebuilt == image
    assert rebuilt.scram.get("alice", "SCRAM-SHA-512").iterations == 8192  # type: ignore[union-attr]
    assert image != MetadataImage()


def test_seed_writes_only_what_the_image_lacks() -> None:
    image = MetadataImage()
    control = ScramControl(image)
    seeds = [("admin", "SCRAM-SHA-256", "admin-secret", 4096)]
    records = control.seed_records(seeds)
    assert [r.name for r in records] == ["UserScramCredentialRecord"]
    image.replay_all(records)
    assert control.seed_records(seeds) == []
    stored = image.scram.get("admin", "SCRAM-SHA-256")
    assert stored is not None
    expected = make_credential("SCRAM-SHA-256", "admin-secret", salt=stored.salt)
    assert stored == expected
