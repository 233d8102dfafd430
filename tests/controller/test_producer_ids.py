from tests.controller.harness import Cluster

from samsa.errors import ErrorCode


def allocate(c: Cluster, broker_id: int = 1, epoch: int | None = None) -> dict:
    request = {
        "broker_id": broker_id,
        "broker_epoch": c.image.brokers[broker_id].epoch if epoch is None else epoch,
    }
    return c.run(c.controller.allocate_producer_ids, request)


def test_blocks_of_a_thousand_are_never_reused() -> None:
    c = Cluster()
    c.start_brokers([1, 2])
    first = allocate(c, 1)
    second = allocate(c, 2)
    assert first == {
        "throttle_time_ms": 0,
        "error_code": 0,
        "producer_id_start": 0,
        "producer_id_len": 1000,
    }
    assert second["producer_id_start"] == 1000
    assert c.image.next_producer_id == 2000
    [record] = c.last_result.records  # type: ignore[union-attr]
    assert record.body == {
        "broker_id": 2,
        "broker_epoch": c.image.brokers[2].epoch,
        "next_producer_id": 2000,
    }


def test_stale_broker_epoch_gets_nothing() -> None:
    c = Cluster()
    c.start_brokers([1])
    response = allocate(c, 1, epoch=999)
    assert response["error_code"] == ErrorCode.STALE_BROKER_EPOCH
    assert c.last_result.records == [] and c.image.next_producer_id == 0  # type: ignore[union-attr]
