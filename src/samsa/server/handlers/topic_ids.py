"""Requests that name topics by id (KIP-516's versions): resolved to names and back.

Fetch 13+, Produce 13+, OffsetCommit/OffsetFetch 10+ and TxnOffsetCommit 6+
name each topic by its id instead of its name.  Handlers and ACL checks work by
name, so the router (``Router.translate``) looks a request's ids up in the
broker's metadata image before either sees it, keeping each topic's id beside
its name, and names the answer's topics by id on the way out.

An id the image does not hold (a deleted topic, or one this broker has not
heard of yet) never reaches the handler: each of its partitions is answered
UNKNOWN_TOPIC_ID, as Kafka does, and the client refreshes its metadata.  A
Fetch with such an id is answered without its long poll.  Ids are resolved per
request, so once a topic is deleted and created again under the same name,
requests for the old id are refused rather than served the new topic's data.
A fetch session's partition of a topic deleted since is answered with the id
the client knew it by (remembered from its requests) and UNKNOWN_TOPIC_ID, as
Kafka answers a session partition whose id it no longer knows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from samsa.errors import ErrorCode
from samsa.raft.rpc import wire
from samsa.replication.leader.fetch_responses import fetch_error

if TYPE_CHECKING:
    from samsa.server.broker_api import BrokerApi
    from samsa.server.connections.router import Body, Handler, HandlerResult, RequestContext, Router

ZERO_ID = bytes(16)
UNKNOWN = ErrorCode.UNKNOWN_TOPIC_ID
REMEMBERED_IDS = 100_000
"""Names' ids remembered from requests, for topics deleted while in a session."""

PRODUCE, FETCH, OFFSET_COMMIT, OFFSET_FETCH, TXN_OFFSET_COMMIT = 0, 1, 8, 9, 28


class Resolved:
    """A request's topics split into those the image knows (also named now)
    and those it does not; ``id_of`` names a topic of the answer."""

    def __init__(
        self,
        image: Any,
        topics: Iterable[Body],
        name_key: str,
        remembered: dict[str, bytes] | None = None,
    ) -> None:
        self._image = image
        self.name_key = name_key
        self._remembered = {} if remembered is None else remembered
        self.known: list[Body] = []
        self.unknown: list[Body] = []
        self._ids: dict[str, bytes] = {}
        by_id: Mapping[bytes, Any] = image.topics_by_id
        for topic in topics:
            found = by_id.get(bytes(topic["topic_id"]))
            if found is None:
                self.unknown.append(topic)
                continue
            self._ids[found.name] = found.topic_id
            self.known.append({**topic, name_key: found.name})
        if self._ids and remembered is not None:
            if len(remembered) > REMEMBERED_IDS:
                remembered.clear()
            remembered.update(self._ids)

    def id_of(self, name: str) -> bytes:
        """The id the request used for ``name``, else the image's (a fetch
        session's other partitions, OffsetFetch's "all topics")."""
        topic_id = self._ids.get(name)
        if topic_id is not None:
            return topic_id
        found = self._image.topics.get(name)
        if found is not None:
            return found.topic_id
        return self._remembered.get(name, ZERO_ID)

    def deleted(self, name: str) -> bool:
        return name not in self._image.topics

    def by_id(self, topics: Iterable[Body], name_key: str) -> list[Body]:
        """Answer topics with their ``topic_id`` set from their name (an entry
        that already has one, such as an ACL refusal, keeps it)."""
        return [
            topic if topic.get("topic_id") else {**topic, "topic_id": self.id_of(topic[name_key])}
            for topic in topics
        ]


@dataclass(frozen=True, slots=True)
class Shape:
    """Where one API keeps its topics, and what an unknown id's partition says."""

    since: int
    topics: str
    name: str
    partitions: str
    resp_topics: str
    resp_name: str
    resp_partitions: str
    refusal: Callable[[Any], Body]
    """A partition's UNKNOWN_TOPIC_ID answer, from its request entry."""


def _index(entry: Any, key: str) -> int:
    return entry if isinstance(entry, int) else int(entry[key])


def _produce_refusal(entry: Body) -> Body:
    return {
        "index": entry["index"],
        "error_code": UNKNOWN,
        "base_offset": -1,
        "log_append_time_ms": -1,
        "log_start_offset": -1,
        "record_errors": [],
        "error_message": None,
    }


def _commit_refusal(entry: Body) -> Body:
    return {"partition_index": entry["partition_index"], "error_code": UNKNOWN}


def _offset_fetch_refusal(index: int) -> Body:
    return {
        "partition_index": index,
        "committed_offset": -1,
        "committed_leader_epoch": -1,
        "metadata": "",
        "error_code": UNKNOWN,
    }


