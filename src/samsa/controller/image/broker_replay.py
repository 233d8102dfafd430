"""The broker lifecycle records, replayed into the image's broker registrations.

RegisterBrokerRecord, UnregisterBrokerRecord, FenceBrokerRecord,
UnfenceBrokerRecord and BrokerRegistrationChangeRecord each swap one broker's
immutable ``BrokerRegistration`` in ``MetadataImage.brokers`` (Kafka's
ClusterDelta).  Apart from the image because they keep rules of their own,
which the controller writing these records shares: every record but a
registration must name the registration's current epoch (a stale one means
the log and the image disagree), and a change's ``fenced`` is three-valued
(``FENCE``, ``UNFENCE``, 0 for unchanged).

A record that does not apply raises ``BrokerReplayError`` and changes
nothing; the image reports it as its ``MetadataReplayError``, as it does
``scram_image``'s.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from samsa.controller.image.registrations import BrokerRegistration

log = logging.getLogger(__name__)

FENCE = 1
UNFENCE = -1
"""BrokerRegistrationChangeRecord's ``fenced``: fence, unfence (0 leaves it as it is)."""

Brokers = dict[int, BrokerRegistration]
BrokerReplay = Callable[[Brokers, Mapping[str, Any]], None]
"""How each record applies: ``replay_register`` ... ``replay_change``."""


class BrokerReplayError(ValueError):
    """A broker lifecycle record that does not apply to the registrations."""


def replay_register(brokers: Brokers, body: Mapping[str, Any]) -> None:
    registration = BrokerRegistration.from_record(body)
    previous = brokers.get(registration.id)
    brokers[registration.id] = registration
    if previous is None:
        log.info("registered broker %d at epoch %d", registration.id, registration.epoch)
    else:
        log.info(
            "re-registered broker %d at epoch %d (was epoch %d)",
            registration.id,
            registration.epoch,
            previous.epoch,
        )


def replay_unregister(brokers: Brokers, body: Mapping[str, Any]) -> None:
    _current(brokers, body["broker_id"], body["broker_epoch"], "UnregisterBrokerRecord")
    del brokers[body["broker_id"]]
    log.info("unregistered broker %d", body["broker_id"])


def replay_fence(brokers: Brokers, body: Mapping[str, Any]) -> None:
    registration = _current(brokers, body["id"], body["epoch"], "FenceBrokerRecord")
    brokers[registration.id] = replace(registration, fenced=True)


def replay_unfence(brokers: Brokers, body: Mapping[str, Any]) -> None:
    registration = _current(brokers, body["id"], body["epoch"], "UnfenceBrokerRecord")
    brokers[registration.id] = replace(registration, fenced=False)


def replay_change(brokers: Brokers, body: Mapping[str, Any]) -> None:
    registration = _current(
        brokers, body["broker_id"], body["broker_epoch"], "BrokerRegistrationChangeRecord"
    )
    fencing = body.get("fenced", 0)
    shutdown = body.get("in_controlled_shutdown", 0)
    if fencing not in (FENCE, UNFENCE, 0) or shutdown not in (0, 1):
        raise BrokerReplayError(
            f"BrokerRegistrationChangeRecord for broker {registration.id} has fenced="
            f"{fencing}, in_controlled_shutdown={shutdown}"
        )
    fenced = registration.fenced if fencing == 0 else fencing == FENCE
    in_shutdown = registration.in_controlled_shutdown or shutdown == 1
    brokers[registration.id] = replace(
        registration, fenced=fenced, in_controlled_shutdown=in_shutdown
    )


def _current(brokers: Brokers, broker_id: int, epoch: int, what: str) -> BrokerRegistration:
    """The broker's registration, which the record must name at its epoch."""
    registration = brokers.get(broker_id)
    if registration is None:
        raise BrokerReplayError(f"{what} for unregistered broker {broker_id}")
    if registration.epoch != epoch:
        raise BrokerReplayError(
            f"{what} for broker {broker_id} at epoch {epoch}, but its registration "
            f"has epoch {registration.epoch}"
        )
    return registration
