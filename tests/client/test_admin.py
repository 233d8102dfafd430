"""Samsa Admin on both brokers (tansu and Samsa)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from test_consumer import produce

from conftest import BrokerAddress
from samsa.client.admin import EARLIEST, Admin, NewTopic
from samsa.client.consumer import TopicPartition
from samsa.errors import ErrorCode, KafkaError

pytestmark = pytest.mark.integration


@pytest.fixture
def admin(broker: BrokerAddress) -> Iterator[Admin]:
    a = Admin({"bootstrap.servers": broker.bootstrap})
    yield a
    a.close()


def test_create_list_describe_delete_topics(admin: Admin) -> None:
    admin.create_topics([NewTopic("adm-a", 3, 1), NewTopic("adm-b", 1, 1)])
    assert {"adm-a", "adm-b"} <= admin.list_topics()
    desc = admin.describe_topics(["adm-a"])["adm-a"]
    assert [p.partition for p in desc.partitions] == [0, 1, 2]
    assert all(p.leader >= 0 for p in desc.partitions)
    with pytest.raises(KafkaError) as info:
        admin.create_topics([NewTopic("adm-a", 1, 1)])
    assert info.value.code is ErrorCode.TOPIC_ALREADY_EXISTS
    admin.delete_topics(["adm-b"])
    assert "adm-b" not in admin.list_topics()


def test_list_offsets_and_cluster(admin: Admin, broker: BrokerAddress) -> None:
    admin.create_topics([NewTopic("adm-offsets", 1, 1)])
    produce(broker, "adm-offsets", [{"value": b"x"}])
    tp = TopicPartition("adm-offsets", 0)
    assert admin.list_offsets({tp: EARLIEST})[tp][0] == 0
    cluster = admin.describe_cluster()
    assert cluster.brokers and cluster.brokers[0].port == broker.port


def test_groups_and_their_offsets(admin: Admin, broker: BrokerAddress) -> None:
    from samsa.client.consumer import Consumer

    admin.create_topics([NewTopic("adm-group", 1, 1)])
    conf = {"bootstrap.servers": broker.bootstrap, "group.id": "adm-g", "enable.auto.commit": False}
    with Consumer(conf) as c:
        c.assign([("adm-group", 0)])
        c.commit({("adm-group", 0): 7})
    offsets = admin.list_consumer_group_offsets("adm-g", [("adm-group", 0)])
    assert offsets[TopicPartition("adm-group", 0)].offset == 7
    assert "adm-g" in {g.group_id for g in admin.list_groups()}
    admin.delete_groups(["adm-g"])
