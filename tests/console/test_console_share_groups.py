"""The console's share-group API: members, start offset, in-flight and archived records."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from confluent_kafka import AcknowledgeType, Producer, ShareConsumer
from confluent_kafka.admin import AdminClient, NewTopic
from playwright.sync_api import expect

from .conftest import api, console_address, console_broker


def test_share_groups_show_members_and_records_by_state(tmp_path: Path, page: Any) -> None:
    settings = {
        "share.auto.offset.reset": "earliest",
        "share.coordinator.state.topic.num.partitions": "1",
    }
    with console_broker(tmp_path / "data", settings) as broker:
        boot, url = broker.bootstrap, console_address(broker)
        admin = AdminClient({"bootstrap.servers": boot})
        admin.create_topics([NewTopic("queue", 1, 1)])["queue"].result(15)
        producer = Producer({"bootstrap.servers": boot})
        for i in range(6):
            producer.produce("queue", value=b"m%d" % i, partition=0)
        assert producer.flush(15) == 0

        consumer = ShareConsumer(
            {
                "bootstrap.servers": boot,
                "group.id": "console-share",
                "share.acknowledgement.mode": "explicit",
                "client.id": "console-share-client",
            }
        )
        consumer.subscribe(["queue"])
        try:
            got = []
            while len(got) < 6:  # bounded by the test timeout
                got += [m for m in consumer.poll(0.5) if m.error() is None]
            for m in got[:3]:
                consumer.acknowledge(m, AcknowledgeType.ACCEPT)
            consumer.acknowledge(got[3], AcknowledgeType.REJECT)
            for m in got[4:]:
                consumer.acknowledge(m, AcknowledgeType.RELEASE)
            consumer.commit_sync(15)

            status, body = api(url, "/api/share-groups")
            assert status == 200 and body["total"] == 1
            (group,) = body["groups"]
            assert group["group"] == "console-share" and group["state"] == "Stable"
            (member,) = group["members"]
            assert member["client_id"] == "console-share-client"
            assert member["assignment"] == {"queue": [0]}
            (partition,) = group["partitions"]
            assert partition["topic"] == "queue" and partition["start_offset"] == 4
            assert partition["log_end_offset"] == 6
            assert partition["archived_total"] == 1
            assert partition["in_flight"]["available"] == 2

            page.goto(url)
            cells = page.locator('#share-groups tr[data-share-group="console-share"] td')
            expect(cells.nth(1)).to_have_text("Stable")
            expect(cells.nth(3)).to_have_text("2")
            expect(cells.nth(4)).to_have_text("1")
        finally:
            consumer.close()
