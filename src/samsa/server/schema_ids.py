"""The schema registry's state on this broker, whether or not it serves the registry.

Produces to a topic with ``confluent.value.schema.validation`` (or
``.key.``) are checked against the ids registered in ``_schemas``, and the
console lists subjects; both ask this object.  On a node started with
``--registry-listen`` the state is the registry's own; on any other broker
a mirror of its own replays ``_schemas`` from the first time it is needed
(``samsa.registry.node.mirror`` says why every broker reads it rather than
requiring the registry everywhere).  A cluster without ``_schemas`` has no
registry: nothing is read, and every checked record is refused, saying so.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from samsa.errors import ErrorCode, KafkaError

if TYPE_CHECKING:
    from samsa.registry.node.mirror import RegistryMirror
    from samsa.registry.node.view import RegistryView
    from samsa.server.broker_base import BrokerBase

log = logging.getLogger("samsa.server")


class NoRegistry:
    """The answer where the cluster has no registry: every id is refused."""

    def __init__(self, topic: str) -> None:
        self.topic = topic

    def refusal(self, schema_id: int, topic: str, is_key: bool, strategy: str) -> str | None:
        return f"this cluster has no schema registry (no {self.topic} topic)"


class NodeSchemaIds:
    def __init__(self, broker: BrokerBase) -> None:
        self._broker = broker
        self._mirror: RegistryMirror | None = None
        self._view: RegistryView | None = None

    @property
    def topic(self) -> str:
        return str(self._broker.config["registry.topic"])

    @property
    def timeout_s(self) -> float:
        return float(self._broker.config["registry.timeout.ms"]) / 1000

    def exists(self) -> bool:
        """The cluster has a registry (its topic is in the metadata image)."""
        return self.topic in self._broker.image.topics

    @property
    def ready(self) -> bool:
        """Answers can be given without waiting (or there is nothing to read).
        Cheap, and starts nothing: a produce asks it before anything else."""
        mirror = self._mirror
        return mirror.ready if mirror is not None else not self.exists()

    def mirror(self) -> RegistryMirror:
        """The state, being read (started on the first call)."""
        if self._mirror is None:
            self._mirror = self._build()
        self._mirror.start()
        return self._mirror

    def check(self) -> RegistryView | NoRegistry:
        """Replication's ``SchemaIdCheck`` as things stand (call once ``ready``)."""
        if self._mirror is None and not self.exists():
            return NoRegistry(self.topic)
        mirror = self.mirror()
        if not mirror.ready:
            raise KafkaError(
                ErrorCode.REQUEST_TIMED_OUT,
                f"this broker is still reading the schema registry's {self.topic}",
            )
        if self._view is None:
            from samsa.registry.node.view import RegistryView

            self._view = RegistryView(mirror.state)
        return self._view

    async def wait_ready(self) -> bool:
        if self._mirror is None and not self.exists():
            return True
        return await self.mirror().wait_ready(self.timeout_s)

    async def refresh(self) -> bool:
        """Read ``_schemas`` to its end as of now (see ``RegistryMirror.refresh``)."""
        if self._mirror is None and not self.exists():
            return True
        return await self.mirror().refresh(self.timeout_s)

    async def stop(self) -> None:
        if self._mirror is not None:
            await self._mirror.stop()

    def _build(self) -> RegistryMirror:
        from samsa.registry.node.mirror import RegistryMirror
        from samsa.server.endpoints.registry_port import RegistryPort

        broker = self._broker
        client = RegistryPort(broker, broker.node.settings).kafka_client_config()
        name = f"samsa-schemas-{broker.node_id}"
        server = broker.registry
        if server is not None and server.service is not None:
            service = server.service
            self._view = service.view
            return RegistryMirror(
                client, self.topic, name, state=service.state, reader=service.reader
            )
        return RegistryMirror(client, self.topic, name)