SHAPES: dict[int, Shape] = {
    PRODUCE: Shape(
        13,
        "topic_data",
        "name",
        "partition_data",
        "responses",
        "name",
        "partition_responses",
        _produce_refusal,
    ),
    FETCH: Shape(
        13,
        "topics",
        "topic",
        "partitions",
        "responses",
        "topic",
        "partitions",
        lambda entry: fetch_error(entry["partition"], UNKNOWN),
    ),
    OFFSET_COMMIT: Shape(
        10, "topics", "name", "partitions", "topics", "name", "partitions", _commit_refusal
    ),
    TXN_OFFSET_COMMIT: Shape(
        6, "topics", "name", "partitions", "topics", "name", "partitions", _commit_refusal
    ),
}


def _then(result: HandlerResult, finish: Callable[[Body], Body]) -> HandlerResult:
    if result is None or isinstance(result, dict):
        return None if result is None else finish(result)

    async def later() -> Body | None:
        body = await result
        return None if body is None else finish(body)

    return later()


def _translate(shape: Shape, image: Callable[[], Any]) -> Callable[..., HandlerResult]:
    remembered: dict[str, bytes] = {}

    def translate(handler: Handler, ctx: RequestContext, req: Body) -> HandlerResult:
        if ctx.version < shape.since or (shape is SHAPES[FETCH] and _is_raft(ctx, req)):
            return handler(ctx, req)
        resolved = Resolved(image(), req.get(shape.topics) or (), shape.name, remembered)
        named = {**req, shape.topics: resolved.known}
        if shape is SHAPES[FETCH]:
            forgotten = Resolved(image(), req.get("forgotten_topics_data") or (), "topic")
            named["forgotten_topics_data"] = forgotten.known + _deleted_by_old_id(
                forgotten.unknown, remembered
            )
            if resolved.unknown:
                named["max_wait_ms"] = 0  # an error is known: answer at once
        refused = [
            {
                shape.resp_name: "",
                "topic_id": bytes(topic["topic_id"]),
                shape.resp_partitions: [shape.refusal(p) for p in topic[shape.partitions]],
            }
            for topic in resolved.unknown
        ]

        def finish(body: Body) -> Body:
            topics = resolved.by_id(body.get(shape.resp_topics) or (), shape.resp_name)
            for topic in topics:
                if resolved.deleted(topic[shape.resp_name]):
                    for partition in topic[shape.resp_partitions]:
                        if partition["error_code"] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
                            partition["error_code"] = UNKNOWN
            return {**body, shape.resp_topics: topics + refused}

        return _then(handler(ctx, named), finish)

    return translate


def _deleted_by_old_id(topics: list[Body], remembered: dict[str, bytes]) -> list[Body]:
    """Forgotten session topics deleted since, named by the name their id had:
    a session keeps partitions by name, and must let go of these too."""
    if not topics:
        return []
    names = {topic_id: name for name, topic_id in remembered.items()}
    return [
        {**topic, "topic": names[bytes(topic["topic_id"])]}
        for topic in topics
        if bytes(topic["topic_id"]) in names
    ]


def _is_raft(ctx: RequestContext, req: Body) -> bool:
    return wire.is_metadata_fetch(ctx.version, req)


def _translate_offset_fetch(image: Callable[[], Any]) -> Callable[..., HandlerResult]:
    """OffsetFetch 10: each group's topics by id (null: every committed topic,
    answered by id, leaving out topics that no longer exist)."""

    def translate(handler: Handler, ctx: RequestContext, req: Body) -> HandlerResult:
        if ctx.version < 10:
            return handler(ctx, req)
        current = image()
        groups = []
        resolved: dict[str, Resolved] = {}
        for group in req.get("groups") or ():
            topics = group.get("topics")
            if topics is None:
                groups.append(group)
                resolved[group["group_id"]] = Resolved(current, (), "name")
                continue
            found = resolved[group["group_id"]] = Resolved(current, topics, "name")
            groups.append({**group, "topics": found.known})

        def finish(body: Body) -> Body:
            answered = []
            for group in body.get("groups") or ():
                found = resolved.get(group["group_id"])
                if found is None:
                    answered.append(group)
                    continue
                topics = [t for t in found.by_id(group.get("topics") or (), "name")]
                topics = [t for t in topics if t["topic_id"] != ZERO_ID]
                topics += [
                    {
                        "name": "",
                        "topic_id": bytes(t["topic_id"]),
                        "partitions": [
                            _offset_fetch_refusal(_index(i, "partition_index"))
                            for i in t["partition_indexes"]
                        ],
                    }
                    for t in found.unknown
                ]
                answered.append({**group, "topics": topics})
            return {**body, "groups": answered}

        return _then(handler(ctx, {**req, "groups": groups}), finish)

    return translate


def install(router: Router, broker: BrokerApi) -> None:
    """Resolve topic ids for every API of ``router`` that takes them."""

    def image() -> Any:
        return broker.image

    for api_key, shape in SHAPES.items():
        if router.handles(api_key):
            router.translate(api_key, _translate(shape, image))
    if router.handles(OFFSET_FETCH):
        router.translate(OFFSET_FETCH, _translate_offset_fetch(image))
