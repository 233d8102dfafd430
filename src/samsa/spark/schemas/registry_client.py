"""A small client of Confluent's Schema Registry REST API, for the Spark source.

The source may import only Samsa's Kafka client, and executors need not have
confluent-kafka installed, so the few calls typed columns make are made here
with the standard library: a subject's version (``latest`` or a number), a
schema by id (what a record's header names), registering a schema and looking
one up.  ``url`` may list several registry nodes, comma-separated: each call
tries them in turn until one answers (a node that is down, or 5xx).  HTTP
Basic credentials (``user:password``, Confluent's ``basic.auth.user.info``)
and a CA file for HTTPS are optional.  Registry errors come back as
``RegistryCallError`` carrying Confluent's ``error_code`` and message.
"""

from __future__ import annotations

import base64
import json
import ssl
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"


class RegistryCallError(RuntimeError):
    """The registry refused a call (``status``, Confluent's ``error_code``) or none answered."""

    def __init__(self, message: str, status: int = 0, error_code: int = 0) -> None:
        super().__init__(message)
        self.status = status
        self.error_code = error_code


@dataclass(frozen=True)
class Reference:
    name: str
    subject: str
    version: int


@dataclass(frozen=True)
class RegisteredSchema:
    """A schema as the registry answers it (``id``; ``subject``/``version`` when known)."""

    id: int
    schema: str
    schema_type: str = "AVRO"
    references: tuple[Reference, ...] = field(default=())
    subject: str | None = None
    version: int | None = None

    @classmethod
    def from_json(cls, body: dict[str, Any], schema_id: int | None = None) -> RegisteredSchema:
        refs = tuple(
            Reference(r["name"], r["subject"], int(r["version"]))
            for r in body.get("references") or ()
        )
        return cls(
            id=int(body["id"]) if schema_id is None else schema_id,
            schema=body["schema"],
            schema_type=body.get("schemaType", "AVRO"),
            references=refs,
            subject=body.get("subject"),
            version=body.get("version"),
        )


class RegistryClient:
    def __init__(
        self,
        url: str,
        user_info: str | None = None,
        ca_location: str | None = None,
        timeout: float = 30.0,
    ) -> None:
        self.urls = [u.strip().rstrip("/") for u in url.split(",") if u.strip()]
        if not self.urls:
            raise ValueError("no schema registry URL given")
        self.timeout = timeout
        self._headers = {"Accept": CONTENT_TYPE, "Content-Type": CONTENT_TYPE}
        if user_info:
            token = base64.b64encode(user_info.encode()).decode()
            self._headers["Authorization"] = f"Basic {token}"
        self._context = ssl.create_default_context(cafile=ca_location) if ca_location else None

    # -- the calls ------------------------------------------------------------------
    def version(self, subject: str, version: str | int = "latest") -> RegisteredSchema:
        path = f"/subjects/{_quote(subject)}/versions/{_quote(str(version))}"
        return RegisteredSchema.from_json(self._call("GET", path))

    def by_id(self, schema_id: int) -> RegisteredSchema:
        return RegisteredSchema.from_json(self._call("GET", f"/schemas/ids/{schema_id}"), schema_id)

    def register(
        self, subject: str, schema: str, schema_type: str = "AVRO", normalize: bool = False
    ) -> int:
        """The schema's id under ``subject``, registering it when it is new."""
        query = "?normalize=true" if normalize else ""
        body = {"schema": schema, **({"schemaType": schema_type} if schema_type != "AVRO" else {})}
        answer = self._call("POST", f"/subjects/{_quote(subject)}/versions{query}", body)
        return int(answer["id"])

    def lookup(self, subject: str, schema: str, schema_type: str = "AVRO") -> RegisteredSchema:
        """The version of ``subject`` holding ``schema`` (40403 when there is none)."""
        body = {"schema": schema, **({"schemaType": schema_type} if schema_type != "AVRO" else {})}
        return RegisteredSchema.from_json(self._call("POST", f"/subjects/{_quote(subject)}", body))

    # -- HTTP -----------------------------------------------------------------------
    def _call(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        failures = []
        for base in self.urls:
            request = urllib.request.Request(
                base + path, data=data, method=method, headers=self._headers
            )
            try:
                with urllib.request.urlopen(
                    request, timeout=self.timeout, context=self._context
                ) as answer:
                    return json.loads(answer.read() or b"null")
            except urllib.error.HTTPError as exc:
                error = _registry_error(exc, method, base + path)
                if exc.code < 500:
                    raise error from None
                failures.append(str(error))
            except (OSError, ValueError) as exc:
                failures.append(f"{base}: {exc}")
        raise RegistryCallError(
            f"no schema registry answered {method} {path}: " + "; ".join(failures)
        )


def _quote(part: str) -> str:
    return urllib.parse.quote(part, safe="")


def _registry_error(exc: urllib.error.HTTPError, method: str, url: str) -> RegistryCallError:
    try:
        body = json.loads(exc.read() or b"{}")
    except ValueError:
        body = {}
    code = int(body.get("error_code", 0)) if isinstance(body, dict) else 0
    message = body.get("message", exc.reason) if isinstance(body, dict) else exc.reason
    return RegistryCallError(
        f"{method} {url}: {exc.code} (error {code}): {message}", exc.code, code
    )
