"""The authorized-operations bit fields of Metadata, DescribeCluster and DescribeGroups.

A client that asks for them (``include_*_authorized_operations``) gets one bit
per Kafka ``AclOperation`` code the caller may perform on the resource.  With
no authorizer Kafka answers every operation that *applies
to the resource type* (``AclEntry.supportedOperations``), not every operation
there is: a topic is never CLUSTER_ACTION, a cluster is never READ.  UIs read
these fields to decide which buttons to show.  When an authorizer exists, these
sets are the upper bound it filters.
"""

from __future__ import annotations

from samsa.protocol.acl import AclOperation

AUTHORIZED_OPS_UNSET = -(2**31)  # what Kafka sends when the client did not ask


def bit_field(operations: frozenset[AclOperation]) -> int:
    """Kafka's ``Utils.to32BitField``: bit ``code`` set for each operation."""
    field = 0
    for operation in operations:
        field |= 1 << operation
    return field


_O = AclOperation
TOPIC_OPERATIONS = frozenset(
    {
        _O.READ,
        _O.WRITE,
        _O.CREATE,
        _O.DESCRIBE,
        _O.DELETE,
        _O.ALTER,
        _O.DESCRIBE_CONFIGS,
        _O.ALTER_CONFIGS,
    }
)
GROUP_OPERATIONS = frozenset(
    {_O.READ, _O.DESCRIBE, _O.DELETE, _O.DESCRIBE_CONFIGS, _O.ALTER_CONFIGS}
)
CLUSTER_OPERATIONS = frozenset(
    {
        _O.CREATE,
        _O.CLUSTER_ACTION,
        _O.DESCRIBE_CONFIGS,
        _O.ALTER_CONFIGS,
        _O.IDEMPOTENT_WRITE,
        _O.ALTER,
        _O.DESCRIBE,
    }
)

TOPIC_AUTHORIZED_OPERATIONS = bit_field(TOPIC_OPERATIONS)
GROUP_AUTHORIZED_OPERATIONS = bit_field(GROUP_OPERATIONS)
CLUSTER_AUTHORIZED_OPERATIONS = bit_field(CLUSTER_OPERATIONS)


def topic_operations(asked: bool) -> int:
    return TOPIC_AUTHORIZED_OPERATIONS if asked else AUTHORIZED_OPS_UNSET


def group_operations(asked: bool) -> int:
    return GROUP_AUTHORIZED_OPERATIONS if asked else AUTHORIZED_OPS_UNSET


def cluster_operations(asked: bool) -> int:
    return CLUSTER_AUTHORIZED_OPERATIONS if asked else AUTHORIZED_OPS_UNSET
