"""Keeps the channel pool's broker addresses in step with the broker registrations.

Followers reach their leaders on the listener named by
``inter.broker.listener.name``; a broker that re-registers with new endpoints
is reached at the new address by the fetchers' next request (the pool
replaces its channel), and one that unregisters, or has no such listener,
is forgotten (its partitions' fetchers back off until it comes back).
"""

from __future__ import annotations

from collections.abc import Iterable

from samsa.controller.image.metadata_image import MetadataImage
from samsa.net import ChannelPool

__all__ = ["BrokerAddresses"]


class BrokerAddresses:
    def __init__(self, channels: ChannelPool, listener: str, local_id: int) -> None:
        self.channels = channels
        self.listener = listener
        self.local_id = local_id
        self._loaded = False

    def update(self, image: MetadataImage, changed: Iterable[int]) -> None:
        """Take the addresses of the ``changed`` brokers (of every broker the
        first time) from ``image``."""
        broker_ids = set(changed)
        if not self._loaded:
            broker_ids |= set(image.brokers)
            self._loaded = True
        for broker_id in broker_ids:
            if broker_id == self.local_id:
                continue
            registration = image.brokers.get(broker_id)
            endpoint = None if registration is None else registration.listener(self.listener)
            if endpoint is None:
                self.channels.forget(broker_id)
            else:
                self.channels.set_address(broker_id, endpoint.host, endpoint.port)

    def known(self, broker_id: int) -> bool:
        return self.channels.address(broker_id) is not None
