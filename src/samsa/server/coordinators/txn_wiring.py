"""Wire the transaction coordinator to ``__transaction_state`` and to the partition leaders.

The coordinator persists through ``TransactionStore`` (the same log adapter the
group coordinator uses, over another topic) and writes markers through
``MarkerWriter``: here, a partition this broker leads takes its marker directly
(and waits for the ISR, as Kafka's WriteTxnMarkers appends with acks=all);
one led elsewhere gets a WriteTxnMarkers request over the inter-broker
listener.  A marker on a ``__consumer_offsets`` partition also ends the
transaction's pending offsets in the group coordinator.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from samsa.errors import ErrorCode, KafkaError
from samsa.server.coordinators.group_wiring import OFFSETS_TOPIC, LogOffsetsStore

if TYPE_CHECKING:
    from samsa.server.broker_api import BrokerApi

log = logging.getLogger("samsa.server")

TRANSACTION_TOPIC = "__transaction_state"
WRITE_TXN_MARKERS = 27
WRITE_TXN_MARKERS_VERSION = 1
ADD_PARTITIONS_TO_TXN = 24
VERIFY_VERSION = 4
MARKER_ACKS_TIMEOUT_MS = 30_000
TopicPartition = tuple[str, int]


async def write_local_marker(
    broker: BrokerApi,
    tp: TopicPartition,
    producer_id: int,
    producer_epoch: int,
    coordinator_epoch: int,
    commit: bool,
) -> ErrorCode:
    """Write one marker on a partition this broker leads; the error for the coordinator."""
    topic, index = tp
    partition = broker.replicas.get(topic, index)
    if partition is None:
        exists = topic in broker.image.topics and index in broker.image.topics[topic].partitions
        return ErrorCode.NOT_LEADER_OR_FOLLOWER if exists else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    try:
        offset = partition.append_marker(producer_id, producer_epoch, coordinator_epoch, commit)
    except KafkaError as exc:
        return exc.code
    if topic == OFFSETS_TOPIC and broker.groups is not None:
        broker.groups.complete_transaction(index, producer_id, commit)
    return await partition.wait_for_acks(offset + 1, MARKER_ACKS_TIMEOUT_MS)


def by_topic_name(tps: Iterable[TopicPartition]) -> dict[str, list[int]]:
    """Partition indexes per topic, in the order given: the shape of every request here."""
    out: dict[str, list[int]] = defaultdict(list)
    for topic, index in tps:
        out[topic].append(index)
    return out


# What a producer may retry (Kafka answers produce this way for old clients).
_VERIFY_RETRIABLE = frozenset(
    {
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.NOT_COORDINATOR,
        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
        ErrorCode.CONCURRENT_TRANSACTIONS,
        ErrorCode.NETWORK_EXCEPTION,
        ErrorCode.REQUEST_TIMED_OUT,
    }
)


async def verify_partitions(
    broker: BrokerApi,
    transactional_id: str,
    producer_id: int,
    producer_epoch: int,
    tps: list[TopicPartition],
    add: bool = False,
) -> dict[TopicPartition, ErrorCode]:
    """KIP-890 part 1: before a partition takes the first transactional batch of a
    producer, its leader asks the coordinator whether the partition is in the
    open transaction, so a late write of an aborted or fenced transaction cannot
    open a transaction no coordinator will ever end.  The codes are what the
    produce answers: NONE, INVALID_TXN_STATE, INVALID_PRODUCER_EPOCH, or the
    retriable NOT_ENOUGH_REPLICAS while the coordinator cannot be asked.

    With ``add`` (KIP-890 part 2, a transaction version 2 producer) the
    coordinator is asked to add the partitions instead: such a producer sends
    no AddPartitionsToTxn of its own."""
    codes = await ask_coordinator(broker, transactional_id, producer_id, producer_epoch, tps, add)
    return {tp: _produce_code(code) for tp, code in codes.items()}


async def ask_coordinator(
    broker: BrokerApi,
    transactional_id: str,
    producer_id: int,
    producer_epoch: int,
    tps: list[TopicPartition],
    add: bool,
) -> dict[TopicPartition, ErrorCode]:
    """The coordinator's own codes for verifying (or adding) ``tps``, wherever it runs."""
    node = broker.transaction_coordinator_node(transactional_id)
    codes: dict[TopicPartition, ErrorCode]
    if node is None:
        codes = dict.fromkeys(tps, ErrorCode.COORDINATOR_NOT_AVAILABLE)
    elif node == broker.node_id:
        error = broker.ensure_transaction_coordinator()
        if error is not None:
            codes = dict.fromkeys(tps, error)
        elif add:
            code = await broker.transactions.add_partitions(
                transactional_id, producer_id, producer_epoch, tps
            )
            codes = dict.fromkeys(tps, code)
        else:
            codes = broker.transactions.verify(transactional_id, producer_id, producer_epoch, tps)
    else:
        codes = await _verify_remote(
            broker, node, transactional_id, producer_id, producer_epoch, tps, add
        )
    return codes


