"""AlterUserScramCredentials on the controller (Kafka's ScramControlManager).

Changes are collected per user name, as Kafka's controller collects them: a
second change of the same user in one request (even for the other mechanism,
which is why ``kafka-configs`` with both mechanisms at once is refused by
Kafka too) makes that user DUPLICATE_RESOURCE.  Each user is validated alone:
an empty name is UNACCEPTABLE_CREDENTIAL, an unknown mechanism
UNSUPPORTED_SASL_MECHANISM, iterations outside 4096..16384 UNACCEPTABLE_CREDENTIAL,
the deletion of a credential that does not exist RESOURCE_NOT_FOUND.  The
accepted users' records are written together; the others get their error.

The client sends the salted password; the record keeps only the stored and
server keys derived from it.  ``seed_records`` is the start-time counterpart
of ``kafka-storage format --add-scram``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from samsa.controller.controller_result import ControllerResult
from samsa.controller.image.metadata_image import MetadataImage
from samsa.errors import ErrorCode
from samsa.protocol.metadata_records import MetadataRecord, make_record
from samsa.protocol.sasl.scram import (
    MAX_ITERATIONS,
    MECHANISM_NAMES,
    MECHANISM_TYPES,
    MECHANISMS,
    ScramCredential,
    credential_from_salted,
    make_credential,
)

_TWICE = "A user credential cannot be altered twice in the same request"
Error = tuple[ErrorCode, str]


class ScramControl:
    def __init__(self, image: MetadataImage) -> None:
        self.image = image

    def alter_credentials(self, request: Mapping[str, Any]) -> ControllerResult:
        deletions: dict[str, Mapping[str, Any]] = {}
        upsertions: dict[str, Mapping[str, Any]] = {}
        errors: dict[str, Error] = {}
        for deletion in request.get("deletions", []):
            name = deletion["name"]
            if name in errors:
                continue
            if deletions.pop(name, None) is not None:
                errors[name] = (ErrorCode.DUPLICATE_RESOURCE, _TWICE)
            elif (error := self._check_deletion(deletion)) is not None:
                errors[name] = error
            else:
                deletions[name] = deletion
        for upsertion in request.get("upsertions", []):
            name = upsertion["name"]
            if name in errors:
                continue
            if deletions.pop(name, None) is not None or upsertions.pop(name, None) is not None:
                errors[name] = (ErrorCode.DUPLICATE_RESOURCE, _TWICE)
            elif (error := _check_upsertion(upsertion)) is not None:
                errors[name] = error
            else:
                upsertions[name] = upsertion
        records: list[MetadataRecord] = []
        results: list[dict[str, Any]] = []
        for name, deletion in deletions.items():
            records.append(
                make_record(
                    "RemoveUserScramCredentialRecord", name=name, mechanism=deletion["mechanism"]
                )
            )
            results.append(_result(name))
        for name, upsertion in upsertions.items():
            mechanism = MECHANISM_NAMES[upsertion["mechanism"]]
            credential = credential_from_salted(
                mechanism,
                bytes(upsertion["salt"]),
                bytes(upsertion["salted_password"]),
                upsertion["iterations"],
            )
            records.append(credential_record(name, mechanism, credential))
            results.append(_result(name))
        results.extend(_result(name, error) for name, error in errors.items())
        return ControllerResult(records, {"throttle_time_ms": 0, "results": results})

    def _check_deletion(self, deletion: Mapping[str, Any]) -> Error | None:
        error = _check_name_and_mechanism(deletion)
        if error is not None:
            return error
        if self.image.scram.get(deletion["name"], MECHANISM_NAMES[deletion["mechanism"]]) is None:
            return (
                ErrorCode.RESOURCE_NOT_FOUND,
                "Attempt to delete a user credential that does not exist",
            )
        return None

    def seed_records(self, seeds: Iterable[tuple[str, str, str, int]]) -> list[MetadataRecord]:
        """Records for (user, mechanism, password, iterations) the image lacks:
        a first SCRAM user given at start-up is written once, never replaced."""
        return [
            credential_record(
                user, mechanism, make_credential(mechanism, password, iterations=iterations)
            )
            for user, mechanism, password, iterations in seeds
            if self.image.scram.get(user, mechanism) is None
        ]


def credential_record(user: str, mechanism: str, credential: ScramCredential) -> MetadataRecord:
    return make_record(
        "UserScramCredentialRecord",
        name=user,
        mechanism=MECHANISM_TYPES[mechanism],
        salt=credential.salt,
        stored_key=credential.stored_key,
        server_key=credential.server_key,
        iterations=credential.iterations,
    )


def _check_name_and_mechanism(change: Mapping[str, Any]) -> Error | None:
    if not change["name"]:
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"
    if change["mechanism"] not in MECHANISM_NAMES:
        return ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"
    return None


def _check_upsertion(upsertion: Mapping[str, Any]) -> Error | None:
    error = _check_name_and_mechanism(upsertion)
    if error is not None:
        return error
    minimum = MECHANISMS[MECHANISM_NAMES[upsertion["mechanism"]]][1]
    if upsertion["iterations"] < minimum:
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations"
    if upsertion["iterations"] > MAX_ITERATIONS:
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations"
    return None


def _result(user: str, error: Error | None = None) -> dict[str, Any]:
    code, message = error if error is not None else (ErrorCode.NONE, None)
    return {"user": user, "error_code": code, "error_message": message}
