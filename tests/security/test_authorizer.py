"""The StandardAuthorizer decision, sans-I/O: Kafka's rules one by one."""

from __future__ import annotations

import pytest

from samsa.protocol.acl import (
    AclBinding,
    AclFilter,
    AclOperation,
    InvalidAcl,
    PatternType,
    Permission,
    ResourceType,
)
from samsa.security.authorizer.standard import StandardAuthorizer, parse_super_users

Op, R, P = AclOperation, ResourceType, PatternType
ALLOW, DENY = Permission.ALLOW, Permission.DENY


def acl(
    name: str,
    operation: AclOperation,
    permission: Permission = ALLOW,
    *,
    principal: str = "User:alice",
    host: str = "*",
    pattern: PatternType = P.LITERAL,
    rtype: ResourceType = R.TOPIC,
) -> AclBinding:
    return AclBinding(rtype, name, pattern, principal, host, operation, permission)


def authorizer(*acls: AclBinding, **kwargs: object) -> StandardAuthorizer:
    auth = StandardAuthorizer(**kwargs)  # type: ignore[arg-type]
    for i, binding in enumerate(acls):
        auth.add(i.to_bytes(16, "big"), binding)
    return auth


def can(auth: StandardAuthorizer, op: AclOperation, name: str, **kw: str) -> bool:
    principal = kw.get("principal", "User:alice")
    host = kw.get("host", "10.0.0.1")
    return auth.authorize(principal, host, op, R.TOPIC, name)


def test_literal_allow_only_for_that_principal_topic_and_operation() -> None:
    auth = authorizer(acl("orders", Op.READ))
    assert can(auth, Op.READ, "orders")
    assert not can(auth, Op.WRITE, "orders")
    assert not can(auth, Op.READ, "orders", principal="User:bob")
    assert not can(auth, Op.READ, "payments")


def test_implied_operations() -> None:
    auth = authorizer(acl("a", Op.READ), acl("b", Op.ALTER_CONFIGS), acl("c", Op.ALL))
    assert can(auth, Op.DESCRIBE, "a")
    assert not can(auth, Op.DESCRIBE_CONFIGS, "a")
    assert can(auth, Op.DESCRIBE_CONFIGS, "b")
    assert not can(auth, Op.DESCRIBE, "b")
    assert all(can(auth, op, "c") for op in (Op.READ, Op.WRITE, Op.DELETE, Op.DESCRIBE))


def test_deny_beats_allow_and_deny_all_denies_everything() -> None:
    auth = authorizer(
        acl("t", Op.ALL),
        acl("t", Op.WRITE, DENY),
        acl("u", Op.READ),
        acl("u", Op.ALL, DENY, principal="User:*"),
    )
    assert can(auth, Op.READ, "t")
    assert not can(auth, Op.WRITE, "t")
    assert not can(auth, Op.READ, "u")


def test_deny_of_read_does_not_deny_the_describe_it_would_imply() -> None:
    auth = authorizer(acl("t", Op.WRITE), acl("t", Op.READ, DENY))
    assert can(auth, Op.DESCRIBE, "t")


def test_prefixed_and_wildcard_resources() -> None:
    auth = authorizer(
        acl("fin-", Op.WRITE, pattern=P.PREFIXED),
        acl("*", Op.DESCRIBE, principal="User:bob"),
        acl("fin-secret", Op.WRITE, DENY),
    )
    assert can(auth, Op.WRITE, "fin-ledger")
    assert not can(auth, Op.WRITE, "fin")
    assert not can(auth, Op.WRITE, "fin-secret")
    assert can(auth, Op.DESCRIBE, "anything", principal="User:bob")


def test_hosts_and_wildcard_principal() -> None:
    auth = authorizer(acl("t", Op.READ, principal="User:*", host="10.0.0.9"))
    assert can(auth, Op.READ, "t", principal="User:x", host="10.0.0.9")
    assert not can(auth, Op.READ, "t", principal="User:x", host="10.0.0.1")


