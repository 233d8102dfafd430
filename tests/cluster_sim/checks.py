"""The simulator's global view: what was committed, answered, acknowledged and read.

``MetadataChecker`` (the controller on Raft):

* at most one node activates as the controller in any Raft epoch;
* every node's image, after each apply or snapshot load, equals the image built
  from the same prefix of the committed log (``image_digest`` covers the content
  and the derived indexes; ``images_equal`` is used at convergence);
* every RemoveTopicRecord in the committed log comes from a DeleteTopics some
  controller computed (a topic never vanishes without a delete);
* an answer of success is given only once its effect is in the answering node's
  image (created topics exist, deleted ones do not, partitions were added,
  configs set); at convergence every topic answered created and never removed
  is in every image.

``DataChecker`` (brokers and replicas of the ``data`` topic):

* the first replica to report a high watermark past an offset fixes the
  committed batch there; every replica's log below its high watermark must hold
  exactly the committed batches;
* at most one broker leads a partition in any leader epoch;
* a broker that becomes leader holds every committed batch (so nothing
  acknowledged or read is lost to a failover);
* no replica ever truncates a committed batch;
* an acknowledged batch is committed when the producer hears of it, and a
  batch a consumer reads is committed (below the high watermark of that read);
* the high watermark a consumer sees never goes backwards within one leader
  epoch (across a leader change it may: the new leader learns the watermark
  from its followers' fetches, as in Kafka; such steps are counted).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tests.cluster_sim.memory_log import MemoryLog

from samsa.controller.image.metadata_image import MetadataImage, images_equal
from samsa.protocol.metadata_records import MetadataRecord, decode_metadata_record
from samsa.replication.partition import Partition, PartitionRole

if TYPE_CHECKING:
    from tests.cluster_sim.broker_node import BrokerProcess
    from tests.cluster_sim.controller_node import ControllerProcess
    from tests.cluster_sim.sim import ClusterSimulation

DATA_TOPIC = "data"
_REPLICATED = (PartitionRole.LEADER, PartitionRole.FOLLOWER)
TopicPartition = tuple[str, int]


def image_digest(image: MetadataImage) -> str:
    """A canonical text of the image's content and derived indexes (no offsets)."""
    topics = []
    for name in sorted(image.topics):
        topic = image.topics[name]
        partitions = tuple(
            (
                pid,
                r.replicas,
                r.isr,
                r.leader,
                r.leader_epoch,
                r.partition_epoch,
                r.removing_replicas,
                r.adding_replicas,
                r.leader_recovery_state,
            )
            for pid, r in sorted(topic.partitions.items())
        )
        topics.append((name, topic.topic_id, partitions))
    brokers = tuple(repr(image.brokers[b]) for b in sorted(image.brokers))
    configs = tuple(
        (key, tuple(sorted(image.configs[key].items()))) for key in sorted(image.configs)
    )
    index = image.brokers_to_isrs

    def canonical(table: dict[int, dict[bytes, set[int]]]) -> tuple[Any, ...]:
        return tuple(
            (b, tuple((t, tuple(sorted(ps))) for t, ps in sorted(table[b].items())))
            for b in sorted(table)
        )

    return repr(
        (
            tuple(topics),
            brokers,
            configs,
            image.next_producer_id,
            tuple(sorted(image.features.items())),
            canonical(index._isr),
            canonical(index._leaders),
            tuple(sorted(image.reassigning)),
            tuple(sorted(image.imbalanced)),
        )
    )


def _records(entries: list[Any]) -> list[tuple[int, int, MetadataRecord]]:
    out = []
    for entry in entries:
        if isinstance(entry.payload, bytes) and entry.payload:
            out.append((entry.offset, entry.epoch, decode_metadata_record(entry.payload)))
    return out


