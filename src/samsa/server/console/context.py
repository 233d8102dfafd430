"""What the console's API handlers share: the broker, its view and its Kafka API.

Reads of broker state go through ``BrokerView`` and the metadata image; reads
of records and everything that changes state go through ``kafka``, a router
with the broker's own request handlers, so the console is one more client of
the code paths every Kafka client uses (and of the same validation and
errors), not a second implementation of them.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from samsa.server.http_endpoint import HttpError

if TYPE_CHECKING:
    from samsa.server.broker_api import BrokerApi
    from samsa.server.broker_view import BrokerView
    from samsa.server.metrics import BrokerMetrics
    from samsa.server.router import Router

CLIENT_ID = "samsa-console"
LIST_OFFSETS = 2


@dataclass(frozen=True, slots=True)
class ConsoleContext:
    broker: BrokerApi
    view: BrokerView
    metrics: BrokerMetrics
    router: Router
    allow_actions: bool
    _cached: dict[Any, tuple[float, Any]] = field(default_factory=dict)

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

    async def kafka(self, api_key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
        """One request through the broker's handler for ``api_key``."""
        result = self.router.call(api_key, version, body, CLIENT_ID)
        if inspect.isawaitable(result):
            result = await result
        if result is None:
            raise HttpError(500, f"api key {api_key} gave no answer")
        return result

    def kafka_now(self, api_key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
        """A request whose handler answers at once (DescribeConfigs, ListOffsets)."""
        result = self.router.call(api_key, version, body, CLIENT_ID)
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

    def known_topic(self, name: str) -> Any:
        """The topic's image, or 404."""
        topic = self.broker.image.topics.get(name)
        if topic is None:
            raise HttpError(404, f"topic {name!r} does not exist")
        return topic
