"""The broker's side of a streams group heartbeat: checks on the topology's topic names
and the creation of the internal topics the group coordinator found missing.

As Kafka's KafkaApis and AutoTopicCreationManager: a topology naming an internal
Kafka topic or an invalid name is refused (STREAMS_INVALID_TOPOLOGY); the
missing repartition and changelog topics are created through the active
controller in the background -- the heartbeat is answered at once with its
MISSING_INTERNAL_TOPICS status and the members see the topics at a later
heartbeat.  A caller without CREATE (on the cluster, or else on each topic)
creates nothing and reads why in that status; a creation that failed is
remembered for twice the group's heartbeat interval, shown in the status
meanwhile, and not retried until then.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from samsa.coordinator.streams.heartbeat_request import error_response, refused_topic_names
from samsa.coordinator.streams.internal_topics import MISSING_INTERNAL_TOPICS, InternalTopic
from samsa.errors import ErrorCode, KafkaError
from samsa.protocol.acl import AclOperation
from samsa.server.access.base import TOPIC, can, can_cluster
from samsa.server.connections.router import Body, RequestContext

if TYPE_CHECKING:
    from samsa.server.broker_api import BrokerApi

log = logging.getLogger("samsa.server")

CREATE_TOPICS = 19
CREATE_TOPICS_VERSION = 7
KAFKA_INTERNAL_TOPICS = frozenset(
    {"__consumer_offsets", "__transaction_state", "__share_group_state"}
)
MAX_ERRORS_SHOWN = 10
"""Creation failures named in a status; the rest are counted (Kafka's "... and N more")."""

_creators: weakref.WeakKeyDictionary[Any, StreamsTopicCreator] = weakref.WeakKeyDictionary()


def _now_ms() -> int:
    return time.monotonic_ns() // 1_000_000


def invalid_topology(req: Body) -> Body | None:
    """The answer to a topology naming Kafka's internal topics or invalid names."""
    refused = refused_topic_names(req)
    return None if refused is None else error_response(refused.code, refused.message)


def create_internal_topics(
    broker: BrokerApi, ctx: RequestContext, response: Body, topics: Mapping[str, InternalTopic]
) -> None:
    """Ask for ``topics`` (the caller's CREATE permitting) and report in ``response``'s
    MISSING_INTERNAL_TOPICS status what stops them."""
    names = sorted(topics)
    auth = broker.authorizer
    if auth is not None and not can_cluster(auth, ctx, AclOperation.CREATE):
        denied = [n for n in names if not can(auth, ctx, AclOperation.CREATE, TOPIC, n)]
        if denied:
            _add_detail(response, f"Unauthorized to CREATE on topics {', '.join(denied)}.")
            return
    creator = _creators.get(broker)
    if creator is None:
        creator = _creators[broker] = StreamsTopicCreator(broker)
    ttl_ms = 2 * max(int(response.get("heartbeat_interval_ms") or 0), 0)
    creator.create(topics.values(), ttl_ms)
    errors = creator.errors(names)
    if errors and _missing_status(response) is not None:
        shown = [f"{n} ({m})" for n, m in sorted(errors.items())[:MAX_ERRORS_SHOWN]]
        more = len(errors) - len(shown)
        listed = ", ".join(shown) + (f" and {more} more" if more > 0 else "")
        _add_detail(response, f"Creation failed: {listed}.")


def _missing_status(response: Body) -> Body | None:
    for status in response.get("status") or ():
        if status["status_code"] == MISSING_INTERNAL_TOPICS:
            found: Body = status
            return found
    return None


def _add_detail(response: Body, detail: str) -> None:
    status = _missing_status(response)
    if status is not None:
        status["status_detail"] = f"{status['status_detail']}; {detail}"
        return
    statuses = list(response.get("status") or [])
    statuses.append({"status_code": MISSING_INTERNAL_TOPICS, "status_detail": detail})
    response["status"] = statuses


class StreamsTopicCreator:
    """Internal topics being created for streams groups, and recent failures."""

    def __init__(self, broker: BrokerApi) -> None:
        self.broker = broker
        self.in_flight: set[str] = set()
        self.failures: dict[str, tuple[str, int]] = {}
        """topic -> (error text, when it expires: monotonic ms)."""

    def create(self, topics: Iterable[InternalTopic], ttl_ms: int) -> None:
        now = _now_ms()
        wanted = []
        for topic in topics:
            failed = self.failures.get(topic.name)
            if failed is not None and failed[1] > now:
                continue
            self.failures.pop(topic.name, None)
            if topic.name in self.in_flight or topic.name in self.broker.image.topics:
                continue
            wanted.append(topic)
        if not wanted:
            return
        self.in_flight.update(t.name for t in wanted)
        task = asyncio.ensure_future(self._create(wanted, ttl_ms))
        self.broker.track(task)

    def errors(self, names: Iterable[str]) -> dict[str, str]:
        now = _now_ms()
        return {n: f[0] for n in names if (f := self.failures.get(n)) is not None and f[1] > now}

    async def _create(self, topics: list[InternalTopic], ttl_ms: int) -> None:
        body = {
            "topics": [
                {
                    "name": t.name,
                    "num_partitions": t.partitions,
                    "replication_factor": t.replication_factor,
                    "assignments": [],
                    "configs": [{"name": k, "value": v} for k, v in t.configs],
                }
                for t in topics
            ],
            "timeout_ms": 30_000,
            "validate_only": False,
        }
        try:
            response = await self.broker.forward(CREATE_TOPICS, CREATE_TOPICS_VERSION, body)
            results = {r["name"]: r for r in response.get("topics") or ()}
        except KafkaError as exc:
            results = {
                t.name: {"error_code": int(exc.code), "error_message": str(exc)} for t in topics
            }
        finally:
            self.in_flight.difference_update(t.name for t in topics)
        expires = _now_ms() + ttl_ms
        for t in topics:
            result = results.get(t.name) or {"error_code": 0}
            code = result.get("error_code", 0)
            if code in (0, ErrorCode.TOPIC_ALREADY_EXISTS):
                log.info("created internal topic %s of a streams group", t.name)
                continue
            message = result.get("error_message") or ErrorCode(code).name
            log.warning("could not create internal topic %s: %s", t.name, message)
            self.failures[t.name] = (message, expires)
