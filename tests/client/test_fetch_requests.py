"""The Fetcher's fetch sessions without a broker: what each request names, and
what an incremental answer that leaves partitions out means.

The network is a stand-in that records each Fetch body and lets the test
answer it; the broker's side of sessions is tested for real in
test_fetch_sessions.py.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from samsa.client.consumer.config import parse_consumer_config
from samsa.client.consumer.fetch.fetcher import Fetcher
from samsa.client.consumer.network import RequestFuture
from samsa.client.consumer.subscription import SubscriptionState
from samsa.client.errors import DisconnectedError
from samsa.client.metadata import TopicPartition
from samsa.errors import ErrorCode
from samsa.protocol.fetch_session import FINAL_EPOCH, INITIAL_EPOCH

TPS = [TopicPartition("t", p) for p in range(3)]
SESSION = 55


class Network:
    """Records Fetch bodies; the test completes their futures."""

    def __init__(self) -> None:
        self.sent: list[tuple[dict[str, Any], RequestFuture]] = []
        self.metadata = SimpleNamespace(
            cluster=SimpleNamespace(leaders={(tp.topic, tp.partition): 1 for tp in TPS}),
            request_update=lambda: None,
        )

    def send(self, node_id: int, api_key: int, body: dict[str, Any]) -> RequestFuture:
        future = RequestFuture()
        self.sent.append((body, future))
        return future

    def answer(self, session_id: int = SESSION, error: int = 0, **hw: int) -> None:
        _, future = self.sent[-1]
        parts = [
            {"partition_index": int(p[1:]), "error_code": 0, "high_watermark": h, "records": None}
            for p, h in hw.items()
        ]
        future.complete(
            {
                "error_code": error,
                "session_id": session_id,
                "responses": [{"topic": "t", "partitions": parts}] if parts else [],
            }
        )


def named(body: dict[str, Any]) -> dict[int, int]:
    return {p["partition"]: p["fetch_offset"] for t in body["topics"] for p in t["partitions"]}


def forgotten(body: dict[str, Any]) -> list[int]:
    return [p for t in body["forgotten_topics_data"] for p in t["partitions"]]


def fetcher() -> tuple[Fetcher, SubscriptionState, Network]:
    cfg = parse_consumer_config({"bootstrap.servers": "127.0.0.1:1"})
    subs = SubscriptionState("earliest")
    subs.assign_from_user(TPS)
    for tp in TPS:
        subs.seek(tp, 7)
    net = Network()
    return Fetcher(cast(Any, net), subs, cfg), subs, net


def opened() -> tuple[Fetcher, SubscriptionState, Network]:
    f, subs, net = fetcher()
    f.send_fetches()
    body, _ = net.sent[-1]
    assert (body["session_id"], body["session_epoch"]) == (0, INITIAL_EPOCH)
    assert named(body) == {0: 7, 1: 7, 2: 7}
    net.answer(p0=7, p1=7, p2=7)  # the full answer names all; a next fetch goes out
    return f, subs, net


def test_an_incremental_answer_without_a_partition_is_no_news_not_an_error() -> None:
    f, subs, net = opened()
    body, _ = net.sent[-1]
    assert (body["session_id"], body["session_epoch"]) == (SESSION, 1)
    assert named(body) == {} and forgotten(body) == []
    subs.assignment[TPS[2]].last_empty_fetch = -1
    net.answer(p0=9)  # only p0's high watermark moved
    assert subs.assignment[TPS[0]].high_watermark == 9
    assert subs.assignment[TPS[2]].last_empty_fetch == 7  # left out: nothing at 7
    assert f.fetched_records(10) == []  # and no error


def test_pause_and_seek_send_only_the_change() -> None:
    _, subs, net = opened()  # the epoch 1 fetch is out
    subs.pause([TPS[1]])
    subs.seek(TPS[2], 3)
    net.answer()  # its answer sends the next fetch
    body, _ = net.sent[-1]
    assert body["session_epoch"] == 2
    assert named(body) == {2: 3} and forgotten(body) == [1]
    subs.resume([TPS[1]])
    net.answer()
    body, _ = net.sent[-1]
    assert body["session_epoch"] == 3
    assert named(body) == {1: 7} and forgotten(body) == []


def test_session_errors_and_failures_go_back_to_a_full_fetch() -> None:
    f, _, net = opened()
    net.answer(session_id=0, error=ErrorCode.FETCH_SESSION_ID_NOT_FOUND)
    f.send_fetches()
    body, _ = net.sent[-1]
    assert (body["session_id"], body["session_epoch"]) == (0, INITIAL_EPOCH)
    assert named(body) == {0: 7, 1: 7, 2: 7}
    net.answer(session_id=SESSION + 1)
    _, future = net.sent[-1]
    future.fail(DisconnectedError("node 1 disconnected"))
    f.send_fetches()
    body, _ = net.sent[-1]  # closes the old session and opens a new one
    assert (body["session_id"], body["session_epoch"]) == (SESSION + 1, INITIAL_EPOCH)
    assert named(body) == {0: 7, 1: 7, 2: 7}


def test_close_ends_the_session_only_where_no_fetch_is_parked_and_stops_fetching() -> None:
    f, subs, net = opened()
    assert f.close_sessions() == []  # the incremental fetch is parked on the broker
    f, subs, net = opened()
    subs.pause(TPS)
    net.answer()  # nothing fetchable: no fetch follows
    sent = len(net.sent)
    [final] = f.close_sessions()
    body, _ = net.sent[-1]
    assert len(net.sent) == sent + 1 and not final.done
    assert (body["session_id"], body["session_epoch"], body["topics"]) == (SESSION, FINAL_EPOCH, [])
    subs.resume(TPS)
    assert f.send_fetches() == 0
