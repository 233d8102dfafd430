"""The broker's changes of metadata, forwarded to the active controller.

A broker never writes metadata itself: topics it creates (internal ones on
first use, a client's CreateTopics), ISR changes it asks for as a leader and
the producer-id blocks it hands out all go to the active controller
(``ControllerLink``), and the committed records come back through the loader
like any other.  This holds how long each kind of request may take and which
may be resent when an attempt runs long.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from samsa.errors import ErrorCode, KafkaError

if TYPE_CHECKING:
    from samsa.controller.image.metadata_image import MetadataImage
    from samsa.protocol.envelope import RequestOrigin
    from samsa.server.metadata.controller_link import ControllerLink

log = logging.getLogger("samsa.server")

CREATE_TOPICS = 19
ALTER_PARTITION = 56
ALLOCATE_PRODUCER_IDS = 67
# Forwarded requests resent when an attempt runs long: a second producer-id block
# is just skipped.  Not ISR changes, though harmless twice: one of thousands of
# partitions waits seconds behind a commit, and its resend doubled the work of a
# controller already behind (Kafka's AlterPartitionManager waits 30 s).
RESENDABLE_FORWARDS = frozenset({ALLOCATE_PRODUCER_IDS})
ISR_CHANGE_TIMEOUT_MS = 30_000
"""How long an ISR change waits for the controller's answer (Kafka's
controller.socket.timeout.ms): one of 9,000 partitions took the controller
over the 10 s other forwards get while a cluster of 11,000 settled, and each
retry sent all of them again."""


class ControllerForwarding:
    """Requests of one broker to the active controller, with their timeouts."""

    def __init__(
        self,
        link: ControllerLink,
        request_timeout_ms: int,
        image: Callable[[], MetadataImage],
    ) -> None:
        self._link = link
        self._default_timeout_ms = request_timeout_ms * 5
        self._image = image

    async def forward(
        self,
        api_key: int,
        version: int,
        body: dict[str, Any],
        *,
        origin: RequestOrigin | None = None,
    ) -> dict[str, Any]:
        """Send a request to the active controller; KafkaError if none answers.
        ``origin``: the client the controller judges it as (an Envelope's).

        Only producer-id blocks may be resent after a slow attempt:
        a client's CreateTopics applied twice answers TOPIC_ALREADY_EXISTS."""
        from samsa.server.metadata.controller_link import ControllerUnavailable

        # A request that says how long its client waits (CreateTopics and the
        # like) gets that long: creating thousands of partitions can take the
        # controller longer than the default 10 s on a busy cluster.
        default_ms = self._default_timeout_ms
        if api_key == ALTER_PARTITION:
            default_ms = ISR_CHANGE_TIMEOUT_MS
        asked_ms = body.get("timeout_ms")
        timeout_ms = max(default_ms, asked_ms) if isinstance(asked_ms, int) else default_ms
        try:
            return await self._link.request(
                api_key,
                version,
                body,
                timeout_ms=timeout_ms,
                resend_when_slow=api_key in RESENDABLE_FORWARDS,
                origin=origin,
            )
        except ControllerUnavailable as exc:
            raise KafkaError(ErrorCode.REQUEST_TIMED_OUT, str(exc)) from None

    async def alter_partition(self, body: dict[str, Any]) -> dict[str, Any]:
        """ISR changes this broker asks for as a leader go to the controller."""
        return await self.forward(ALTER_PARTITION, 3, body)

    async def create_internal_topic(
        self, name: str, partitions: int, replication_factor: int, configs: dict[str, str]
    ) -> None:
        """Create an internal topic (already there is fine), its replication
        capped at the brokers alive now."""
        live = max(1, len(self._image().active_brokers()))
        if replication_factor > live:
            log.warning(
                "creating %s with replication factor %d: only %d brokers are alive (asked for %d)",
                name,
                live,
                live,
                replication_factor,
            )
            replication_factor = live
        body = {
            "topics": [
                {
                    "name": name,
                    "num_partitions": partitions,
                    "replication_factor": replication_factor,
                    "assignments": [],
                    "configs": [{"name": k, "value": v} for k, v in configs.items()],
                }
            ],
            "timeout_ms": 30000,
            "validate_only": False,
        }
        response = await self.forward(CREATE_TOPICS, 7, body)
        code = response["topics"][0]["error_code"]
        if code not in (0, ErrorCode.TOPIC_ALREADY_EXISTS):
            raise KafkaError(ErrorCode(code), response["topics"][0].get("error_message") or name)