class MetadataChecker:
    def __init__(self, sim: ClusterSimulation) -> None:
        self.sim = sim
        self.active: dict[int, int] = {}
        self.activations = 0
        self.delete_intents: set[bytes] = set()
        self.ref = MetadataImage()
        self.ref_offset = 0
        self.digests: dict[int, str] = {0: image_digest(self.ref)}
        self.created: dict[bytes, str] = {}
        self.removed: set[bytes] = set()
        self.answers = 0
        self.writes: list[tuple[int, int, list[bytes]]] = []
        self.split_applies = 0

    # -- controllers ------------------------------------------------------------------

    def on_activate(self, node_id: int, epoch: int) -> None:
        previous = self.active.setdefault(epoch, node_id)
        if previous != node_id:
            self.sim.fail(f"two active controllers in epoch {epoch}: {previous} and {node_id}")
        self.activations += 1

    def on_delete_intent(self, records: list[MetadataRecord]) -> None:
        for record in records:
            if record.name == "RemoveTopicRecord":
                self.delete_intents.add(bytes(record.body["topic_id"]))

    def on_append(self, epoch: int, first_offset: int, payloads: list[bytes]) -> None:
        """A controller appended one write (one ControllerResult) through Raft."""
        self.writes.append((epoch, first_offset, payloads))

    def partial_writes(self) -> list[tuple[int, int, int]]:
        """(first offset, entries committed, entries written) of every write that is
        committed only in part: Raft entries are committed one by one."""
        committed = self.sim.checker.committed
        partial = []
        for epoch, first, payloads in self.writes:
            present = 0
            for i, payload in enumerate(payloads):
                offset = first + i
                if offset >= len(committed):
                    break
                entry = committed[offset]
                if entry.epoch != epoch or entry.payload != payload:
                    break
                present += 1
            if 0 < present < len(payloads):
                partial.append((first, present, len(payloads)))
        return partial

    # -- the committed log, replayed ----------------------------------------------------

    def _advance(self, offset: int) -> None:
        committed = self.sim.checker.committed
        if offset > len(committed):
            self.sim.fail(f"image asked at {offset}, only {len(committed)} entries are committed")
        for entry_offset, epoch, record in _records(committed[self.ref_offset : offset]):
            if record.name == "RemoveTopicRecord":
                topic_id = bytes(record.body["topic_id"])
                if topic_id not in self.delete_intents:
                    self.sim.fail(f"topic id {topic_id.hex()} removed without any DeleteTopics")
                self.removed.add(topic_id)
            self.ref.replay(record, entry_offset, epoch)
        self.ref_offset = max(self.ref_offset, offset)

    def image_at(self, offset: int) -> MetadataImage:
        """A fresh image of the committed log below ``offset``."""
        image = MetadataImage()
        for entry_offset, epoch, record in _records(self.sim.checker.committed[:offset]):
            image.replay(record, entry_offset, epoch)
        return image

    def digest_at(self, offset: int) -> str:
        digest = self.digests.get(offset)
        if digest is None:
            if offset >= self.ref_offset:
                self._advance(offset)
                digest = image_digest(self.ref)
            else:
                digest = image_digest(self.image_at(offset))
            self.digests[offset] = digest
        return digest

    def _inside_a_write(self, applied: int) -> bool:
        """Whether ``applied`` splits a committed controller write (the image then
        holds part of one ControllerResult: Raft commits entry by entry)."""
        committed = self.sim.checker.committed
        for epoch, first, payloads in reversed(self.writes[-50:]):
            if first < applied < first + len(payloads):
                entry = committed[first] if first < len(committed) else None
                return entry is not None and entry.epoch == epoch
        return False

    def check_image(self, node_id: int, image: MetadataImage, applied: int) -> None:
        if self._inside_a_write(applied):
            self.split_applies += 1
        if image_digest(image) != self.digest_at(applied):
            expected = self.image_at(applied)
            self.sim.fail(
                f"node {node_id} image at {applied} differs from the committed log's: "
                f"{image!r} vs {expected!r}"
            )

    # -- answers --------------------------------------------------------------------------

    def on_answer(
        self, process: ControllerProcess, api_key: int, body: dict[str, Any], response: Any
    ) -> None:
        """A controller sends ``response``: what it says succeeded must be in its image."""
        from samsa.server.controller_server import (
            CREATE_PARTITIONS,
            CREATE_TOPICS,
            DELETE_TOPICS,
            INCREMENTAL_ALTER_CONFIGS,
        )

        image = process.image
        self.answers += 1
        if api_key == CREATE_TOPICS:
            for topic in response.get("topics", ()):
                if topic["error_code"] == 0:
                    topic_id = bytes(topic["topic_id"])
                    found = image.topics_by_id.get(topic_id)
                    if found is None or found.name != topic["name"]:
                        self.sim.fail(f"created {topic['name']} answered before it is committed")
                    self.created[topic_id] = topic["name"]
        elif api_key == DELETE_TOPICS:
            for topic in response.get("responses", ()):
                if topic["error_code"] == 0 and bytes(topic["topic_id"]) in image.topics_by_id:
                    self.sim.fail(f"deleted {topic['name']} answered while it is in the image")
        elif api_key == CREATE_PARTITIONS:
            wanted = {t["name"]: t["count"] for t in body["topics"]}
            for result in response.get("results", ()):
                if result["error_code"] == 0:
                    topic = image.topics.get(result["name"])
                    if topic is None or len(topic.partitions) != wanted[result["name"]]:
                        self.sim.fail(f"partitions of {result['name']} answered, not committed")
        elif api_key == INCREMENTAL_ALTER_CONFIGS:
            ops = {
                (r["resource_type"], r["resource_name"]): r["configs"] for r in body["resources"]
            }
            for result in response.get("responses", ()):
                if result["error_code"] != 0:
                    continue
                key = (result["resource_type"], result["resource_name"])
                current = image.configs.get(key, {})
                for op in ops[key]:
                    value = op["value"] if op["config_operation"] == 0 else None
                    if current.get(op["name"]) != value:
                        self.sim.fail(f"config {op['name']} of {key} answered, not committed")

    def check_converged(self, images: dict[int, MetadataImage], end: int) -> None:
        self._advance(end)
        fresh = self.image_at(end)
        for node_id, image in images.items():
            if not images_equal(image, self.ref) or not images_equal(image, fresh):
                self.sim.fail(f"node {node_id} converged to {image!r}, committed is {self.ref!r}")
        for topic_id, name in sorted(self.created.items()):
            if topic_id not in self.removed and topic_id not in self.ref.topics_by_id:
                self.sim.fail(f"topic {name} ({topic_id.hex()}) was created and vanished")


