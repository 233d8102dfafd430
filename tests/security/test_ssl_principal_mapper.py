"""Kafka's ssl.principal.mapping.rules, from SslPrincipalMapperTest's cases."""

from __future__ import annotations

import pytest

from samsa.errors import ConfigError
from samsa.security.ssl_principal_mapper import NoRuleApplies, SslPrincipalMapper

RULES = (
    "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,"
    "RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L,"
    "RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U,"
    "DEFAULT"
)


@pytest.mark.parametrize(
    ("subject", "name"),
    [
        ("CN=kafka1,OU=ServiceUsers,O=Org,C=US", "kafka1"),
        ("CN=duke,OU=JavaSoft,O=Sun Microsystems,L=Santa Clara,ST=CA,C=US", "duke@javasoft"),
        ("OU=JavaSoft,O=Sun Microsystems,cn=duke.x,C=US", "DUKE.X"),
        ("OU=JavaSoft,O=Sun Microsystems,C=US", "OU=JavaSoft,O=Sun Microsystems,C=US"),
    ],
)
def test_first_matching_rule_names_the_principal(subject: str, name: str) -> None:
    assert SslPrincipalMapper(RULES).name(subject) == name


def test_without_default_an_unmatched_subject_is_refused() -> None:
    mapper = SslPrincipalMapper("RULE:^CN=([^,]*),O=Samsa$/$1/")
    assert mapper.name("CN=alice,O=Samsa") == "alice"
    with pytest.raises(NoRuleApplies, match="No rules apply to CN=eve,O=Other"):
        mapper.name("CN=eve,O=Other")


def test_escaped_slashes_and_default_alone() -> None:
    assert SslPrincipalMapper(r"RULE:^CN=(.*)\/x$/$1\/y/").name("CN=a/x") == "a/y"
    assert SslPrincipalMapper("").name("CN=a") == "CN=a"


@pytest.mark.parametrize("rules", ["RULE:^CN=(.*$/$1/", "RULE:x/y/Q", "NOPE", "RULE:x"])
def test_bad_rules_are_a_config_error(rules: str) -> None:
    with pytest.raises(ConfigError, match=r"ssl\.principal\.mapping\.rules"):
        SslPrincipalMapper(rules)
