"""TLS sessions paired in memory: handshake, data both ways, principals, refusals."""

from __future__ import annotations

import contextlib
import ssl
from pathlib import Path

import pytest
from tests.security.certs import CertificateAuthority

from samsa.config.ssl import client_context, server_context
from samsa.errors import ConfigError
from samsa.security.principal import ANONYMOUS
from samsa.security.ssl_principal_mapper import SslPrincipalMapper
from samsa.security.tls_session import TlsClosed, TlsSession


def _settings(**values: str):
    return lambda key: values.get(key, "")


def _client(trusted_ca: str) -> TlsSession:
    """A client session that trusts ``trusted_ca``, its ClientHello queued."""
    client = TlsSession(
        client_context(_settings(**{"ssl.truststore.certificates": trusted_ca})),
        server_side=False,
        hostname="localhost",
    )
    client.advance()
    return client


def _pump(client: TlsSession, server: TlsSession) -> None:
    for _ in range(10):
        moved = False
        for src, dst in ((client, server), (server, client)):
            out = src.pending_output()
            if out:
                dst.receive(out)
                moved = True
            dst.advance()
        if not moved and client.handshake_done and server.handshake_done:
            return


def _read_all(session: TlsSession) -> bytes:
    buf = bytearray(1 << 20)
    got = bytearray()
    while n := session.read_into(memoryview(buf)):
        got += buf[:n]
    return bytes(got)


def test_inline_pem_server_and_client_certificate_principal(tmp_path: Path) -> None:
    ca = CertificateAuthority()
    broker = ca.issue("broker")
    alice = ca.issue("alice")
    server = TlsSession(
        server_context(
            _settings(
                **{
                    "ssl.keystore.type": "PEM",
                    "ssl.keystore.certificate.chain": broker.cert,
                    "ssl.keystore.key": broker.key,
                    "ssl.truststore.certificates": ca.pem.cert,
                    "ssl.client.auth": "required",
                }
            )
        ),
        server_side=True,
        mapper=SslPrincipalMapper("RULE:^CN=([a-z]+),O=Samsa Tests.*$/$1/U,DEFAULT"),
    )
    client_ctx = ssl.create_default_context(cadata=ca.pem.cert)
    cert, key, _ = alice.write(tmp_path, "alice")
    client_ctx.load_cert_chain(cert, key)
    client = TlsSession(client_ctx, server_side=False, hostname="localhost")
    client.advance()
    _pump(client, server)
    assert server.handshake_done and client.handshake_done
    assert str(server.principal) == "User:ALICE"  # through ssl.principal.mapping.rules
    payload = bytes(range(256)) * 300  # several TLS records
    client.encrypt(payload)
    server.receive(client.pending_output())
    assert _read_all(server) == payload


def test_no_client_certificate_is_anonymous_and_plaintext_is_refused(tmp_path: Path) -> None:
    ca = CertificateAuthority()
    _, _, both = ca.issue("broker").write(tmp_path, "broker")
    ctx = server_context(_settings(**{"ssl.keystore.location": str(both)}))
    server = TlsSession(ctx, server_side=True)
    client = _client(ca.pem.cert)
    _pump(client, server)
    assert server.principal == ANONYMOUS
    client.encrypt(b"bye")
    server.receive(client.pending_output())
    assert _read_all(server) == b"bye"

    plaintext = TlsSession(ctx, server_side=True)
    plaintext.receive(b"\x00\x00\x00\x14\x00\x12\x00\x03" + b"\x00" * 16)
    with pytest.raises(ssl.SSLError):
        plaintext.advance()


def test_untrusted_or_expired_server_certificate_fails_the_client_handshake() -> None:
    ca, other = CertificateAuthority(), CertificateAuthority("Other CA")
    for pem, trusted in ((other.issue("broker"), ca), (ca.issue("broker", expired=True), ca)):
        server = TlsSession(
            server_context(
                _settings(
                    **{"ssl.keystore.certificate.chain": pem.cert, "ssl.keystore.key": pem.key}
                )
            ),
            server_side=True,
        )
        client = _client(trusted.pem.cert)
        with pytest.raises(ssl.SSLCertVerificationError):
            _pump(client, server)


def test_close_notify_ends_the_stream() -> None:
    ca = CertificateAuthority()
    pem = ca.issue("broker")
    settings = {"ssl.keystore.certificate.chain": pem.cert, "ssl.keystore.key": pem.key}
    server = TlsSession(server_context(_settings(**settings)), server_side=True)
    client = _client(ca.pem.cert)
    _pump(client, server)
    with contextlib.suppress(ssl.SSLWantReadError):
        client._obj.unwrap()  # sends close_notify (and may wait for the server's)
    server.receive(client.pending_output())
    with pytest.raises(TlsClosed):
        server.read_into(memoryview(bytearray(100)))


def test_settings_mistakes_name_the_setting() -> None:
    pem = CertificateAuthority().issue("broker")
    settings = {"ssl.keystore.certificate.chain": pem.cert, "ssl.keystore.key": pem.key}
    with pytest.raises(ConfigError, match=r"needs a keystore"):
        server_context(_settings())
    with pytest.raises(ConfigError, match=r"go together"):
        server_context(_settings(**{"ssl.keystore.key": pem.key}))
    with pytest.raises(ConfigError, match=r"JKS"):
        server_context(_settings(**{"ssl.keystore.type": "JKS", "ssl.keystore.location": "x.jks"}))
    with pytest.raises(ConfigError, match=r"cannot load"):
        server_context(_settings(**{"ssl.keystore.location": "/nonexistent.pem"}))
    with pytest.raises(ConfigError, match=r"TLSv1\.1"):
        server_context(_settings(**settings, **{"ssl.enabled.protocols": "TLSv1.1"}))
    with pytest.raises(ConfigError, match=r"needs a truststore"):
        server_context(_settings(**settings, **{"ssl.client.auth": "required"}))
    with pytest.raises(ConfigError, match=r"ssl.client.auth"):
        server_context(_settings(**settings, **{"ssl.client.auth": "maybe"}))
    only13 = server_context(_settings(**settings, **{"ssl.enabled.protocols": "TLSv1.3"}))
    assert only13.minimum_version == ssl.TLSVersion.TLSv1_3
