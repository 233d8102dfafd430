"""The broker's tiered storage: built from its settings when ``remote.log.storage.system.enable``.

With the setting off (the default) nothing here runs and the broker is as
before: no remote store, no ``__remote_log_metadata``, no tasks, and the
replica manager's ``tiering`` stays None.  With it on, the remote store
comes from ``rsm.config.*`` (a directory beside the first log dir unless
``rsm.config.storage.backend.class=s3``), the index cache and the producer
snapshots live in the first log dir, and the remote log manager reaches
other brokers (to publish to and replay ``__remote_log_metadata`` partitions
they lead) on the inter-broker listener.  A bad ``rsm.config.*`` setting
stops the start with a message naming it; secrets never appear in one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from samsa.errors import ConfigError
from samsa.net import ChannelPool
from samsa.replication.broker_addresses import BrokerAddresses
from samsa.replication.tiering.remote_log_manager import RemoteLogManager
from samsa.replication.tiering.settings import TieringSettings
from samsa.server.connections.listener_security import channel_security
from samsa.tiered.store.settings import RSM_PREFIX, open_remote_store, remote_store_settings

if TYPE_CHECKING:
    from samsa.server.broker import Broker

__all__ = ["start_tiered_storage"]


async def start_tiered_storage(broker: Broker) -> RemoteLogManager | None:
    """The broker's remote log manager, started and attached to its replicas;
    None when tiered storage is off."""
    config = broker.config
    if not config["remote.log.storage.system.enable"]:
        return None
    rsm = {name: str(value) for name, value in config.items() if name.startswith(RSM_PREFIX)}
    try:
        store = open_remote_store(remote_store_settings(rsm, config.data_dir))
    except ValueError as exc:
        raise ConfigError(f"tiered storage: {exc}") from None
    settings = broker.node.settings
    listener = settings.inter_broker_listener_name
    channels = ChannelPool(
        client_id=f"samsa-remote-log-{broker.node_id}",
        security=channel_security(
            config,
            listener,
            settings.protocol_of(listener),
            "sasl.mechanism.inter.broker.protocol",
            standalone=settings.standalone,
        ),
    )
    addresses = BrokerAddresses(channels, listener, broker.node_id)
    loader = broker.loader

    async def wait_for_image() -> None:
        await loader.wait_applied(loader.applied_offset)

    manager = RemoteLogManager(
        node_id=broker.node_id,
        settings=TieringSettings.from_lookup(broker.dynamic_config.__getitem__),
        store=store,
        data_dir=config.data_dir,
        replicas=broker.replicas,
        image=lambda: broker.image,
        create_topic=broker.create_internal_topic,
        wait_for_image=wait_for_image,
        channels=channels,
    )
    manager.addresses = addresses
    await manager.start()
    broker.replicas.attach_tiering(manager)
    return manager
