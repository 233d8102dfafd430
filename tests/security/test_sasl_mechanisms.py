"""SASL mechanisms as token state machines, without sockets."""

from __future__ import annotations

import base64

import pytest

from samsa.errors import DecodeError, ErrorCode
from samsa.protocol.sasl.plain import plain_token
from samsa.protocol.sasl.scram import ScramClient, make_credential
from samsa.security.principal import user
from samsa.security.sasl.credentials import ScramCredentials, server_mechanisms
from samsa.security.sasl.mechanism import AuthenticationFailed
from samsa.security.sasl.plain_server import INVALID, PlainServer
from samsa.security.sasl.scram_server import ScramServer
from samsa.security.sasl.session import SaslServerSession, SaslState


def test_scram_client_matches_rfc_7677_example() -> None:
    client = ScramClient("SCRAM-SHA-256", "user", "pencil", nonce="rOprNGfwEbeRWgbNEkqO")
    assert client.first_message() == b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
    server_first = (
        b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
    )
    assert client.final_message(server_first) == (
        b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
        b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
    )
    client.check_server_final(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
    with pytest.raises(DecodeError):
        client.check_server_final(b"v=" + base64.b64encode(b"x" * 32))


def _scram_server(mechanism: str, users: dict[str, str]) -> ScramServer:
    store = ScramCredentials()
    for name, password in users.items():
        store.put(name, mechanism, make_credential(mechanism, password))
    return ScramServer(mechanism, store.get)


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_scram_exchange_authenticates_the_right_password_only(mechanism: str) -> None:
    server = _scram_server(mechanism, {"alice": "alice-secret"})
    client = ScramClient(mechanism, "alice", "alice-secret")
    final = client.final_message(server.evaluate(client.first_message()))
    client.check_server_final(server.evaluate(final))
    assert server.complete and server.authorization_id == "alice"

    server = _scram_server(mechanism, {"alice": "alice-secret"})
    client = ScramClient(mechanism, "alice", "wrong")
    final = client.final_message(server.evaluate(client.first_message()))
    with pytest.raises(AuthenticationFailed, match="invalid credentials"):
        server.evaluate(final)
    assert not server.complete


@pytest.mark.parametrize(
    "first",
    [
        b"n,,n=bob,r=abc",
        b"p=tls-unique,,n=alice,r=abc",
        b"n,,r=abc",
        b"\xff\xfe",
        b"",
        b"n,a=eve,n=alice,r=x",
    ],
)
def test_scram_refuses_unknown_users_and_malformed_first_messages(first: bytes) -> None:
    server = _scram_server("SCRAM-SHA-512", {"alice": "alice-secret"})
    with pytest.raises(AuthenticationFailed, match="SCRAM-SHA-512"):
        server.evaluate(first)


def test_scram_refuses_a_replayed_nonce_and_a_garbled_final_message() -> None:
    server = _scram_server("SCRAM-SHA-256", {"alice": "pw"})
    client = ScramClient("SCRAM-SHA-256", "alice", "pw")
    server.evaluate(client.first_message())
    with pytest.raises(AuthenticationFailed):
        server.evaluate(b"c=biws,r=" + client.nonce.encode() + b",p=AAAA")
    with pytest.raises(AuthenticationFailed):
        server.evaluate(b"anything")


def test_plain_checks_user_password_and_authorization_id() -> None:
    assert PlainServer({"alice": "s3"}).evaluate(plain_token("alice", "s3")) == b""
    for token in (
        plain_token("alice", "wrong"),
        plain_token("mallory", "s3"),
        plain_token("alice", "s3", authzid="admin"),
        b"alice\0s3",
        b"\0\0",
        b"\0al\xffice\0s3",
    ):
        with pytest.raises(AuthenticationFailed):
            PlainServer({"alice": "s3"}).evaluate(token)
    with pytest.raises(AuthenticationFailed, match=INVALID):
        PlainServer({"alice": "s3"}).evaluate(plain_token("alice", "s4"))


def test_session_walks_handshake_then_tokens_to_a_principal() -> None:
    mechanisms = server_mechanisms(
        ["PLAIN", "SCRAM-SHA-512"],
        lambda m: ('PlainLoginModule required user_alice="a1";', "sasl.jaas.config"),
    )
    session = SaslServerSession(mechanisms)
    assert session.enabled == ["PLAIN", "SCRAM-SHA-512"]
    with pytest.raises(AuthenticationFailed):
        SaslServerSession(mechanisms).authenticate(b"token before handshake")
    assert session.handshake("PLAIN") == ErrorCode.NONE
    assert session.handshake("PLAIN") == ErrorCode.ILLEGAL_SASL_STATE
    session.authenticate(plain_token("alice", "a1"))
    assert session.state is SaslState.COMPLETE and session.principal == user("alice")

    scram = SaslServerSession(mechanisms)
    assert scram.handshake("SCRAM-SHA-512") == ErrorCode.NONE
    client = ScramClient("SCRAM-SHA-512", "alice", "a1")
    final = client.final_message(scram.authenticate(client.first_message()))
    client.check_server_final(scram.authenticate(final))
    assert scram.principal == user("alice")

    unknown = SaslServerSession(mechanisms)
    assert unknown.handshake("GSSAPI") == ErrorCode.UNSUPPORTED_SASL_MECHANISM
    assert unknown.state is SaslState.FAILED
