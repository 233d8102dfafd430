"""SCRAM login by delegation token, sans I/O: Samsa's client and server sides.

The client's first message carries ``tokenauth=true`` after the nonce (RFC
5802 extensions, as Kafka's ScramLoginModule sends it); the server checks the
proof against credentials salted from the token's HMAC and logs the owner in,
marked token-authenticated.  The same exchange without the extension is a
plain user login, which a token id is not.
"""

from __future__ import annotations

import pytest

from samsa.errors import DecodeError
from samsa.protocol.sasl.delegation_token import token_credential, token_hmac, token_password
from samsa.protocol.sasl.exchange import SaslClientExchange
from samsa.protocol.sasl.scram import (
    ScramClient,
    ScramCredential,
    make_credential,
    parse_client_first_bare,
)
from samsa.security.principal import KafkaPrincipal
from samsa.security.sasl.mechanism import AuthenticationFailed
from samsa.security.sasl.scram_server import ScramServer, TokenLogin, TokenLookup
from samsa.security.sasl.session import SaslServerSession

NOW = 1_700_000_000_000
TOKEN_ID = "WWjac7hiQ8C4t8hNl6jblA"
HMAC = token_hmac("secret", TOKEN_ID)


def tokens(expiry_ms: int = NOW + 1000) -> TokenLookup:
    def lookup(token_id: str, mechanism: str) -> TokenLogin | None:
        if token_id != TOKEN_ID:
            return None
        return TokenLogin(token_credential(HMAC, mechanism), "alice", expiry_ms)

    return lookup


def users(user: str, mechanism: str) -> ScramCredential | None:
    return make_credential(mechanism, "alice-pw") if user == "alice" else None


def login(
    mechanism: str, username: str, password: str, *, tokenauth: bool, expiry: int = NOW + 1000
) -> SaslServerSession:
    session = SaslServerSession(
        {mechanism: lambda: ScramServer(mechanism, users, tokens(expiry), clock=lambda: NOW)}
    )
    extensions = {"tokenauth": "true"} if tokenauth else None
    client = SaslClientExchange(mechanism, username, password, scram_extensions=extensions)
    session.handshake(mechanism)
    answer = session.authenticate(client.first())
    final = client.next(answer)
    assert final is not None
    client.next(session.authenticate(final))  # checks the server's signature
    return session


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_a_token_logs_in_as_its_owner_marked_token_authenticated(mechanism: str) -> None:
    session = login(mechanism, TOKEN_ID, token_password(HMAC), tokenauth=True)
    assert session.principal == KafkaPrincipal("User", "alice")
    assert session.principal is not None and session.principal.token_authenticated
    assert session.credential_expiry_ms == NOW + 1000
    plain = login(mechanism, "alice", "alice-pw", tokenauth=False)
    assert plain.principal is not None and not plain.principal.token_authenticated


def test_without_the_extension_a_token_id_that_is_no_user_logs_in_by_its_token() -> None:
    """librdkafka cannot send ``tokenauth=true``; Samsa, unlike Kafka, then takes a
    user name that is no SCRAM user but a token's id as a login by that token."""
    session = login("SCRAM-SHA-256", TOKEN_ID, token_password(HMAC), tokenauth=False)
    assert session.principal == KafkaPrincipal("User", "alice")
    assert session.principal is not None and session.principal.token_authenticated


@pytest.mark.parametrize(
    ("username", "password", "tokenauth", "expiry"),
    [
        (TOKEN_ID, "wrong", True, NOW + 1000),  # not the HMAC
        ("unknown", token_password(HMAC), True, NOW + 1000),  # no such token
        (TOKEN_ID, token_password(HMAC), True, NOW - 1),  # expired
        (TOKEN_ID, token_password(HMAC), False, NOW - 1),  # expired, without the extension
        (TOKEN_ID, "wrong", False, NOW + 1000),  # not the HMAC, without the extension
        ("alice", "alice-pw", True, NOW + 1000),  # a user is no token
    ],
)
def test_refused_logins(username: str, password: str, tokenauth: bool, expiry: int) -> None:
    with pytest.raises(AuthenticationFailed, match="invalid credentials"):
        login("SCRAM-SHA-256", username, password, tokenauth=tokenauth, expiry=expiry)


def test_without_tokens_a_token_login_is_refused() -> None:
    server = ScramServer("SCRAM-SHA-256", users)
    first = ScramClient("SCRAM-SHA-256", TOKEN_ID, "x", extensions={"tokenauth": "true"})
    with pytest.raises(AuthenticationFailed):
        server.evaluate(first.first_message())


def test_extensions_follow_the_nonce_and_unknown_ones_are_ignored() -> None:
    client = ScramClient(
        "SCRAM-SHA-256", "a,b=c", "pw", nonce="n0", extensions={"tokenauth": "true"}
    )
    assert client.first_message() == b"n,,n=a=2Cb=3Dc,r=n0,tokenauth=true"
    assert parse_client_first_bare("n=x,r=n0,tokenauth=TRUE,other=1") == (
        "x",
        "n0",
        {"tokenauth": "TRUE", "other": "1"},
    )
    for bad in ("r=n0,n=x", "n=x", "n=x,r=n0,broken", "n=x,r=n0,=v", "n=x,r=n0,k="):
        with pytest.raises(DecodeError):
            parse_client_first_bare(bad)
    # Any case of "true" asks for a token, as Kafka's ScramExtensions reads it.
    session = SaslServerSession(
        {"SCRAM-SHA-256": lambda: ScramServer("SCRAM-SHA-256", users, tokens(), clock=lambda: NOW)}
    )
    session.handshake("SCRAM-SHA-256")
    client = ScramClient(
        "SCRAM-SHA-256", TOKEN_ID, token_password(HMAC), extensions={"tokenauth": "True"}
    )
    final = client.final_message(session.authenticate(client.first_message()))
    client.check_server_final(session.authenticate(final))
    assert session.principal is not None and session.principal.token_authenticated
