"""Random histories of broker and topic events keep the partition invariants.

Each example replays a random sequence of operations (registrations, heartbeats,
fencing by session expiry or on request, controlled shutdowns, topic creation
and deletion, ISR changes from leaders, elections, reassignments, unclean
configs, polls) through the QuorumController, committing every result, and checks
after each step:

* every ISR is a non-empty set of the partition's replicas;
* a leader is in the ISR or -1, and is an active broker;
* leader and partition epochs never go back, and every change moves the
  partition epoch;
* after a poll, every partition with an active in-sync replica has a leader;
* the image equals the image rebuilt from its snapshot records (indexes included).
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.controller.harness import Cluster

from samsa.controller.controller_config import ControllerConfig
from samsa.controller.image.metadata_image import RESOURCE_TOPIC, images_equal
from samsa.controller.image.registrations import NO_LEADER
from samsa.controller.snapshot_records import image_from_records, snapshot_records

OPS = (
    "register",
    "heartbeat",
    "fence",
    "expire",
    "shutdown",
    "create",
    "delete",
    "shrink",
    "expand",
    "elect_preferred",
    "elect_unclean",
    "reassign",
    "cancel",
    "unclean_config",
    "poll",
)
BROKERS = 5


def apply(c: Cluster, op: str, a: int, b: int) -> None:
    broker = a % BROKERS + 1
    topics = sorted(c.image.topics)
    if op == "register":
        generation = b % 2
        c.advance(10_000 * (b % 2))
        c.register(broker, rack=f"r{broker % 2}", generation=generation)
    elif op == "heartbeat":
        if broker in c.image.brokers:
            c.heartbeat(broker)
    elif op == "fence":
        if broker in c.image.brokers:
            c.heartbeat(broker, want_fence=True)
    elif op == "shutdown":
        if broker in c.image.brokers:
            c.heartbeat(broker, want_shut_down=True)
    elif op == "expire":
        c.advance(5_000)
        for other, registration in c.image.brokers.items():
            if other != broker and not registration.fenced:
                c.heartbeat(other)
        c.advance(5_000)
        c.poll()
    elif op == "create":
        c.create_topic(f"t{b % 7}", partitions=a % 3 + 1, replication_factor=b % 3 + 1)
    elif op == "delete" and topics:
        c.run(c.controller.delete_topics, {"topic_names": [topics[b % len(topics)]]})
    elif op in ("shrink", "expand") and topics:
        name = topics[b % len(topics)]
        partition_id = a % len(c.image.topics[name].partitions)
        registration = c.partition(name, partition_id)
        if registration.leader == NO_LEADER:
            return
        if op == "shrink":
            candidates = [r for r in registration.isr if r != registration.leader]
        else:
            candidates = [r for r in registration.replicas if r not in registration.isr]
        if not candidates:
            return
        chosen = candidates[a % len(candidates)]
        if op == "shrink":
            new_isr = [r for r in registration.isr if r != chosen]
        else:
            new_isr = [*registration.isr, chosen]
        c.alter_partition(
            name,
            partition_id,
            new_isr,
            recovery=0 if op == "expand" else registration.leader_recovery_state,
        )
    elif op in ("elect_preferred", "elect_unclean"):
        c.run(
            c.controller.elect_leaders,
            {"election_type": 0 if op == "elect_preferred" else 1, "topic_partitions": None},
        )
    elif op in ("reassign", "cancel") and topics:
        name = topics[b % len(topics)]
        partition_id = a % len(c.image.topics[name].partitions)
        target = None
        if op == "reassign":
            size = b % 3 + 1
            target = [((a + i * (b % 4 + 1)) % BROKERS) + 1 for i in range(size)]
            target = list(dict.fromkeys(target))
        c.run(
            c.controller.alter_partition_reassignments,
            {
                "topics": [
                    {
                        "name": name,
                        "partitions": [{"partition_index": partition_id, "replicas": target}],
                    }
                ]
            },
        )
    elif op == "unclean_config" and topics:
        c.run(
            c.controller.incremental_alter_configs,
            {
                "resources": [
                    {
                        "resource_type": RESOURCE_TOPIC,
                        "resource_name": topics[b % len(topics)],
                        "configs": [
                            {
                                "name": "unclean.leader.election.enable",
                                "config_operation": 0,
                                "value": "true" if a % 2 else "false",
                            }
                        ],
                    }
                ]
            },
        )
    elif op == "poll":
        c.advance(1_000)
        c.poll()


def check(
    c: Cluster, epochs: dict[tuple[bytes, int], tuple[int, int, object]], after_poll: bool
) -> None:
    image = c.image
    for topic, partition_id, registration in image.iter_partitions():
        key = (topic.topic_id, partition_id)
        isr, replicas = registration.isr, registration.replicas
        assert isr and set(isr) <= set(replicas), registration
        assert len(set(isr)) == len(isr) and len(set(replicas)) == len(replicas), registration
        assert set(registration.adding_replicas) <= set(replicas)
        assert set(registration.removing_replicas) <= set(replicas)
        if registration.leader != NO_LEADER:
            assert registration.leader in isr, registration
            assert image.is_active(registration.leader), (registration, image.brokers)
        elif after_poll:
            assert not any(image.is_active(r) for r in isr), registration
        previous = epochs.get(key)
        if previous is not None:
            leader_epoch, partition_epoch, old = previous
            assert registration.leader_epoch >= leader_epoch
            assert registration.partition_epoch >= partition_epoch
            if registration != old:
                assert registration.partition_epoch > partition_epoch
        epochs[key] = (registration.leader_epoch, registration.partition_epoch, registration)
    rebuilt = image_from_records(snapshot_records(image))
    assert images_equal(image, rebuilt)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    steps=st.lists(
        st.tuples(st.sampled_from(OPS), st.integers(0, 1000), st.integers(0, 1000)),
        min_size=10,
        max_size=60,
    ),
    seed=st.integers(0, 100),
)
def test_random_histories_keep_partition_invariants(
    steps: list[tuple[str, int, int]], seed: int
) -> None:
    c = Cluster(ControllerConfig(broker_session_timeout_ms=9000), seed=seed)
    c.start_brokers([1, 2, 3, 4])
    c.create_topic("a", partitions=4, replication_factor=3)
    c.create_topic("b", partitions=2, replication_factor=2)
    epochs: dict[tuple[bytes, int], tuple[int, int, object]] = {}
    for op, a, b in steps:
        apply(c, op, a, b)
        check(c, epochs, after_poll=op in ("poll", "expire"))
