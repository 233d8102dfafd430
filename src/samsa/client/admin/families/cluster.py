"""The cluster through Admin: DescribeCluster (60), or Metadata (3) where a broker lacks it.

The brokers, the controller and the cluster id; brokers older than
DescribeCluster answer UNSUPPORTED_VERSION, and the same facts then come from
a Metadata answer, as Kafka's Admin does.
"""

from __future__ import annotations

from samsa.client.admin.item_errors import check_item
from samsa.client.admin.plumbing import AdminPlumbing
from samsa.client.admin.results import BrokerInfo, ClusterDescription
from samsa.errors import ErrorCode, KafkaError

DESCRIBE_CLUSTER = 60


def describe_cluster(admin: AdminPlumbing, timeout_ms: int) -> ClusterDescription:
    """DescribeCluster where the broker has it, else the same facts from Metadata."""
    try:
        resp = admin._call(
            None, DESCRIBE_CLUSTER,
            {"include_cluster_authorized_operations": False, "endpoint_type": 1},
            timeout_ms,
        )  # fmt: skip
        check_item(resp["error_code"], resp.get("error_message"), "describe cluster")
        brokers = [
            BrokerInfo(b["broker_id"], b["host"], b["port"], b.get("rack")) for b in resp["brokers"]
        ]
    except KafkaError as exc:
        if exc.code is not ErrorCode.UNSUPPORTED_VERSION:
            raise
        resp = admin._metadata([], timeout_ms)
        brokers = [
            BrokerInfo(b["node_id"], b["host"], b["port"], b.get("rack")) for b in resp["brokers"]
        ]
    return ClusterDescription(resp.get("cluster_id"), resp.get("controller_id", -1), tuple(brokers))
