"""FetchSnapshot (key 59): a KRaft follower copies the leader's snapshot in chunks.

Transcribed from Kafka's FetchSnapshotRequest/Response.json, versions 0-1,
flexible from v0.  v1 (KIP-853) adds the follower's tagged directory id and the
response's tagged leader endpoints.  ``unaligned_records`` is a slice of the
snapshot file starting at ``position``: it need not end on a batch boundary.
"""

from samsa.protocol.schema import F, api

API = api(
    59,
    "FetchSnapshot",
    listeners=("controller",),
    valid="0-1",
    flexible="0+",
    request=[
        F("cluster_id", "string", nullable="0+", tag=0, tagged="0+", default=None),
        F("replica_id", "int32", default=-1),
        F("max_bytes", "int32", default=0x7FFFFFFF),
        F(
            "topics",
            "[]struct",
            fields=[
                F("name", "string"),
                F(
                    "partitions",
                    "[]struct",
                    fields=[
                        F("partition", "int32"),
                        F("current_leader_epoch", "int32"),
                        F(
                            "snapshot_id",
                            "struct",
                            fields=[F("end_offset", "int64"), F("epoch", "int32")],
                        ),
                        F("position", "int64"),
                        F("replica_directory_id", "uuid", "1+", tag=0, tagged="1+"),
                    ],
                ),
            ],
        ),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        F(
            "topics",
            "[]struct",
            fields=[
                F("name", "string"),
                F(
                    "partitions",
                    "[]struct",
                    fields=[
                        F("index", "int32"),
                        F("error_code", "int16"),
                        F(
                            "snapshot_id",
                            "struct",
                            fields=[F("end_offset", "int64"), F("epoch", "int32")],
                        ),
                        F(
                            "current_leader",
                            "struct",
                            tag=0,
                            tagged="0+",
                            fields=[F("leader_id", "int32"), F("leader_epoch", "int32")],
                        ),
                        F("size", "int64"),
                        F("position", "int64"),
                        F("unaligned_records", "records"),
                    ],
                ),
            ],
        ),
        F(
            "node_endpoints",
            "[]struct",
            "1+",
            tag=0,
            tagged="1+",
            fields=[
                F("node_id", "int32", "1+"),
                F("host", "string", "1+"),
                F("port", "uint16", "1+"),
            ],
        ),
    ],
)