def _produce_code(code: ErrorCode) -> ErrorCode:
    if code is ErrorCode.NONE:
        return code
    if code in _VERIFY_RETRIABLE:
        return ErrorCode.NOT_ENOUGH_REPLICAS
    if code is ErrorCode.PRODUCER_FENCED:
        return ErrorCode.INVALID_PRODUCER_EPOCH
    if code is ErrorCode.INVALID_PRODUCER_ID_MAPPING:
        return ErrorCode.INVALID_TXN_STATE
    return code


async def _verify_remote(
    broker: BrokerApi,
    node: int,
    transactional_id: str,
    producer_id: int,
    producer_epoch: int,
    tps: list[TopicPartition],
    add: bool,
) -> dict[TopicPartition, ErrorCode]:
    channel = _channel_to(broker, node)
    unreachable = dict.fromkeys(tps, ErrorCode.COORDINATOR_NOT_AVAILABLE)
    if channel is None:
        return unreachable
    by_topic = by_topic_name(tps)
    body = {
        "transactions": [
            {
                "transactional_id": transactional_id,
                "producer_id": producer_id,
                "producer_epoch": producer_epoch,
                "verify_only": not add,
                "topics": [{"name": t, "partitions": ps} for t, ps in by_topic.items()],
            }
        ]
    }
    try:
        response = await channel.request(ADD_PARTITIONS_TO_TXN, VERIFY_VERSION, body)
    except Exception as exc:  # the producer retries (NOT_ENOUGH_REPLICAS)
        log.info("verifying %r with broker %d failed: %s", transactional_id, node, exc)
        return unreachable
    codes = dict(unreachable)
    if response.get("error_code"):
        return dict.fromkeys(tps, ErrorCode(response["error_code"]))
    for txn in response.get("results_by_transaction", ()):
        for topic in txn["topic_results"]:
            for p in topic["results_by_partition"]:
                codes[(topic["name"], p["partition_index"])] = ErrorCode(p["partition_error_code"])
    return codes


def _channel_to(broker: BrokerApi, node: int) -> Any:
    """A channel to ``node`` on the inter-broker listener (None when it has none)."""
    registration = broker.image.brokers.get(node)
    endpoint = None if registration is None else registration.listener(broker.inter_broker_listener)
    if endpoint is None:
        return None
    channels = broker.txn_channels
    channels.set_address(node, endpoint.host, endpoint.port)
    return channels.channel(node)


