"""The refusal of a group request: a Kafka error code and Kafka's message.

Shared because consumer, streams and share groups refuse requests the same way:
their checks raise ``GroupError`` wherever they find the fault, and each API
catches it once and answers with its own error response (whose fields differ
from API to API).
"""

from __future__ import annotations

from samsa.errors import ErrorCode


class GroupError(Exception):
    """A request refused with ``code`` (and Kafka's kind of message)."""

    def __init__(self, code: ErrorCode, message: str | None = None) -> None:
        super().__init__(message or code.name)
        self.code = code
        self.message = message
