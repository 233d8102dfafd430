"""The share-state APIs (keys 83-86): partition leaders to the share coordinator.

A share partition's durable state (start offset and in-flight state batches)
lives in ``__share_group_state``; the leader of the data partition reads it
when it takes the partition over and writes it after acknowledgements, and
the group coordinator initializes and deletes it.  ReadShareGroupStateSummary
reads only the start offset (for describing a group's offsets and lag).
WriteShareGroupState v1 and ReadShareGroupStateSummary v1 (KIP-1226) carry a
``delivery_complete_count``: how many offsets at or past the start offset are
delivered for good (-1: not known), from which a share partition's lag follows.
"""

from samsa.protocol.schema import F, Field, api

STATE_BATCH = [
    F("first_offset", "int64"),
    F("last_offset", "int64"),
    F("delivery_state", "int8"),
    F("delivery_count", "int16"),
]


def _request(partition_fields: list[Field]) -> list[Field]:
    return [
        F("group_id", "string"),
        F(
            "topics",
            "[]struct",
            fields=[
                F("topic_id", "uuid"),
                F("partitions", "[]struct", fields=[F("partition", "int32"), *partition_fields]),
            ],
        ),
    ]


def _response(partition_fields: list[Field]) -> list[Field]:
    return [
        F(
            "results",
            "[]struct",
            fields=[
                F("topic_id", "uuid"),
                F(
                    "partitions",
                    "[]struct",
                    fields=[
                        F("partition", "int32"),
                        F("error_code", "int16"),
                        F("error_message", "string", nullable="0+", default=None),
                        *partition_fields,
                    ],
                ),
            ],
        )
    ]


APIS = [
    api(
        83,
        "InitializeShareGroupState",
        valid="0",
        flexible="0+",
        request=_request([F("state_epoch", "int32"), F("start_offset", "int64")]),
        response=_response([]),
    ),
    api(
        84,
        "ReadShareGroupState",
        valid="0",
        flexible="0+",
        request=_request([F("leader_epoch", "int32")]),
        response=_response(
            [
                F("state_epoch", "int32"),
                F("start_offset", "int64"),
                F("state_batches", "[]struct", fields=STATE_BATCH),
            ]
        ),
    ),
    api(
        85,
        "WriteShareGroupState",
        valid="0-1",
        flexible="0+",
        request=_request(
            [
                F("state_epoch", "int32"),
                F("leader_epoch", "int32"),
                F("start_offset", "int64"),
                F("delivery_complete_count", "int32", "1+", default=-1),
                F("state_batches", "[]struct", fields=STATE_BATCH),
            ]
        ),
        response=_response([]),
    ),
    api(
        87,
        "ReadShareGroupStateSummary",
        valid="0-1",
        flexible="0+",
        request=_request([F("leader_epoch", "int32")]),
        response=_response(
            [
                F("state_epoch", "int32"),
                F("leader_epoch", "int32"),
                F("start_offset", "int64"),
                F("delivery_complete_count", "int32", "1+", default=-1),
            ]
        ),
    ),
    api(
        86,
        "DeleteShareGroupState",
        valid="0",
        flexible="0+",
        request=_request([]),
        response=_response([]),
    ),
]
