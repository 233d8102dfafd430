"""What the console's API handlers share: the broker, and who is asking.

Reads of broker state go through ``ConsoleBroker`` (the metadata image, this
broker's replicas, its coordinator's view); reads of records and everything
that changes state go through ``kafka``, the broker's own request handlers,
so the console is one more client of the code paths every Kafka client uses
(and of the same validation, errors and authorization checks), not a second
implementation of them.  A context is made per request (``for_request``) and
carries the caller: the logged-in user and the client's address.  What the
console reads without a Kafka request is checked here (``may``, ``require``)
with the same question the authorization checks ask.
"""

from __future__ import annotations

import dataclasses
import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from samsa.console.broker_port import BrokerState, ConsoleBroker, Counters
from samsa.http.messages import HttpError, Request
from samsa.protocol.acl import AclOperation, ResourceType
from samsa.security.caller import Caller, caller_at
from samsa.security.principal import ANONYMOUS

if TYPE_CHECKING:
    from samsa.controller.image.metadata_image import TopicImage

CLIENT_ID = "samsa-console"
LIST_OFFSETS = 2
CLUSTER_NAME = "kafka-cluster"
TOPIC, GROUP, CLUSTER = ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER
NOBODY = Caller(ANONYMOUS, "", "")
_O = AclOperation
# The operations that apply to each resource type, as Kafka's authorized-operations
# fields list them (``AclEntry.supportedOperations``).
OPERATIONS = {
    TOPIC: (
        *(_O.READ, _O.WRITE, _O.CREATE, _O.DESCRIBE, _O.DELETE, _O.ALTER),
        *(_O.DESCRIBE_CONFIGS, _O.ALTER_CONFIGS),
    ),
    GROUP: (_O.READ, _O.DESCRIBE, _O.DELETE, _O.DESCRIBE_CONFIGS, _O.ALTER_CONFIGS),
    CLUSTER: (
        *(_O.CREATE, _O.CLUSTER_ACTION, _O.DESCRIBE_CONFIGS, _O.ALTER_CONFIGS),
        *(_O.IDEMPOTENT_WRITE, _O.ALTER, _O.DESCRIBE),
    ),
}


@dataclass(frozen=True, slots=True)
class ConsoleContext:
    broker: ConsoleBroker
    allow_actions: bool
    caller: Caller = NOBODY
    _cached: dict[Any, tuple[float, Any]] = field(default_factory=dict)

    @property
    def view(self) -> BrokerState:
        return self.broker.state

    @property
    def metrics(self) -> Counters:
        return self.broker.counters

    def for_request(self, request: Request) -> ConsoleContext:
        """This context as ``request``'s user (the endpoint's login admitted it;
        ANONYMOUS on a console without login) from the request's address."""
        host, port = request.client
        caller = caller_at(request.principal or ANONYMOUS, host, port)
        return dataclasses.replace(self, caller=caller)

    def cached(self, key: Any, max_age_s: float, compute: Callable[[], Any]) -> Any:
        """``compute()``, or its answer of less than ``max_age_s`` ago: for sums
        over every partition that open pages poll each second."""
        now = time.monotonic()
        hit = self._cached.get(key)
        if hit is not None and now - hit[0] < max_age_s:
            return hit[1]
        if len(self._cached) > 10_000:
            self._cached.clear()
        value = compute()
        self._cached[key] = (now, value)
        return value

    # ------------------------------------------------------------------ authorization
    def may(self, operation: AclOperation, resource_type: ResourceType, name: str) -> bool:
        """The authorizer's answer for this request's caller (True without ACLs)."""
        return self.broker.authorizes(self.caller, operation, resource_type, name)

    def authorized_operations(self, resource_type: ResourceType, name: str) -> list[str]:
        """What Metadata's and DescribeGroups' authorized-operations fields tell
        this caller about the resource, by name: the page greys out the
        actions it would be refused."""
        return [op.name for op in OPERATIONS[resource_type] if self.may(op, resource_type, name)]

    def require(self, operation: AclOperation, resource_type: ResourceType, name: str) -> None:
        """403 naming what the caller lacks, unless the authorizer allows it."""
        if not self.may(operation, resource_type, name):
            raise self.refusal(operation, resource_type, name)

    def refusal(self, operation: AclOperation, resource_type: ResourceType, name: str) -> HttpError:
        return HttpError(
            403,
            f"not authorized: {self.caller.principal_name} needs "
            f"{operation.name} on {resource_type.name} {name}",
        )

    def topic_visible(self, name: str) -> bool:
        return self.may(AclOperation.DESCRIBE, TOPIC, name)

    def known_topic(self, name: str, operation: AclOperation = AclOperation.DESCRIBE) -> TopicImage:
        """The topic's image if the caller may do ``operation`` on it (403
        otherwise, whether or not it exists, as Kafka answers), or 404."""
        self.require(operation, TOPIC, name)
        topic = self.broker.image.topics.get(name)
        if topic is None:
            raise HttpError(404, f"topic {name!r} does not exist")
        return topic

    # ------------------------------------------------------------------ Kafka requests
    async def kafka(self, api_key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
        """One request through the broker's handler for ``api_key``, as the caller."""
        result = self.broker.call(api_key, version, body, self.caller)
        if inspect.isawaitable(result):
            result = await result
        if result is None:
            raise HttpError(500, f"api key {api_key} gave no answer")
        return result

    def kafka_now(self, api_key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
        """A request whose handler answers at once (DescribeConfigs, ListOffsets)."""
        result = self.broker.call(api_key, version, body, self.caller)
        if not isinstance(result, dict):
            raise TypeError(f"api key {api_key} did not answer at once")
        return result

    def list_offsets(
        self, topic: str, partitions: list[int], timestamp: int
    ) -> list[dict[str, Any]]:
        """ListOffsets' answer per partition (``timestamp``: -2 earliest, -1 latest,
        else the first record at or after it)."""
        body = {
            "replica_id": -1,
            "isolation_level": 0,
            "topics": [
                {
                    "name": topic,
                    "partitions": [
                        {"partition_index": p, "current_leader_epoch": -1, "timestamp": timestamp}
                        for p in partitions
                    ],
                }
            ],
        }
        answer: list[dict[str, Any]] = self.kafka_now(LIST_OFFSETS, 7, body)["topics"][0][
            "partitions"
        ]
        return answer
