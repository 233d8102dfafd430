"""Kafka's StandardAuthorizer decision, indexed and cached for the produce path.

The rules (``StandardAuthorizerData.authorize``):

* a super user (``super.users``) may do anything;
* the ACLs that apply to a resource are its LITERAL ones, the LITERAL ``*`` of
  its type, and every PREFIXED one its name starts with;
* if none apply (to anyone), ``allow.everyone.if.no.acl.found`` decides;
* a DENY for the principal (or ``User:*``) from the host (or ``*``) for the
  operation (or ALL) wins over any ALLOW;
* an ALLOW of the operation, of ALL, or of an operation implying it allows
  (READ, WRITE, DELETE and ALTER imply DESCRIBE; ALTER_CONFIGS implies
  DESCRIBE_CONFIGS); otherwise the answer is no.

Why the indexes and the cache: a produce request asks once per topic, and a
cluster may hold 10,000 ACLs.  LITERAL ACLs are found by one dict lookup on
(type, name); PREFIXED ones by one lookup per prefix length that has any
PREFIXED ACL of that type (few lengths in practice).  Decisions are then
memoised per (principal, host, operation, type, name) until the ACLs change,
so a steady stream of produces costs one dict lookup per topic.
"""

from __future__ import annotations

from collections.abc import Iterable

from samsa.protocol.acl import (
    WILDCARD,
    WILDCARD_PRINCIPAL,
    AclBinding,
    AclFilter,
    AclOperation,
    PatternType,
    Permission,
    ResourceType,
)

_O = AclOperation
_IMPLIED_BY: dict[int, frozenset[AclOperation]] = {
    _O.DESCRIBE: frozenset({_O.DESCRIBE, _O.READ, _O.WRITE, _O.DELETE, _O.ALTER, _O.ALL}),
    _O.DESCRIBE_CONFIGS: frozenset({_O.DESCRIBE_CONFIGS, _O.ALTER_CONFIGS, _O.ALL}),
}
CACHE_LIMIT = 100_000
"""Decisions remembered before the cache starts over (bounded memory)."""

AUTHORIZER_CLASS = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
"""The ``authorizer.class.name`` that turns authorization on, as in Kafka."""

AclId = bytes
_Key = tuple[int, str]


def _allowed_by(operation: AclOperation) -> frozenset[AclOperation]:
    return _IMPLIED_BY.get(operation) or frozenset({operation, _O.ALL})


_ALLOWED_BY: dict[int, frozenset[AclOperation]] = {op: _allowed_by(op) for op in AclOperation}


def _names(acl: AclBinding, principal: str, host: str) -> bool:
    """Does the ACL speak of this principal (or ``User:*``) from this host (or ``*``)?"""
    return (acl.principal == principal or acl.principal == WILDCARD_PRINCIPAL) and (
        acl.host == host or acl.host == WILDCARD
    )


def parse_super_users(value: str) -> frozenset[str]:
    """``super.users``: principals separated by semicolons (``User:admin;User:broker``)."""
    return frozenset(p.strip() for p in value.split(";") if p.strip())