def test_no_acl_found_and_super_users() -> None:
    strict = authorizer(acl("t", Op.READ), super_users=parse_super_users("User:admin; User:b"))
    assert not can(strict, Op.READ, "untouched")
    assert can(strict, Op.DELETE, "t", principal="User:admin")
    lenient = authorizer(acl("t", Op.READ, principal="User:bob"), allow_if_no_acl_found=True)
    assert can(lenient, Op.READ, "untouched")
    assert not can(lenient, Op.READ, "t")  # an ACL exists for t, so no default


def test_cache_is_invalidated_when_acls_change() -> None:
    auth = authorizer()
    assert not can(auth, Op.WRITE, "t")
    auth.add(b"\x01" * 16, acl("t", Op.WRITE))
    assert can(auth, Op.WRITE, "t")
    auth.add(b"\x02" * 16, acl("t", Op.WRITE, DENY))
    assert not can(auth, Op.WRITE, "t")
    auth.remove(b"\x02" * 16)
    assert can(auth, Op.WRITE, "t")
    auth.replace_all({})
    assert not can(auth, Op.WRITE, "t") and len(auth) == 0


def test_filters_any_and_match() -> None:
    acls = [
        acl("orders", Op.READ),
        acl("ord", Op.WRITE, pattern=P.PREFIXED),
        acl("*", Op.DESCRIBE),
        acl("other", Op.READ, principal="User:bob"),
    ]
    auth = authorizer(*acls)

    def names(f: AclFilter) -> set[str]:
        return {a.name for _, a in auth.acls(f)}

    any_all = AclFilter(R.ANY, None, P.ANY, None, None, Op.ANY, Permission.ANY)
    assert names(any_all) == {"orders", "ord", "*", "other"}
    match = AclFilter(R.TOPIC, "orders", P.MATCH, None, None, Op.ANY, Permission.ANY)
    assert names(match) == {"orders", "ord", "*"}
    literal = AclFilter(R.TOPIC, "ord", P.LITERAL, None, None, Op.ANY, Permission.ANY)
    assert names(literal) == set()
    bob = AclFilter(R.ANY, None, P.ANY, "User:bob", None, Op.READ, Permission.ALLOW)
    assert names(bob) == {"other"}


@pytest.mark.parametrize(
    "binding",
    [
        acl("t", Op.ANY),
        acl("t", Op.READ, Permission.ANY),
        acl("t", Op.READ, pattern=P.MATCH),
        acl("t", Op.READ, rtype=R.ANY),
        acl("", Op.READ),
        acl("t", Op.READ, principal="alice"),
        acl("my-cluster", Op.ALTER, rtype=R.CLUSTER),
    ],
)
def test_invalid_bindings_are_refused(binding: AclBinding) -> None:
    with pytest.raises(InvalidAcl):
        binding.validate()


def test_authorizer_settings() -> None:
    from samsa.config.broker_config import BrokerConfig
    from samsa.errors import ConfigError
    from samsa.server.access.authorizer_setup import build_authorizer

    assert build_authorizer(BrokerConfig({})) is None
    auth = build_authorizer(
        BrokerConfig(
            {
                "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                "super.users": "User:admin;User:broker",
                "allow.everyone.if.no.acl.found": "true",
            }
        )
    )
    assert auth is not None and auth.super_users == {"User:admin", "User:broker"}
    assert auth.allow_if_no_acl_found
    with pytest.raises(ConfigError, match=r"authorizer\.class\.name"):
        build_authorizer(BrokerConfig({"authorizer.class.name": "com.example.Mine"}))


def test_authorize_any_for_idempotent_producers() -> None:
    auth = authorizer(acl("orders", Op.WRITE))
    assert auth.authorize_any("User:alice", "h", Op.WRITE, R.TOPIC)
    assert not auth.authorize_any("User:bob", "h", Op.WRITE, R.TOPIC)
    auth.add(b"\x09" * 16, acl("*", Op.WRITE, DENY))
    assert not auth.authorize_any("User:alice", "h", Op.WRITE, R.TOPIC)
