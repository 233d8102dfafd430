"""ACL bindings and filters, with Kafka's numeric codes (``org.apache.kafka.common.acl``).

A binding says: *principal* from *host* is ALLOWed (or DENYed) *operation* on
the resources of *type* whose name is *name* (LITERAL, ``*`` for every one) or
starts with *name* (PREFIXED).  A filter selects bindings for DescribeAcls and
DeleteAcls: ANY matches every value, a null string matches every string, and
the MATCH pattern type matches the bindings that would apply to one named
resource (its literal, the ``*`` wildcard and every prefix of it).

It sits in the protocol package, as Kafka's sits in its clients: the wire
(Create/Describe/DeleteAcls), the metadata records, the authorizer, the
admin client and the CLI all speak it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Any


class ResourceType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class AclOperation(IntEnum):
    """Kafka's ``AclOperation`` codes (also the bit positions of authorized-operations fields)."""

    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14


class Permission(IntEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


WILDCARD = "*"
"""A literal resource name matching every resource of its type, and the host
or principal name matching every host or principal (``User:*``)."""
WILDCARD_PRINCIPAL = "User:*"
CLUSTER_NAME = "kafka-cluster"


class InvalidAcl(ValueError):
    """A binding or filter Kafka would refuse (INVALID_REQUEST on the wire)."""


@dataclass(frozen=True, slots=True)
class AclBinding:
    resource_type: ResourceType
    name: str
    pattern_type: PatternType
    principal: str
    host: str
    operation: AclOperation
    permission: Permission

    def validate(self) -> None:
        """Kafka's checks on a binding to create (``AclControlManager.validateNewAcl``)."""
        if self.resource_type in (ResourceType.ANY, ResourceType.UNKNOWN):
            raise InvalidAcl(f"invalid resource type {self.resource_type.name}")
        if self.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
            raise InvalidAcl(f"invalid pattern type {self.pattern_type.name}")
        if self.operation in (AclOperation.ANY, AclOperation.UNKNOWN):
            raise InvalidAcl(f"invalid operation {self.operation.name}")
        if self.permission not in (Permission.ALLOW, Permission.DENY):
            raise InvalidAcl(f"invalid permission type {self.permission.name}")
        if not self.name:
            raise InvalidAcl("resource name must not be empty")
        if self.resource_type is ResourceType.CLUSTER and self.name != CLUSTER_NAME:
            raise InvalidAcl(f"the only valid cluster resource name is {CLUSTER_NAME}")
        kind, sep, who = self.principal.partition(":")
        if not sep or not kind or not who:
            raise InvalidAcl(f"principal {self.principal!r} is not TYPE:NAME")
        if not self.host:
            raise InvalidAcl("host must not be empty")


def _parse(enum: type[IntEnum], code: int) -> IntEnum:
    try:
        return enum(code)
    except ValueError:
        return enum(0)


def binding_from(
    resource_type: int,
    name: str,
    pattern_type: int,
    principal: str,
    host: str,
    operation: int,
    permission: int,
) -> AclBinding:
    """A binding from wire or record codes; unknown codes become UNKNOWN."""
    return AclBinding(
        name=name,
        principal=principal,
        host=host,
        **_codes(resource_type, pattern_type, operation, permission),
    )


def _codes(resource_type: int, pattern_type: int, operation: int, permission: int) -> Any:
    return {
        "resource_type": ResourceType(_parse(ResourceType, resource_type)),
        "pattern_type": PatternType(_parse(PatternType, pattern_type)),
        "operation": AclOperation(_parse(AclOperation, operation)),
        "permission": Permission(_parse(Permission, permission)),
    }


@dataclass(frozen=True, slots=True)
class AclFilter:
    """Selects bindings (Kafka's ``AclBindingFilter``); ``None`` strings match anything."""

    resource_type: ResourceType
    name: str | None
    pattern_type: PatternType
    principal: str | None
    host: str | None
    operation: AclOperation
    permission: Permission

    def validate(self) -> None:
        for value in (self.resource_type, self.pattern_type, self.operation, self.permission):
            if value == 0:
                raise InvalidAcl(f"filter has an unknown {type(value).__name__}")

    def matches(self, acl: AclBinding) -> bool:
        if self.resource_type is not ResourceType.ANY and acl.resource_type != self.resource_type:
            return False
        if not self._matches_pattern(acl):
            return False
        if self.principal is not None and acl.principal != self.principal:
            return False
        if self.host is not None and acl.host != self.host:
            return False
        if self.operation is not AclOperation.ANY and acl.operation != self.operation:
            return False
        return self.permission is Permission.ANY or acl.permission == self.permission

    def _matches_pattern(self, acl: AclBinding) -> bool:
        pattern = self.pattern_type
        if pattern is PatternType.MATCH:
            if self.name is None:
                return True
            if acl.pattern_type is PatternType.LITERAL:
                return acl.name in (self.name, WILDCARD)
            return self.name.startswith(acl.name)
        if pattern is not PatternType.ANY and acl.pattern_type != pattern:
            return False
        return self.name is None or acl.name == self.name


def filter_from(
    resource_type: int,
    name: str | None,
    pattern_type: int,
    principal: str | None,
    host: str | None,
    operation: int,
    permission: int,
) -> AclFilter:
    return AclFilter(
        name=name,
        principal=principal,
        host=host,
        **_codes(resource_type, pattern_type, operation, permission),
    )


ANY_ACL = AclFilter(
    ResourceType.ANY, None, PatternType.ANY, None, None, AclOperation.ANY, Permission.ANY
)
"""The filter every binding matches."""