class DataChecker:
    def __init__(self, sim: ClusterSimulation) -> None:
        self.sim = sim
        self.committed: dict[TopicPartition, list[int]] = {}
        # The leader epoch in which each committed offset was first known committed.
        self.commit_epochs: dict[TopicPartition, list[int]] = {}
        self.hw_seen: dict[tuple[int, int, TopicPartition], int] = {}
        self.leaders: dict[tuple[TopicPartition, int], int] = {}
        self.acked: dict[TopicPartition, dict[int, int]] = {}
        self.consumed: dict[TopicPartition, dict[int, int]] = {}
        self.consumer_view: dict[TopicPartition, tuple[int, int]] = {}
        self.hw_steps_back = 0
        self.elections = 0
        self.truncations = 0

    def fail(self, message: str) -> None:
        self.sim.fail(message)

    # -- replicas -----------------------------------------------------------------------

    def observe_all(self, broker: BrokerProcess) -> None:
        for tp, partition in broker.partitions.items():
            if tp[0] == DATA_TOPIC:
                self.observe(broker, tp, partition)

    def observe(self, broker: BrokerProcess, tp: TopicPartition, partition: Partition) -> None:
        """The partition's high watermark on ``broker``: check what it newly covers."""
        if tp[0] != DATA_TOPIC or partition.role not in _REPLICATED:
            return  # a STANDALONE partition (before the first metadata) serves nothing
        key = (broker.node_id, broker.incarnation, tp)
        hw = partition.high_watermark
        previous = self.hw_seen.get(key, 0)
        if hw > previous:
            log = partition.log
            assert isinstance(log, MemoryLog)
            self._check_committed(
                broker.node_id, tp, log, previous, hw, extend=True, epoch=partition.leader_epoch
            )
        self.hw_seen[key] = hw

    def _check_committed(
        self,
        node_id: int,
        tp: TopicPartition,
        log: MemoryLog,
        start: int,
        end: int,
        *,
        extend: bool,
        epoch: int = -1,
    ) -> None:
        committed = self.committed.setdefault(tp, [])
        commit_epochs = self.commit_epochs.setdefault(tp, [])
        offset = min(start, len(committed)) if extend else start
        while offset < end:
            batch = log.batch_at(offset)
            if batch is None:
                self.fail(
                    f"broker {node_id} {tp[0]}-{tp[1]}: no batch at {offset} below {end} "
                    f"(log [{log.log_start_offset}, {log.log_end_offset}))"
                )
                return
            for x in range(max(offset, batch.base_offset), min(batch.next_offset, end)):
                if x < len(committed):
                    if committed[x] != batch.batch_id:
                        self.fail(
                            f"broker {node_id} {tp[0]}-{tp[1]} holds batch {batch.batch_id} at "
                            f"committed offset {x}, committed is batch {committed[x]}"
                        )
                elif extend and x == len(committed):
                    committed.append(batch.batch_id)
                    commit_epochs.append(epoch)
                else:
                    self.fail(f"{tp[0]}-{tp[1]}: offset {x} checked beyond the committed end")
            offset = batch.next_offset

    def on_leader(self, broker: BrokerProcess, partition: Partition) -> None:
        tp = (partition.topic, partition.index)
        if tp[0] != DATA_TOPIC:
            return
        self.elections += 1
        epoch = partition.leader_epoch
        previous = self.leaders.setdefault((tp, epoch), broker.node_id)
        if previous != broker.node_id:
            self.fail(
                f"two leaders of {tp[0]}-{tp[1]} in leader epoch {epoch}: "
                f"{previous} and {broker.node_id}"
            )
        # Leader completeness, as Raft's: what was committed in an earlier leader
        # epoch is on the leader of a later one (a broker applying old metadata late
        # may still lead an old epoch for a moment; it cannot commit anything).
        commit_epochs = self.commit_epochs.get(tp, [])
        needed = 0
        while needed < len(commit_epochs) and commit_epochs[needed] < epoch:
            needed += 1
        log = partition.log
        assert isinstance(log, MemoryLog)
        if log.log_end_offset < needed:
            self.fail(
                f"broker {broker.node_id} leads {tp[0]}-{tp[1]} at epoch {epoch} with log end "
                f"{log.log_end_offset}; {needed} offsets were committed in earlier epochs"
            )
        self._check_committed(broker.node_id, tp, log, 0, needed, extend=False)

    def on_truncate(self, broker: BrokerProcess, tp: TopicPartition, offset: int) -> None:
        if tp[0] != DATA_TOPIC:
            return
        partition = broker.partitions.get(tp)
        if partition is None:
            return
        log = partition.log
        assert isinstance(log, MemoryLog)
        committed = self.committed.get(tp, [])
        cut = log.batch_at(offset)
        first = offset if cut is None else cut.base_offset
        if first >= log.log_end_offset:
            return
        self.truncations += 1
        for x in range(first, min(log.log_end_offset, len(committed))):
            batch = log.batch_at(x)
            if batch is not None and batch.batch_id == committed[x]:
                self.fail(
                    f"broker {broker.node_id} truncates {tp[0]}-{tp[1]} to {offset}, removing "
                    f"committed batch {batch.batch_id} at {x}"
                )

    def on_deleted(self, broker: BrokerProcess, tp: TopicPartition) -> None:
        if tp[0] == DATA_TOPIC:
            self.fail(f"broker {broker.node_id} deleted {tp[0]}-{tp[1]}")

    # -- clients --------------------------------------------------------------------------

    def on_ack(self, tp: TopicPartition, base: int, end: int, batch_id: int) -> None:
        committed = self.committed.get(tp, [])
        for x in range(base, end):
            if x >= len(committed) or committed[x] != batch_id:
                self.fail(
                    f"batch {batch_id} acknowledged at {tp[0]}-{tp[1]}@{base} "
                    f"is not committed there"
                )
            self.acked.setdefault(tp, {})[x] = batch_id

    def on_consume(
        self, tp: TopicPartition, batches: list[tuple[int, int, int]], hw: int, epoch: int
    ) -> None:
        committed = self.committed.get(tp, [])
        for base, next_offset, batch_id in batches:
            if next_offset > hw:
                self.fail(f"consumer read {tp[0]}-{tp[1]}@{base} above the high watermark {hw}")
            for x in range(base, next_offset):
                if x >= len(committed) or committed[x] != batch_id:
                    self.fail(
                        f"consumer read batch {batch_id} at {tp[0]}-{tp[1]}@{x}, "
                        f"which is not committed"
                    )
                self.consumed.setdefault(tp, {})[x] = batch_id
        last_epoch, last_hw = self.consumer_view.get(tp, (-1, 0))
        if epoch == last_epoch and hw < last_hw:
            self.fail(
                f"consumer saw the high watermark of {tp[0]}-{tp[1]} go from {last_hw} "
                f"to {hw} in leader epoch {epoch}"
            )
        if epoch < last_epoch:
            self.fail(f"consumer of {tp[0]}-{tp[1]} went back from epoch {last_epoch} to {epoch}")
        if hw < last_hw:
            self.hw_steps_back += 1
        self.consumer_view[tp] = (epoch, max(hw, last_hw) if epoch == last_epoch else hw)

    def check_converged(self, replicas: dict[TopicPartition, list[Partition]]) -> None:
        """Every replica of every data partition holds the same log, which holds
        every acknowledged and every consumed batch."""
        for tp, partitions in sorted(replicas.items()):
            logs = [p.log for p in partitions]
            first = logs[0]
            assert isinstance(first, MemoryLog)
            ids = [(b.base_offset, b.batch_id) for b in first.batches]
            for log in logs[1:]:
                assert isinstance(log, MemoryLog)
                if [(b.base_offset, b.batch_id) for b in log.batches] != ids:
                    self.fail(f"replicas of {tp[0]}-{tp[1]} differ after convergence")
            for what, table in (("acknowledged", self.acked), ("consumed", self.consumed)):
                for offset, batch_id in sorted(table.get(tp, {}).items()):
                    batch = first.batch_at(offset)
                    if batch is None or batch.batch_id != batch_id:
                        self.fail(f"{what} batch {batch_id} at {tp[0]}-{tp[1]}@{offset} is lost")
