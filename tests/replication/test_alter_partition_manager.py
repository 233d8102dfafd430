"""AlterPartition batching: one request in flight, retries after the backoff."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, TypeVar

from samsa.errors import ErrorCode
from samsa.replication.leader.alter_partition_manager import AlterPartitionManager
from samsa.replication.leader.isr_state import LeaderAndIsr

T = TypeVar("T")
TOPIC_A = b"a" * 16
TOPIC_B = b"b" * 16


def run(coro: Awaitable[T]) -> T:
    return asyncio.run(asyncio.wait_for(coro, 10))


class Controller:
    """Answers AlterPartition from a script; the first request waits for ``release``."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.release = asyncio.Event()
        self.failures: list[BaseException | int] = []
        self.partition_errors: dict[int, int] = {}

    async def send(self, body: dict[str, Any]) -> dict[str, Any]:
        self.requests.append(body)
        await self.release.wait()
        if self.failures:
            failure = self.failures.pop(0)
            if isinstance(failure, BaseException):
                raise failure
            return {"throttle_time_ms": 0, "error_code": failure, "topics": []}
        topics = []
        for topic in body["topics"]:
            results = []
            for p in topic["partitions"]:
                code = self.partition_errors.pop(p["partition_index"], 0)
                results.append(
                    {
                        "partition_index": p["partition_index"],
                        "error_code": code,
                        "leader_id": 1,
                        "leader_epoch": p["leader_epoch"],
                        "isr": p["new_isr"],
                        "leader_recovery_state": 0,
                        "partition_epoch": p["partition_epoch"] + 1,
                    }
                )
            topics.append({"topic_id": topic["topic_id"], "partitions": results})
        return {"throttle_time_ms": 0, "error_code": 0, "topics": topics}


def change(partition_epoch: int = 3) -> LeaderAndIsr:
    return LeaderAndIsr(1, 2, (1, 3), partition_epoch)


def test_changes_queued_while_one_is_in_flight_go_out_together() -> None:
    async def scenario() -> None:
        controller = Controller()
        manager = AlterPartitionManager(1, lambda: 77, controller.send, retry_backoff_ms=1)
        answers: dict[int, LeaderAndIsr | ErrorCode] = {}
        done = asyncio.Event()

        def callback(index: int) -> Any:
            def on_result(result: LeaderAndIsr | ErrorCode) -> bool:
                answers[index] = result
                if len(answers) == 3:
                    done.set()
                return False

            return on_result

        manager.submit(TOPIC_A, 0, change(), callback(0))
        await asyncio.sleep(0)
        manager.submit(TOPIC_A, 1, change(), callback(1))
        manager.submit(TOPIC_B, 2, change(), callback(2))
        assert len(controller.requests) == 1 and manager.pending == 2
        controller.release.set()
        await done.wait()
        assert len(controller.requests) == 2
        second = controller.requests[1]
        assert second["broker_id"] == 1 and second["broker_epoch"] == 77
        assert [t["topic_id"] for t in second["topics"]] == [TOPIC_A, TOPIC_B]
        member_epochs = second["topics"][0]["partitions"][0]["new_isr_with_epochs"]
        assert member_epochs == [
            {"broker_id": 1, "broker_epoch": 77},
            {"broker_id": 3, "broker_epoch": -1},
        ]
        assert answers[0] == LeaderAndIsr(1, 2, (1, 3), 4)
        await manager.close()

    run(scenario())


def test_failed_requests_are_retried_after_the_backoff() -> None:
    async def scenario() -> None:
        controller = Controller()
        controller.release.set()
        controller.failures = [ConnectionError("controller gone"), int(ErrorCode.NOT_CONTROLLER)]
        manager = AlterPartitionManager(1, lambda: 77, controller.send, retry_backoff_ms=1)
        answered: asyncio.Future[LeaderAndIsr | ErrorCode] = (
            asyncio.get_running_loop().create_future()
        )

        def on_result(result: LeaderAndIsr | ErrorCode) -> bool:
            answered.set_result(result)
            return False

        manager.submit(TOPIC_A, 0, change(), on_result)
        assert isinstance(await answered, LeaderAndIsr)
        assert len(controller.requests) == 3
        await manager.close()

    run(scenario())


def test_partition_errors_go_to_the_callback_which_may_ask_for_a_retry() -> None:
    async def scenario() -> None:
        controller = Controller()
        controller.release.set()
        controller.partition_errors = {0: int(ErrorCode.NOT_CONTROLLER)}
        manager = AlterPartitionManager(1, lambda: 77, controller.send, retry_backoff_ms=1)
        results: list[LeaderAndIsr | ErrorCode] = []
        finished = asyncio.Event()

        def on_result(result: LeaderAndIsr | ErrorCode) -> bool:
            results.append(result)
            if isinstance(result, LeaderAndIsr):
                finished.set()
            return isinstance(result, ErrorCode)

        manager.submit(TOPIC_A, 0, change(), on_result)
        await finished.wait()
        assert results[0] is ErrorCode.NOT_CONTROLLER
        assert isinstance(results[1], LeaderAndIsr)
        await manager.close()

    run(scenario())


def test_a_newer_change_replaces_an_unsent_one() -> None:
    async def scenario() -> None:
        controller = Controller()
        manager = AlterPartitionManager(1, lambda: 77, controller.send, retry_backoff_ms=1)
        manager.submit(TOPIC_A, 9, change(), lambda _: False)  # goes out, waits
        await asyncio.sleep(0)
        manager.submit(TOPIC_A, 0, change(3), lambda _: False)
        manager.submit(TOPIC_A, 0, change(5), lambda _: False)
        assert manager.pending == 1
        controller.release.set()
        while len(controller.requests) < 2:
            await asyncio.sleep(0)
        assert controller.requests[1]["topics"][0]["partitions"][0]["partition_epoch"] == 5
        await manager.close()
        assert not manager.submit(TOPIC_A, 0, change(), lambda _: False)

    run(scenario())
