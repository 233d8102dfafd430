"""Channels to the nodes of a cluster, keyed by node id.

Where a node listens can change (a broker re-registers with new listeners, a
voter is added with its endpoints), so the pool is told addresses and keeps a
channel per node only while the address stays the same.
"""

from __future__ import annotations

import asyncio
import contextlib

from samsa.net.channel import ChannelSecurity, NodeChannel, Traffic


class ChannelPool:
    def __init__(
        self,
        *,
        client_id: str = "samsa-node",
        connect_timeout_ms: int = 2000,
        request_timeout_ms: int = 30000,
        security: ChannelSecurity | None = None,
    ) -> None:
        self.security = security
        self.client_id = client_id
        self.connect_timeout_ms = connect_timeout_ms
        self.request_timeout_ms = request_timeout_ms
        self._addresses: dict[int, tuple[str, int]] = {}
        self._channels: dict[int, NodeChannel] = {}
        self._by_address: dict[tuple[str, int], NodeChannel] = {}
        self._closing: set[asyncio.Task[None]] = set()
        self.traffic = Traffic()
        """What every channel of the pool sent and received, together."""

    def set_address(self, node_id: int, host: str, port: int) -> None:
        if self._addresses.get(node_id) == (host, port):
            return
        self._addresses[node_id] = (host, port)
        self._retire(node_id)

    def address(self, node_id: int) -> tuple[str, int] | None:
        return self._addresses.get(node_id)

    def forget(self, node_id: int) -> None:
        self._addresses.pop(node_id, None)
        self._retire(node_id)

    def channel(self, node_id: int) -> NodeChannel | None:
        """The channel to ``node_id``, or None when its address is unknown."""
        channel = self._channels.get(node_id)
        if channel is not None:
            return channel
        address = self._addresses.get(node_id)
        if address is None:
            return None
        channel = NodeChannel(
            *address,
            client_id=self.client_id,
            connect_timeout_ms=self.connect_timeout_ms,
            request_timeout_ms=self.request_timeout_ms,
            security=self.security,
            traffic=self.traffic,
        )
        self._channels[node_id] = channel
        return channel

    def to_address(self, host: str, port: int) -> NodeChannel:
        """A channel to an address whose node id is not known (yet): a bootstrap
        server, a voter's controller listener."""
        channel = self._by_address.get((host, port))
        if channel is None:
            channel = NodeChannel(
                host,
                port,
                client_id=self.client_id,
                connect_timeout_ms=self.connect_timeout_ms,
                request_timeout_ms=self.request_timeout_ms,
                security=self.security,
                traffic=self.traffic,
            )
            self._by_address[(host, port)] = channel
        return channel

    def _retire(self, node_id: int) -> None:
        old = self._channels.pop(node_id, None)
        if old is not None:
            task = asyncio.ensure_future(old.close())
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)

    async def close(self) -> None:
        channels = [*self._channels.values(), *self._by_address.values()]
        self._channels, self._by_address = {}, {}
        for channel in channels:
            await channel.close()
        for task in list(self._closing):
            with contextlib.suppress(Exception):
                await task
