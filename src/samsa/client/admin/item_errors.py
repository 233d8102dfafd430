"""A broker's answer for one item (a partition, a resource, the quorum) as a KafkaError.

Batched admin answers carry an error code and message per item; the caller
decides whether an item's error fails the whole call (a config lookup) or is
part of the answer (one partition of an election).  Either way the error
names the item, so one line tells the user what went wrong where.
"""

from __future__ import annotations

from samsa.client.consumer.errors import kafka_error
from samsa.errors import ErrorCode, KafkaError


def plain_message(code: int, message: str | None) -> str:
    """The broker's message without a leading ``NAME (code): `` that repeats the code
    (some brokers put a whole formatted error there); KafkaError adds it once."""
    if not message:
        return ""
    try:
        prefix = f"{ErrorCode(code).name} ({code}): "
    except ValueError:
        return message
    return message[len(prefix) :] if message.startswith(prefix) else message


def item_error(code: int, message: str | None, what: str) -> KafkaError | None:
    """None for success, else a KafkaError naming the item (a partition, a resource)."""
    if not code:
        return None
    text = plain_message(code, message)
    return kafka_error(code, f"{what}: {text}" if text else what)


def check_item(code: int, message: str | None, what: str) -> None:
    """Raise a KafkaError naming the item unless ``code`` is 0; the broker's
    message is kept as it came (see ``item_error`` for the trimmed form)."""
    if code:
        raise kafka_error(code, f"{what}: {message}" if message else what)
