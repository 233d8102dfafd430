"""Calls that a broker forwards to the active controller, retried while there is none.

ElectLeaders and the partition reassignment APIs are answered by the active
controller; any broker passes them on, so the Admin sends them to any broker.
Right after a controller failover (or while a new cluster elects its first
leader) the answer is NOT_CONTROLLER for the whole request: that means "ask
again shortly", so it is retried until the call's deadline, as Kafka's Admin
retries it.  Errors of single partitions are answers and are returned.
"""

from __future__ import annotations

import time
from typing import Any

from samsa.client.admin.item_errors import plain_message
from samsa.client.admin.plumbing import AdminPlumbing
from samsa.client.consumer.errors import kafka_error
from samsa.errors import ErrorCode

BACKOFF_S = 0.1
RETRIED = frozenset({ErrorCode.NOT_CONTROLLER})


def call_controller(
    admin: AdminPlumbing, api_key: int, body: dict[str, Any], timeout_ms: int
) -> Any:
    """Send through any broker; raise the top-level error unless it is NOT_CONTROLLER
    and time is left."""
    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        left_ms = max(1, int((deadline - time.monotonic()) * 1000))
        resp = admin._call(None, api_key, body, left_ms)
        code = resp.get("error_code", 0)
        if not code:
            return resp
        error = kafka_error(code, plain_message(code, resp.get("error_message")))
        if error.code not in RETRIED or time.monotonic() + BACKOFF_S > deadline:
            raise error
        time.sleep(BACKOFF_S)
