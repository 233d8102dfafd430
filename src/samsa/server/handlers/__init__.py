"""Request handlers, one module per API family.

Each module has ``register(router, broker)``; handlers take the decoded request
dict and return the response dict (or an awaitable of it) for the same version.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from samsa.server.handlers import (
    acls,
    admin_configs,
    admin_topics,
    client_quotas,
    cluster,
    delegation_tokens,
    describe_topic_partitions,
    fetch,
    forwarded,
    groups,
    list_offsets,
    log_dirs,
    produce,
    producer_ids,
    scram_users,
    share,
    share_admin,
    topic_ids,
    transaction_admin,
    transactions,
)

if TYPE_CHECKING:
    from samsa.server.broker_api import BrokerApi
    from samsa.server.connections.router import Router


def register_all(router: Router, broker: BrokerApi, listener: str) -> None:
    """Every broker API on one client listener (``listener`` is its name: Metadata
    answers with the brokers' addresses on the same listener)."""
    cluster.register(router, broker, listener)
    describe_topic_partitions.register(router, broker, listener)
    admin_configs.register(router, broker, listener)
    fetch.register(router, broker, listener)
    for module in (
        produce,
        list_offsets,
        log_dirs,
        admin_topics,
        producer_ids,
        groups,
        transactions,
        transaction_admin,
        share,
        share_admin,
        acls,
        client_quotas,
    ):
        module.register(router, broker)
    forwarded.register(router, broker)
    scram_users.register(router, broker)
    delegation_tokens.register(router, broker, listener)
    topic_ids.install(router, broker)
