"""The single-node metadata file of earlier releases becomes equivalent metadata records."""

from __future__ import annotations

from pathlib import Path

from samsa.controller.legacy_migration import (
    legacy_metadata_exists,
    legacy_records,
    retire_legacy_metadata,
)
from samsa.controller.metadata_log import MetadataLog
from samsa.controller.records import (
    partitions_record,
    producer_ids_record,
    remove_topic_record,
    topic_config_record,
    topic_record,
)
from samsa.controller.snapshot_records import image_from_records

ORDERS = bytes(range(16))
GONE = bytes(range(1, 17))


def _legacy_dir(tmp_path: Path) -> Path:
    old = MetadataLog(tmp_path)
    old.append([topic_record("orders", ORDERS, 2, {"retention.ms": "1000"})])
    old.append([topic_record("gone", GONE, 1, {})])
    old.append(
        [
            partitions_record("orders", 3),
            topic_config_record("orders", {"cleanup.policy": "compact"}),
        ]
    )
    old.append([remove_topic_record("gone"), producer_ids_record(2000)])
    old.close()
    return tmp_path


def test_the_records_describe_the_same_topics_configs_and_producer_ids(tmp_path: Path) -> None:
    image = image_from_records(legacy_records(_legacy_dir(tmp_path), node_id=7))
    assert set(image.topics) == {"orders"}
    topic = image.topics["orders"]
    assert topic.topic_id == ORDERS
    assert sorted(topic.partitions) == [0, 1, 2]
    for registration in topic.partitions.values():
        assert (registration.replicas, registration.isr, registration.leader) == ((7,), (7,), 7)
        assert registration.leader_epoch == 0
    assert image.topic_configs("orders") == {"cleanup.policy": "compact"}
    assert image.next_producer_id >= 2000


def test_the_old_file_is_kept_under_a_new_name(tmp_path: Path) -> None:
    data_dir = _legacy_dir(tmp_path)
    assert legacy_metadata_exists(data_dir)
    kept = retire_legacy_metadata(data_dir)
    assert not legacy_metadata_exists(data_dir)
    assert kept.exists() and kept.name == "cluster-metadata.log.migrated"
