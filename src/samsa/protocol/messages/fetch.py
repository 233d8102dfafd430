"""Fetch (key 1): read record batches from partitions.

Transcribed from Kafka's FetchRequest/FetchResponse.json, versions 4-18 (Kafka
4.0 dropped 0-3).  Fetch sessions arrive in v7; v12 is the first flexible
version and adds the tagged diverging-epoch, current-leader and snapshot-id
structs.  v13 names topics by ``topic_id`` instead of ``topic``; v15 (KIP-903)
moves the follower's id into the tagged ``replica_state`` (with its broker
epoch); v16 adds the response's tagged ``node_endpoints`` (KIP-951); v17 the
follower's tagged ``replica_directory_id`` (KIP-853); v18 the follower's tagged
``high_watermark`` (KIP-1166, default Long.MAX_VALUE: "not supported").

The broker's Fetch handler addresses topics by name; for v13+ the router
resolves the ids first (server/handlers/topic_ids.py).  KRaft's followers fetch
the metadata log with these versions too.  Response ``records`` may be a file
region: the compiled encoder splices it out as its own chunk for sendfile.
"""

from samsa.protocol.schema import F, api

API = api(
    1,
    "Fetch",
    listeners=("broker", "controller"),
    valid="4-18",
    flexible="12+",
    request=[
        F("cluster_id", "string", "12+", nullable="12+", tag=0, tagged="12+", default=None),
        F("replica_id", "int32", "0-14", default=-1),
        F(
            "replica_state",
            "struct",
            "15+",
            tag=1,
            tagged="15+",
            fields=[
                F("replica_id", "int32", "15+", default=-1),
                F("replica_epoch", "int64", "15+", default=-1),
            ],
        ),
        F("max_wait_ms", "int32"),
        F("min_bytes", "int32"),
        F("max_bytes", "int32", "3+", default=2147483647),
        F("isolation_level", "int8", "4+", default=0),
        F("session_id", "int32", "7+", default=0),
        F("session_epoch", "int32", "7+", default=-1),
        F(
            "topics",
            "[]struct",
            fields=[
                F("topic", "string", "0-12"),
                F("topic_id", "uuid", "13+"),
                F(
                    "partitions",
                    "[]struct",
                    fields=[
                        F("partition", "int32"),
                        F("current_leader_epoch", "int32", "9+", default=-1),
                        F("fetch_offset", "int64"),
                        F("last_fetched_epoch", "int32", "12+", default=-1),
                        F("log_start_offset", "int64", "5+", default=-1),
                        F("partition_max_bytes", "int32"),
                        F("replica_directory_id", "uuid", "17+", tag=0, tagged="17+"),
                        F(
                            "high_watermark",
                            "int64",
                            "18+",
                            tag=1,
                            tagged="18+",
                            default=9223372036854775807,
                        ),
                    ],
                ),
            ],
        ),
        F(
            "forgotten_topics_data",
            "[]struct",
            "7+",
            fields=[
                F("topic", "string", "7-12"),
                F("topic_id", "uuid", "13+"),
                F("partitions", "[]int32", "7+"),
            ],
        ),
        F("rack_id", "string", "11+", default=""),
    ],
    response=[
        F("throttle_time_ms", "int32", "1+"),
        F("error_code", "int16", "7+"),
        F("session_id", "int32", "7+", default=0),
        F(
            "responses",
            "[]struct",
            fields=[
                F("topic", "string", "0-12"),
                F("topic_id", "uuid", "13+"),
                F(
                    "partitions",
                    "[]struct",
                    fields=[
                        F("partition_index", "int32"),
                        F("error_code", "int16"),
                        F("high_watermark", "int64"),
                        F("last_stable_offset", "int64", "4+", default=-1),
                        F("log_start_offset", "int64", "5+", default=-1),
                        F(
                            "diverging_epoch",
                            "struct",
                            "12+",
                            tag=0,
                            tagged="12+",
                            fields=[
                                F("epoch", "int32", "12+", default=-1),
                                F("end_offset", "int64", "12+", default=-1),
                            ],
                        ),
                        F(
                            "current_leader",
                            "struct",
                            "12+",
                            tag=1,
                            tagged="12+",
                            fields=[
                                F("leader_id", "int32", "12+", default=-1),
                                F("leader_epoch", "int32", "12+", default=-1),
                            ],
                        ),
                        F(
                            "snapshot_id",
                            "struct",
                            "12+",
                            tag=2,
                            tagged="12+",
                            fields=[
                                F("end_offset", "int64", default=-1),
                                F("epoch", "int32", default=-1),
                            ],
                        ),
                        F(
                            "aborted_transactions",
                            "[]struct",
                            "4+",
                            nullable="4+",
                            fields=[
                                F("producer_id", "int64", "4+"),
                                F("first_offset", "int64", "4+"),
                            ],
                        ),
                        F("preferred_read_replica", "int32", "11+", default=-1),
                        F("records", "records", nullable="0+"),
                    ],
                ),
            ],
        ),
        F(
            "node_endpoints",
            "[]struct",
            "16+",
            tag=0,
            tagged="16+",
            fields=[
                F("node_id", "int32", "16+"),
                F("host", "string", "16+"),
                F("port", "int32", "16+"),
                F("rack", "string", "16+", nullable="16+", default=None),
            ],
        ),
    ],
)
