"""Topic lifecycle: validate, record in the metadata log, then create or remove logs.

The metadata record is written (and fsynced) before the partition logs change,
so after a crash the metadata log is the truth: on start, logs of topics it does
not know are removed, and missing logs of known topics are created.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Callable

from samsa.controller.image import MetadataImage, TopicImage
from samsa.controller.metadata_log import MetadataLog
from samsa.controller.records import (
    partitions_record,
    producer_ids_record,
    remove_topic_record,
    topic_config_record,
    topic_record,
)
from samsa.errors import ConfigError, ErrorCode, KafkaError
from samsa.replication.replica_manager import ReplicaManager
from samsa.storage.log_config import LogConfig

log = logging.getLogger("samsa.server")

_LEGAL = re.compile(r"^[a-zA-Z0-9._-]+$")
MAX_TOPIC_NAME = 249
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})
PRODUCER_ID_BLOCK = 1000


def validate_topic_name(name: str) -> None:
    if not name:
        raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, "topic name is empty")
    if name in (".", ".."):
        raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, f"topic name cannot be {name!r}")
    if len(name) > MAX_TOPIC_NAME:
        raise KafkaError(
            ErrorCode.INVALID_TOPIC_EXCEPTION,
            f"topic name is {len(name)} characters, the limit is {MAX_TOPIC_NAME}",
        )
    if not _LEGAL.match(name):
        raise KafkaError(
            ErrorCode.INVALID_TOPIC_EXCEPTION,
            f"topic name {name!r} has characters other than ASCII alphanumerics, '.', '_' and '-'",
        )


class TopicManager:
    def __init__(
        self,
        metadata_log: MetadataLog,
        image: MetadataImage,
        replicas: ReplicaManager,
        topic_defaults: Callable[[], dict[str, str]],
        default_partitions: int,
    ) -> None:
        self.metadata_log = metadata_log
        self.image = image
        self.replicas = replicas
        self._topic_defaults = topic_defaults
        self.default_partitions = default_partitions
        self._next_producer_id = image.next_producer_id_block
        self._producer_id_limit = image.next_producer_id_block

    def _commit(self, records: list[dict[str, object]]) -> None:
        self.metadata_log.append(records)
        for record in records:
            self.image.replay(record)

    def effective_config(self, overrides: dict[str, str]) -> dict[str, str]:
        merged = dict(self._topic_defaults())
        merged.update(overrides)
        return merged

    def validate_configs(self, overrides: dict[str, str]) -> None:
        try:
            LogConfig.from_dict(self.effective_config(overrides))
        except ConfigError as exc:
            raise KafkaError(ErrorCode.INVALID_CONFIG, str(exc)) from None

    # ------------------------------------------------------------------ reconcile on start
    def reconcile(self) -> None:
        """Make the logs on disk match the metadata image after a restart or crash."""
        known = {name: topic for name, topic in self.image.topics.items()}
        for partition in list(self.replicas.partitions()):
            topic = known.get(partition.topic)
            if topic is None or partition.index >= topic.partitions:
                log.warning(
                    "removing log %s-%d: its topic is not in the metadata log",
                    partition.topic,
                    partition.index,
                )
                self.replicas.delete(partition.topic, partition.index)
        for topic in known.values():
            config = self.effective_config(topic.configs)
            for index in range(topic.partitions):
                if self.replicas.get(topic.name, index) is None:
                    self.replicas.create(topic.name, index, config)

    # ------------------------------------------------------------------ topic operations
    def create_topic(
        self,
        name: str,
        partitions: int,
        replication_factor: int,
        configs: dict[str, str],
        *,
        validate_only: bool = False,
    ) -> TopicImage:
        validate_topic_name(name)
        if name in self.image.topics:
            raise KafkaError(ErrorCode.TOPIC_ALREADY_EXISTS, f"topic {name!r} already exists")
        if partitions == -1:
            partitions = self.default_partitions
        if partitions <= 0:
            raise KafkaError(
                ErrorCode.INVALID_PARTITIONS, f"number of partitions must be > 0, got {partitions}"
            )
        if replication_factor not in (-1, 1):
            raise KafkaError(
                ErrorCode.INVALID_REPLICATION_FACTOR,
                f"replication factor {replication_factor} is larger than the 1 available broker",
            )
        self.validate_configs(configs)
        topic_id = uuid.uuid4().bytes
        if validate_only:
            return TopicImage(name, topic_id, partitions, dict(configs))
        self._commit([topic_record(name, topic_id, partitions, configs)])
        effective = self.effective_config(configs)
        for index in range(partitions):
            self.replicas.create(name, index, effective)
        log.info("created topic %s with %d partitions", name, partitions)
        return self.image.topics[name]

    def delete_topic(self, name: str) -> TopicImage:
        topic = self.image.topics.get(name)
        if topic is None:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"topic {name!r} does not exist")
        self._commit([remove_topic_record(name)])
        for index in range(topic.partitions):
            self.replicas.delete(name, index)
        log.info("deleted topic %s", name)
        return topic

    def create_partitions(self, name: str, count: int, *, validate_only: bool = False) -> None:
        topic = self.image.topics.get(name)
        if topic is None:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"topic {name!r} does not exist")
        if count <= topic.partitions:
            raise KafkaError(
                ErrorCode.INVALID_PARTITIONS,
                f"topic {name!r} has {topic.partitions} partitions; the new count {count} must be larger",
            )
        if validate_only:
            return
        old = topic.partitions
        self._commit([partitions_record(name, count)])
        effective = self.effective_config(topic.configs)
        for index in range(old, count):
            self.replicas.create(name, index, effective)

    def set_topic_configs(
        self, name: str, configs: dict[str, str], *, validate_only: bool = False
    ) -> None:
        topic = self.image.topics.get(name)
        if topic is None:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"topic {name!r} does not exist")
        self.validate_configs(configs)
        if validate_only:
            return
        self._commit([topic_config_record(name, configs)])
        self.replicas.log_manager.update_config(
            name, LogConfig.from_dict(self.effective_config(configs))
        )

    # ------------------------------------------------------------------ producer ids
    def allocate_producer_id(self) -> int:
        """Hand out a producer id never used before, also across restarts.

        Ids are reserved in blocks through the metadata log; a restart skips the
        rest of the block that was in use.
        """
        if self._next_producer_id >= self._producer_id_limit:
            start = max(self.image.next_producer_id_block, self._next_producer_id)
            self._commit([producer_ids_record(start + PRODUCER_ID_BLOCK)])
            self._next_producer_id = start
            self._producer_id_limit = start + PRODUCER_ID_BLOCK
        pid = self._next_producer_id
        self._next_producer_id += 1
        return pid