class StandardAuthorizer:
    """The ACLs of the metadata image and the decisions they give."""

    def __init__(
        self, super_users: Iterable[str] = (), *, allow_if_no_acl_found: bool = False
    ) -> None:
        self.super_users = frozenset(super_users)
        self.allow_if_no_acl_found = allow_if_no_acl_found
        self._acls: dict[AclId, AclBinding] = {}
        self._literal: dict[_Key, dict[AclId, AclBinding]] = {}
        self._prefixed: dict[_Key, dict[AclId, AclBinding]] = {}
        self._prefix_lengths: dict[int, dict[int, int]] = {}
        """Per type, how many PREFIXED names of each length exist: which
        prefixes of a resource name are worth looking up."""
        self._cache: dict[tuple[str, str, int, int, str], bool] = {}

    # ------------------------------------------------------------------ changes
    def add(self, acl_id: AclId, acl: AclBinding) -> None:
        if acl_id in self._acls:
            self.remove(acl_id)
        self._acls[acl_id] = acl
        key = (acl.resource_type, acl.name)
        if acl.pattern_type is PatternType.PREFIXED:
            self._prefixed.setdefault(key, {})[acl_id] = acl
            lengths = self._prefix_lengths.setdefault(acl.resource_type, {})
            lengths[len(acl.name)] = lengths.get(len(acl.name), 0) + 1
        else:
            self._literal.setdefault(key, {})[acl_id] = acl
        self._cache.clear()

    def remove(self, acl_id: AclId) -> AclBinding | None:
        acl = self._acls.pop(acl_id, None)
        if acl is None:
            return None
        key = (acl.resource_type, acl.name)
        index = self._prefixed if acl.pattern_type is PatternType.PREFIXED else self._literal
        bucket = index[key]
        del bucket[acl_id]
        if not bucket:
            del index[key]
        if acl.pattern_type is PatternType.PREFIXED:
            lengths = self._prefix_lengths[acl.resource_type]
            lengths[len(acl.name)] -= 1
            if not lengths[len(acl.name)]:
                del lengths[len(acl.name)]
        self._cache.clear()
        return acl

    def replace_all(self, acls: dict[AclId, AclBinding]) -> None:
        """Start over from a whole image's ACLs (a snapshot was loaded)."""
        for acl_id in list(self._acls):
            self.remove(acl_id)
        for acl_id, acl in acls.items():
            self.add(acl_id, acl)

    # ------------------------------------------------------------------ reads
    def __len__(self) -> int:
        return len(self._acls)

    def acls(self, acl_filter: AclFilter) -> list[tuple[AclId, AclBinding]]:
        return [(i, acl) for i, acl in self._acls.items() if acl_filter.matches(acl)]

    def authorize(
        self,
        principal: str,
        host: str,
        operation: int,
        resource_type: int,
        name: str,
    ) -> bool:
        # Callers on hot paths pass plain ints: an IntEnum hashes in Python code.
        key = (principal, host, operation, resource_type, name)
        decision = self._cache.get(key)
        if decision is None:
            decision = self._decide(principal, host, operation, resource_type, name)
            if len(self._cache) >= CACHE_LIMIT:
                self._cache.clear()
            self._cache[key] = decision
        return decision

    def _decide(
        self,
        principal: str,
        host: str,
        operation: int,
        resource_type: int,
        name: str,
    ) -> bool:
        if principal in self.super_users:
            return True
        found = False
        allowed = False
        allowed_by = _ALLOWED_BY[operation]
        for acl in self._applying(resource_type, name):
            found = True
            if not _names(acl, principal, host):
                continue
            if acl.permission is Permission.DENY:
                if acl.operation == operation or acl.operation is AclOperation.ALL:
                    return False
            elif acl.operation in allowed_by:
                allowed = True
        if not found:
            return self.allow_if_no_acl_found
        return allowed

    def _applying(self, resource_type: int, name: str) -> Iterable[AclBinding]:
        literal = self._literal
        for key in ((resource_type, name), (resource_type, WILDCARD)):
            bucket = literal.get(key)
            if bucket:
                yield from bucket.values()
        lengths = self._prefix_lengths.get(resource_type)
        if lengths:
            prefixed = self._prefixed
            for length in lengths:
                if length <= len(name):
                    bucket = prefixed.get((resource_type, name[:length]))
                    if bucket:
                        yield from bucket.values()

    def authorize_any(
        self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType
    ) -> bool:
        """Kafka's ``authorizeByResourceType``: may the principal perform
        ``operation`` on *some* resource of the type?  Yes when an ALLOW names
        it and no DENY covers every name (a LITERAL ``*``).  Asked only by
        InitProducerId (idempotent producers), so it scans instead of indexing."""
        if principal in self.super_users:
            return True
        allowed_by = _ALLOWED_BY[operation]
        allowed = False
        for acl in self._acls.values():
            if acl.resource_type != resource_type or not _names(acl, principal, host):
                continue
            if acl.permission is Permission.DENY:
                if (
                    acl.operation in (operation, AclOperation.ALL)
                    and acl.name == WILDCARD
                    and acl.pattern_type is PatternType.LITERAL
                ):
                    return False
            elif acl.operation in allowed_by:
                allowed = True
        return allowed

    def authorized_operations(
        self,
        principal: str,
        host: str,
        resource_type: ResourceType,
        name: str,
        candidates: Iterable[AclOperation],
    ) -> frozenset[AclOperation]:
        """The ``candidates`` this principal may perform (authorized-operations fields)."""
        return frozenset(
            op for op in candidates if self.authorize(principal, host, op, resource_type, name)
        )
