"""Who may do what in the registry: each request mapped onto the broker's Kafka ACLs.

Kafka has no ACL resource for subjects, so a subject is judged as the topic
it describes (TopicNameStrategy: ``orders-value`` and ``orders-key`` are
topic ``orders``); any other subject (RecordNameStrategy's ``com.acme.Order``,
TopicRecordNameStrategy's ``orders-com.acme.Order``) is judged as a topic of
its own name, which a PREFIXED ACL on ``orders`` covers.  The operations are
Kafka's for the same acts on a topic:

| request | needs |
|---|---|
| read a subject's versions, look a schema up, check compatibility | DESCRIBE on the topic (READ, WRITE, DELETE or ALTER imply it) |
| register a schema | WRITE on the topic |
| delete a version or a subject (soft or permanent) | DELETE on the topic |
| a subject's ``/config`` and ``/mode``: read / change | DESCRIBE_CONFIGS / ALTER_CONFIGS on the topic |
| global ``/config`` and ``/mode``: read / change | DESCRIBE_CONFIGS / ALTER_CONFIGS on the CLUSTER |
| a schema by id | DESCRIBE on the topic of a subject that holds it |
| ``GET /subjects``, ``GET /schemas``, an id's subjects and versions | answered, listing only what the caller may DESCRIBE |
| ``/``, ``/schemas/types`` | a logged-in user |

These are the same rules the broker's handlers apply to the Kafka requests
of the same meaning, so a producer allowed to WRITE a topic may register its
schemas and a consumer allowed to READ it may fetch them by id.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from samsa.protocol.acl import AclOperation, ResourceType
from samsa.registry.api_http import Request, Response, json_response
from samsa.registry.store import RegistryState

CLUSTER_NAME = "kafka-cluster"
TOPIC_SUFFIXES = ("-key", "-value")

Allowed = Callable[[AclOperation, ResourceType, str], bool]
"""The authorizer's answer for the request's principal and host."""


def subject_topic(subject: str) -> str:
    """The topic a subject is judged as (see the module's docstring)."""
    for suffix in TOPIC_SUFFIXES:
        if subject.endswith(suffix) and len(subject) > len(suffix):
            return subject[: -len(suffix)]
    return subject


@dataclass(frozen=True)
class Need:
    operation: AclOperation
    resource_type: ResourceType
    name: str

    def describe(self) -> str:
        return f"{self.operation.name} on {self.resource_type.name} {self.name}"


def _on_subject(operation: AclOperation, subject: str) -> Need:
    return Need(operation, ResourceType.TOPIC, subject_topic(subject))


class RegistryAccess:
    def __init__(self, state: RegistryState) -> None:
        self.state = state

    def lacking(self, request: Request, allowed: Allowed) -> Need | None:
        """What the caller lacks for ``request``; None when it may go ahead."""
        for need in self.needs(request):
            if not allowed(need.operation, need.resource_type, need.name):
                return need
        if self._id_path(request) is not None:
            holders = self._holders(request)
            if holders and not any(self._may_describe(s, allowed) for s in holders):
                return _on_subject(AclOperation.DESCRIBE, sorted(holders)[0])
        return None

    def needs(self, request: Request) -> list[Need]:
        method, parts = _method(request), _parts(request)
        head = parts[:1]
        if head == ["subjects"] and len(parts) >= 2:
            subject = parts[1]
            if method == "DELETE":
                return [_on_subject(AclOperation.DELETE, subject)]
            if method == "POST" and len(parts) == 3:
                return [_on_subject(AclOperation.WRITE, subject)]
            return [_on_subject(AclOperation.DESCRIBE, subject)]
        if head in (["config"], ["mode"]):
            change = method in ("PUT", "DELETE", "POST")
            operation = AclOperation.ALTER_CONFIGS if change else AclOperation.DESCRIBE_CONFIGS
            if len(parts) == 1:
                return [Need(operation, ResourceType.CLUSTER, CLUSTER_NAME)]
            return [_on_subject(operation, parts[1])]
        if parts[:2] == ["compatibility", "subjects"] and len(parts) >= 3:
            return [_on_subject(AclOperation.DESCRIBE, parts[2])]
        return []

    def filtered(self, request: Request, response: Response, allowed: Allowed) -> Response:
        """A listing answer with only what the caller may DESCRIBE."""
        if response.status != 200 or _method(request) != "GET":
            return response
        parts = _parts(request)
        listing = parts in (["subjects"], ["schemas"]) or (
            len(parts) == 4
            and parts[:2] == ["schemas", "ids"]
            and parts[3] in ("subjects", "versions")
        )
        if not listing:
            return response
        body = json.loads(response.body)
        if not isinstance(body, list):
            return response
        kept = [item for item in body if self._may_describe(_subject_of(item), allowed)]
        return json_response(kept)

    # -- helpers --------------------------------------------------------------------
    @staticmethod
    def _id_path(request: Request) -> str | None:
        parts = _parts(request)
        return parts[2] if parts[:2] == ["schemas", "ids"] and len(parts) >= 3 else None

    def _holders(self, request: Request) -> set[str]:
        schema_id = self._id_path(request)
        try:
            number = int(schema_id or "")
        except ValueError:
            return set()
        return {v.subject for v in self.state.holders_of(number, include_deleted=True)}

    @staticmethod
    def _may_describe(subject: str | None, allowed: Allowed) -> bool:
        if subject is None:
            return False
        return allowed(AclOperation.DESCRIBE, ResourceType.TOPIC, subject_topic(subject))


def _method(request: Request) -> str:
    method = request.method.upper()
    return "GET" if method == "HEAD" else method


def _parts(request: Request) -> list[str]:
    return [unquote(p) for p in request.path.split("/") if p]


def _subject_of(item: Any) -> str | None:
    if isinstance(item, str):
        return item
    if isinstance(item, dict) and isinstance(item.get("subject"), str):
        return str(item["subject"])
    return None
