"""The Admin's security calls: ACLs, SCRAM users and delegation tokens.

Who may do what on the cluster is its own concern beside topics, groups and
the brokers' storage, and these calls are all of it: a base of the Admin
façade (admin.py) in a module of its own, built on the same plumbing
(``AdminChannel``), with each call handed to its API family's module
(``families/acls``, ``families/scram_users``, ``families/delegation_tokens``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from samsa.client.admin.channel import AdminChannel
from samsa.client.admin.families.acls import create_acls, delete_acls, describe_acls
from samsa.client.admin.families.delegation_tokens import (
    DelegationToken,
    create_delegation_token,
    describe_delegation_tokens,
    expire_delegation_token,
    renew_delegation_token,
)
from samsa.client.admin.families.scram_users import (
    alter_user_scram_credentials,
    describe_user_scram_credentials,
)
from samsa.errors import KafkaError
from samsa.protocol.acl import ANY_ACL, AclBinding, AclFilter

__all__ = ["SecurityAdmin"]


class SecurityAdmin(AdminChannel):
    """ACLs, SCRAM credentials and delegation tokens; the Admin inherits them."""

    # -- ACLs (acls.py) -----------------------------------------------------------------
    def create_acls(self, bindings: Iterable[AclBinding], timeout: float | None = None) -> None:
        create_acls(self, bindings, self._ms(timeout))

    def describe_acls(
        self, acl_filter: AclFilter = ANY_ACL, timeout: float | None = None
    ) -> list[AclBinding]:
        """The ACLs matching ``acl_filter`` (default: all of them)."""
        return describe_acls(self, acl_filter, self._ms(timeout))

    def delete_acls(
        self, filters: Iterable[AclFilter], timeout: float | None = None
    ) -> list[AclBinding]:
        """Delete the ACLs each filter matches; the ones deleted."""
        return delete_acls(self, filters, self._ms(timeout))

    # -- SCRAM users and delegation tokens (scram_users.py, delegation_tokens.py) ------
    def describe_user_scram_credentials(
        self, users: Iterable[str] | None = None, timeout: float | None = None
    ) -> dict[str, dict[str, int]]:
        """{user: {mechanism: iterations}} of ``users``, or of every SCRAM user."""
        return describe_user_scram_credentials(self, users, self._ms(timeout))

    def alter_user_scram_credentials(
        self,
        upsertions: Mapping[tuple[str, str], tuple[str, int]] | None = None,
        deletions: Iterable[tuple[str, str]] = (),
        timeout: float | None = None,
    ) -> dict[str, KafkaError | None]:
        """Set {(user, mechanism): (password, iterations)}, delete (user, mechanism)."""
        return alter_user_scram_credentials(self, upsertions or {}, deletions, self._ms(timeout))

    def create_delegation_token(
        self,
        renewers: Iterable[str] = (),
        owner: str | None = None,
        max_lifetime_ms: int = -1,
        timeout: float | None = None,
    ) -> DelegationToken:
        """A delegation token of ``owner`` (default: the caller), renewable by
        ``renewers`` (``User:name``); -1 takes the broker's maximum lifetime."""
        return create_delegation_token(self, renewers, owner, max_lifetime_ms, self._ms(timeout))

    def renew_delegation_token(
        self, hmac: bytes, renew_period_ms: int = -1, timeout: float | None = None
    ) -> int:
        """Renew the token of ``hmac`` (-1: by the broker's period); its new expiry."""
        return renew_delegation_token(self, hmac, renew_period_ms, self._ms(timeout))

    def expire_delegation_token(
        self, hmac: bytes, expiry_time_period_ms: int = -1, timeout: float | None = None
    ) -> int:
        """Expire the token of ``hmac`` after the period (negative: now); its expiry."""
        return expire_delegation_token(self, hmac, expiry_time_period_ms, self._ms(timeout))

    def describe_delegation_tokens(
        self, owners: Iterable[str] | None = None, timeout: float | None = None
    ) -> list[DelegationToken]:
        """The delegation tokens of ``owners`` (default: all the caller may see)."""
        return describe_delegation_tokens(self, owners, self._ms(timeout))