class BrokerMarkerWriter:
    """``MarkerWriter`` over this broker's partitions and its peers."""

    def __init__(self, broker: BrokerApi) -> None:
        self.broker = broker

    async def write_markers(
        self,
        producer_id: int,
        producer_epoch: int,
        coordinator_epoch: int,
        commit: bool,
        partitions: Iterable[TopicPartition],
    ) -> dict[TopicPartition, ErrorCode]:
        broker = self.broker
        results: dict[TopicPartition, ErrorCode] = {}
        remote: dict[int, list[TopicPartition]] = defaultdict(list)
        for tp in partitions:
            topic = broker.image.topics.get(tp[0])
            registration = None if topic is None else topic.partitions.get(tp[1])
            if registration is None:
                results[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            elif registration.leader == broker.node_id:
                results[tp] = await write_local_marker(
                    broker, tp, producer_id, producer_epoch, coordinator_epoch, commit
                )
            elif registration.leader < 0:
                results[tp] = ErrorCode.NOT_LEADER_OR_FOLLOWER
            else:
                remote[registration.leader].append(tp)
        sends = [
            self._send(node, tps, producer_id, producer_epoch, coordinator_epoch, commit)
            for node, tps in remote.items()
        ]
        for answer in await asyncio.gather(*sends):
            results.update(answer)
        return results

    async def _send(
        self,
        node: int,
        tps: list[TopicPartition],
        producer_id: int,
        producer_epoch: int,
        coordinator_epoch: int,
        commit: bool,
    ) -> dict[TopicPartition, ErrorCode]:
        failed = dict.fromkeys(tps, ErrorCode.NOT_LEADER_OR_FOLLOWER)
        channel = _channel_to(self.broker, node)
        if channel is None:
            return failed
        by_topic = by_topic_name(tps)
        body = {
            "markers": [
                {
                    "producer_id": producer_id,
                    "producer_epoch": producer_epoch,
                    "transaction_result": commit,
                    "topics": [
                        {"name": t, "partition_indexes": ids} for t, ids in by_topic.items()
                    ],
                    "coordinator_epoch": coordinator_epoch,
                }
            ]
        }
        try:
            response = await channel.request(WRITE_TXN_MARKERS, WRITE_TXN_MARKERS_VERSION, body)
        except Exception as exc:  # unreachable peer: retried by the completion
            log.info("WriteTxnMarkers to broker %d failed: %s", node, exc)
            return failed
        results: dict[TopicPartition, ErrorCode] = {}
        for marker in response.get("markers", ()):
            for topic in marker["topics"]:
                for p in topic["partitions"]:
                    results[(topic["name"], p["partition_index"])] = ErrorCode(p["error_code"])
        return {**failed, **results}

    async def close(self) -> None:
        """The channels belong to the broker (``txn_channels``), which closes them."""


async def start_transaction_coordinator(broker: BrokerApi) -> None:
    """Create ``__transaction_state`` if needed, then build the coordinator and
    load the partitions this broker leads."""
    from samsa.transaction import TransactionConfig, TransactionCoordinator

    config = broker.config
    partitions = int(config["transaction.state.log.num.partitions"])
    if TRANSACTION_TOPIC not in broker.image.topics:
        replication = int(config["transaction.state.log.replication.factor"])
        live = max(1, len(broker.image.active_brokers()))
        configs = {
            "cleanup.policy": "compact",
            "compression.type": "uncompressed",
            "segment.bytes": str(config["transaction.state.log.segment.bytes"]),
            "min.insync.replicas": str(
                min(int(config["transaction.state.log.min.isr"]), replication, live)
            ),
        }
        await broker.create_internal_topic(TRANSACTION_TOPIC, partitions, replication, configs)
        while TRANSACTION_TOPIC not in broker.image.topics:
            await broker.loader.wait_applied(broker.loader.applied_offset)
    partitions = len(broker.image.topics[TRANSACTION_TOPIC].partitions)
    txn_config = TransactionConfig.from_properties(
        {**dict(config.items()), "transaction.state.log.num.partitions": partitions}
    )
    coordinator = TransactionCoordinator(
        LogOffsetsStore(broker, TRANSACTION_TOPIC, wait_for_replicas=True),
        BrokerMarkerWriter(broker),
        broker.producer_ids.allocate,
        txn_config,
    )
    started = time.monotonic()
    led = [i for i in range(partitions) if broker.leads(TRANSACTION_TOPIC, i)]
    for index in led:
        await coordinator.load(index, _coordinator_epoch(broker, index))
    broker.transactions = coordinator
    log.info(
        "transaction coordinator loaded %d of %d partitions of %s in %.0f ms",
        len(led),
        partitions,
        TRANSACTION_TOPIC,
        (time.monotonic() - started) * 1000,
    )


def _coordinator_epoch(broker: BrokerApi, index: int) -> int:
    """Kafka's coordinator epoch: the leader epoch of the state partition."""
    partition = broker.replicas.get(TRANSACTION_TOPIC, index)
    return 0 if partition is None else max(partition.leader_epoch, 0)


def follow_leadership(broker: BrokerApi) -> None:
    """Load the ``__transaction_state`` partitions this broker now leads, unload
    the others (the coordinator moves with the leadership)."""
    coordinator: Any = broker.transactions
    topic = broker.image.topics.get(TRANSACTION_TOPIC)
    if coordinator is None or topic is None:
        return
    for index in topic.partitions:
        leads = broker.leads(TRANSACTION_TOPIC, index)
        if leads and not coordinator.owns(index) and not coordinator.is_loading(index):
            log.info("becoming the transaction coordinator of %s-%d", TRANSACTION_TOPIC, index)
            task = asyncio.ensure_future(coordinator.load(index, _coordinator_epoch(broker, index)))
            broker.track(task)
        elif not leads and coordinator.owns(index):
            log.info("no longer the transaction coordinator of %s-%d", TRANSACTION_TOPIC, index)
            coordinator.unload(index)
