"""Broker keys of security: TLS (PEM keystores and truststores), SASL mechanisms
and OAUTHBEARER validation, re-authentication, SCRAM bootstrap users and the
authorizer.  ``listener.name.<l>.`` may prefix the ssl/sasl ones per listener."""

from __future__ import annotations

from samsa.config.values import ConfigKey, int_between, parse_bool

SECURITY_KEYS: list[ConfigKey] = [
    ConfigKey("ssl.keystore.type", str, "PEM", "Keystore format; Samsa reads PEM only."),
    ConfigKey("ssl.keystore.location", str, "", "PEM file with the private key and its chain."),
    ConfigKey("ssl.keystore.password", str, "", "Unused for PEM keystores (Kafka's key)."),
    ConfigKey("ssl.keystore.certificate.chain", str, "", "Inline PEM certificate chain."),
    ConfigKey("ssl.keystore.key", str, "", "Inline PEM private key."),
    ConfigKey("ssl.key.password", str, "", "Password of an encrypted PEM private key."),
    ConfigKey("ssl.truststore.type", str, "PEM", "Truststore format; Samsa reads PEM only."),
    ConfigKey("ssl.truststore.location", str, "", "PEM file of trusted CA certificates."),
    ConfigKey("ssl.truststore.password", str, "", "Unused for PEM truststores (Kafka's key)."),
    ConfigKey("ssl.truststore.certificates", str, "", "Inline PEM trusted CA certificates."),
    ConfigKey("ssl.client.auth", str, "none", "Client certificates: none, requested, required."),
    ConfigKey("ssl.enabled.protocols", str, "TLSv1.2,TLSv1.3", "TLS versions accepted."),
    ConfigKey(
        "ssl.endpoint.identification.algorithm",
        str,
        "https",
        "https: this node checks peer host names against their certificates; empty: it does not.",
    ),
    ConfigKey(
        "ssl.principal.mapping.rules",
        str,
        "DEFAULT",
        "How a client certificate becomes a principal (DEFAULT: the subject's full name).",
    ),
    ConfigKey(
        "sasl.enabled.mechanisms",
        str,
        "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
        "SASL mechanisms offered (Kafka's default GSSAPI is not offered).",
    ),
    ConfigKey(
        "sasl.mechanism.inter.broker.protocol", str, "PLAIN", "Mechanism nodes use between them."
    ),
    ConfigKey(
        "sasl.mechanism.controller.protocol", str, "PLAIN", "Mechanism used to reach controllers."
    ),
    ConfigKey(
        "sasl.jaas.config",
        str,
        "",
        'JAAS line: username/password this node logs in with, user_NAME="PASSWORD" users it accepts.',
    ),
    ConfigKey("sasl.server.max.receive.size", int, 524288, "Largest frame before authentication."),
    ConfigKey(
        "sasl.oauthbearer.jwks.endpoint.url",
        str,
        "",
        "OAUTHBEARER: a JWKS file (file:/path) signed tokens are checked against; unset, "
        "unsecured tokens (alg none) are accepted, as Kafka's default validator does.",
    ),
    ConfigKey("sasl.oauthbearer.expected.audience", str, "", "OAUTHBEARER: accepted aud values."),
    ConfigKey("sasl.oauthbearer.expected.issuer", str, "", "OAUTHBEARER: the required iss."),
    ConfigKey("sasl.oauthbearer.sub.claim.name", str, "sub", "OAUTHBEARER: principal claim."),
    ConfigKey("sasl.oauthbearer.scope.claim.name", str, "scope", "OAUTHBEARER: scope claim."),
    ConfigKey("sasl.oauthbearer.clock.skew.seconds", int, 30, "OAUTHBEARER: allowed clock skew."),
    ConfigKey(
        "connection.failed.authentication.delay.ms",
        int,
        100,
        "Wait before answering (and closing) a failed authentication.",
    ),
    ConfigKey(
        "connections.max.reauth.ms",
        int,
        0,
        "KIP-368: SASL sessions last at most this long (0: no limit); a client must log in "
        "again on the same connection before then or be disconnected.",
    ),
    ConfigKey(
        "scram.bootstrap.credentials",
        str,
        "",
        "SCRAM users the controller writes once if the metadata log lacks them, as "
        "kafka-storage format --add-scram: 'SCRAM-SHA-256=[name=alice,password=...]' ...",
    ),
    ConfigKey(
        "authorizer.class.name",
        str,
        "",
        "org.apache.kafka.metadata.authorizer.StandardAuthorizer turns ACLs on (empty: off).",
    ),
    ConfigKey("super.users", str, "", "Principals allowed everything (User:a;User:b)."),
    ConfigKey(
        "allow.everyone.if.no.acl.found",
        parse_bool,
        False,
        "Allow a resource that no ACL names (else only super users may use it).",
    ),
    # Delegation tokens (KIP-48): SCRAM logins by token.
    ConfigKey(
        "delegation.token.secret.key",
        str,
        "",
        "Key of every delegation token's HMAC, the same on every node (empty: tokens off, "
        "their APIs answer DELEGATION_TOKEN_AUTH_DISABLED).",
    ),
    ConfigKey(
        "delegation.token.master.key",
        str,
        "",
        "Deprecated name of delegation.token.secret.key (used when that is unset).",
    ),
    ConfigKey(
        "delegation.token.max.lifetime.ms",
        int_between(1, 2**63 - 1),
        604800000,
        "No delegation token lives longer than this, however often it is renewed.",
    ),
    ConfigKey(
        "delegation.token.expiry.time.ms",
        int_between(1, 2**63 - 1),
        86400000,
        "A delegation token expires this long after its creation or renewal.",
    ),
    ConfigKey(
        "delegation.token.expiry.check.interval.ms",
        int_between(1, 2**63 - 1),
        3600000,
        "How often the controller removes expired delegation tokens.",
    ),
]
