"""Requests in flight: one per destination, timeouts, backoff, stale answers ignored."""

from __future__ import annotations

import dataclasses

from tests.raft.helpers import CONFIG, follow, make_machine, of_type, sent

from samsa.raft import FetchRequest, FetchResponse, Send
from samsa.raft.errors import ErrorCode
from samsa.raft.rpc.requests import RequestManager


def test_one_request_per_destination_and_backoff_after_failure() -> None:
    manager = RequestManager(request_timeout_ms=100, retry_backoff_ms=10)
    request = FetchRequest(1, 0, 0, 1, 0, 1)
    first = manager.register(2, request, 0)
    assert not manager.is_ready(2, 0) and manager.is_ready(3, 0)
    assert manager.expire(99) == [] and manager.expire(100) == [first]
    assert not manager.is_ready(2, 105) and manager.is_ready(2, 110)
    second = manager.register(2, request, 110)
    assert second.request_id != first.request_id
    assert manager.complete(first.request_id) is None  # a late answer to the old one
    assert manager.complete(second.request_id) == second


def test_follower_retries_a_fetch_that_timed_out() -> None:
    machine = make_machine(2, config=dataclasses.replace(CONFIG, request_timeout_ms=50))
    machine.start(0)
    sent(follow(machine, 1, 3), FetchRequest)
    assert machine.next_deadline() == 50
    assert not sent(machine.poll(50), FetchRequest)  # timed out: back off 5 ms
    assert machine.next_deadline() == 55
    ((retry, request),) = sent(machine.poll(55), FetchRequest)
    assert retry.destination_id == 1 and request.fetch_offset == 0
    assert machine.role == "Follower"


def test_late_and_duplicate_answers_are_ignored() -> None:
    machine = make_machine(2)
    machine.start(0)
    ((first, _),) = sent(follow(machine, 1, 3), FetchRequest)
    answer = FetchResponse(ErrorCode.NONE, 1, 3, -1, 0)
    actions = machine.receive_response(10, first.request_id, answer)
    ((second, _),) = sent(actions, FetchRequest)
    assert machine.receive_response(11, first.request_id, answer) == []
    assert of_type(machine.receive_response(12, second.request_id, answer), Send)


def test_failed_request_is_retried_after_the_backoff() -> None:
    machine = make_machine(2)
    machine.start(0)
    ((first, _),) = sent(follow(machine, 1, 3), FetchRequest)
    assert not sent(machine.request_failed(10, first.request_id), FetchRequest)
    assert machine.next_deadline() == 15
    assert sent(machine.poll(15), FetchRequest)
