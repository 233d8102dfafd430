"""The transaction coordinator over ``__transaction_state``.

The broker builds one ``TransactionCoordinator`` over a ``TransactionStore``
adapter of its logs and a ``MarkerWriter`` that reaches partition leaders, and
calls one method per transaction API.  This package imports only
``samsa.protocol``, ``samsa.errors`` and the group placement helper; storage
and the network are wired in by the broker (``server/coordinators/txn_wiring.py``).
"""

from samsa.transaction.config import TransactionConfig
from samsa.transaction.coordinator import TransactionCoordinator
from samsa.transaction.metadata import TransactionMetadata, TxnState
from samsa.transaction.store import MarkerWriter, TransactionStore

__all__ = [
    "MarkerWriter",
    "TransactionConfig",
    "TransactionCoordinator",
    "TransactionMetadata",
    "TransactionStore",
    "TxnState",
]
