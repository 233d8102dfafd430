"""Logins over HTTP: the console's session cookie and /metrics' Basic
authentication, against real SASL mechanisms, on a real socket."""

from __future__ import annotations

import asyncio
import base64
import json
import time
from typing import Any

from samsa.http.backoff import LoginBackoff
from samsa.http.basic_auth import BasicAuthGate
from samsa.http.credentials import PasswordCheck
from samsa.http.endpoint import EndpointSecurity, HttpEndpoint
from samsa.http.login import SessionLogin
from samsa.http.messages import Request, Response, json_response
from samsa.http.sessions import SessionStore
from samsa.protocol.sasl.oauthbearer import unsecured_token
from samsa.security.principal import KafkaPrincipal, user
from samsa.security.sasl.credentials import server_mechanisms
from samsa.security.sasl.verifier import CredentialVerifier

JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-pw";'
DELAY_MS = 200


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def check(backoff: LoginBackoff | None = None) -> PasswordCheck:
    mechanisms = server_mechanisms(["PLAIN", "SCRAM-SHA-256"], lambda m: (JAAS, "sasl.jaas.config"))
    return PasswordCheck(
        CredentialVerifier(mechanisms), failed_delay_ms=DELAY_MS, what="test login", backoff=backoff
    )


def whoami(request: Request) -> Response:
    return json_response({"principal": str(request.principal)})


def raw_post(path: str, body: dict[str, Any], cookie: str = "") -> bytes:
    data = json.dumps(body).encode()
    extra = f"Cookie: {cookie}\r\n" if cookie else ""
    head = (
        f"POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        f"{extra}Content-Length: {len(data)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + data


def raw_get(path: str, cookie: str = "", authorization: str = "") -> bytes:
    extra = f"Cookie: {cookie}\r\n" if cookie else ""
    if authorization:
        extra += f"Authorization: {authorization}\r\n"
    return f"GET {path} HTTP/1.1\r\nHost: localhost\r\n{extra}Connection: close\r\n\r\n".encode()


async def exchange(port: int, raw: bytes) -> tuple[int, dict[str, str], Any, float]:
    started = time.monotonic()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(raw)
    await writer.drain()
    data = await reader.read()
    writer.close()
    took = time.monotonic() - started
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    parsed = json.loads(body) if headers.get("content-type") == "application/json" else body
    return int(lines[0].split(" ")[1]), headers, parsed, took


def cookie_of(headers: dict[str, str]) -> str:
    return headers["set-cookie"].split(";")[0]


def with_endpoint(gate: Any, get: dict[str, Any], post: dict[str, Any], steps: Any) -> Any:
    async def main() -> Any:
        endpoint = HttpEndpoint(
            "test", get, post, json_errors=True, security=EndpointSecurity(gate=gate)
        )
        _, port = await endpoint.bind("127.0.0.1", 0)
        await endpoint.serve()
        try:
            return await steps(lambda raw: exchange(port, raw))
        finally:
            await endpoint.stop()

    return asyncio.run(main())


def session_endpoint(login: SessionLogin, steps: Any) -> Any:
    get, post = login.routes()
    return with_endpoint(login, {**get, "/api/data": whoami, "/": whoami}, post, steps)


def test_a_login_gives_an_http_only_strict_cookie_that_logout_ends() -> None:
    login = SessionLogin(check(), SessionStore(3600), secure=False, public=("/",))

    async def steps(send: Any) -> None:
        status, _, body, _ = await send(raw_get("/api/data"))
        assert (status, body["status"]) == (401, 401)
        assert (await send(raw_get("/")))[0] == 200  # public
        status, _, offered, _ = await send(raw_get("/api/login"))
        assert offered == {"login": True, "mechanisms": ["PLAIN", "SCRAM-SHA-256"], "token": False}

        status, headers, body, _ = await send(
            raw_post("/api/login", {"username": "alice", "password": "alice-pw"})
        )
        assert status == 200, body
        assert body["principal"] == "User:alice" and body["mechanism"] == "PLAIN"
        flags = headers["set-cookie"].split("; ")[1:]
        assert {"Path=/", "HttpOnly", "SameSite=Strict", "Max-Age=3600"} <= set(flags)
        assert "Secure" not in flags
        cookie = cookie_of(headers)
        assert (await send(raw_get("/api/data", cookie)))[2] == {"principal": "User:alice"}
        status, _, me, _ = await send(raw_get("/api/whoami", cookie))
        assert me["principal"] == "User:alice" and 3590 <= me["expires_in_s"] <= 3600

        status, headers, body, _ = await send(raw_post("/api/logout", {}, cookie))
        assert status == 200 and body == {"logged_out": True}
        assert "Max-Age=0" in headers["set-cookie"]
        assert (await send(raw_get("/api/data", cookie)))[0] == 401

    session_endpoint(login, steps)


def test_a_failed_login_waits_and_its_address_backs_off() -> None:
    clock = Clock()
    backoff = LoginBackoff(base_s=5, cap_s=60, clock=clock)
    login = SessionLogin(check(backoff), SessionStore(3600), secure=True)

    async def steps(send: Any) -> None:
        wrong = raw_post("/api/login", {"username": "alice", "password": "guess"})
        status, _, body, took = await send(wrong)
        assert status == 401 and "login failed" in body["error"]
        assert took >= DELAY_MS / 1000  # delayed as a failed SASL login is
        # Inside the back-off every attempt is refused at once, the right password too.
        right = raw_post("/api/login", {"username": "alice", "password": "alice-pw"})
        status, headers, body, took = await send(right)
        assert (status, headers["retry-after"]) == (429, "5")
        assert took < DELAY_MS / 1000 and "too many failed logins" in body["error"]
        clock.now += 5
        assert (await send(wrong))[0] == 401
        status, headers, _, _ = await send(right)
        assert (status, headers["retry-after"]) == (429, "10")  # doubled
        clock.now += 10
        status, headers, _, _ = await send(right)
        assert status == 200 and "Secure" in headers["set-cookie"].split("; ")
        assert backoff.failures("127.0.0.1") == 0

    session_endpoint(login, steps)


def test_sessions_end_when_their_time_is_up() -> None:
    clock = Clock()
    store = SessionStore(60, clock=clock, limit=2)
    token, session = store.open(user("alice"), "PLAIN")
    short, _ = store.open(user("bob"), "PLAIN", ends_in_s=10)
    assert store.find(token) == session and store.seconds_left(session) == 60
    clock.now += 11
    assert store.find(short) is None and store.find(token) is not None
    third, _ = store.open(user("carol"), "PLAIN")
    fourth, _ = store.open(user("dave"), "PLAIN")  # over the limit: the soonest to end goes
    assert len(store) == 2 and store.find(token) is None
    clock.now += 60
    assert store.find(third) is None and store.find(fourth) is None
    assert not store.close("no-such-token") and store.find(None) is None


def test_one_login_in_flight_per_address() -> None:
    clock = Clock()
    backoff = LoginBackoff(base_s=1, clock=clock)
    assert backoff.begin("10.0.0.1") == 0
    assert backoff.begin("10.0.0.1") > 0  # a second attempt while the first runs
    assert backoff.begin("10.0.0.2") == 0  # other addresses are not slowed
    assert backoff.end("10.0.0.1", succeeded=False) == 1
    assert backoff.end("10.0.0.2", succeeded=True) == 0
    clock.now += 1
    assert backoff.begin("10.0.0.1") == 0


def test_basic_authentication_for_a_scraper() -> None:
    def authorize(principal: KafkaPrincipal, host: str) -> str | None:
        return None if principal == user("alice") and host == "127.0.0.1" else "DESCRIBE"

    gate = BasicAuthGate(check(), realm="samsa metrics", authorize=authorize)

    def basic(name: str, password: str) -> str:
        return "Basic " + base64.b64encode(f"{name}:{password}".encode()).decode()

    async def steps(send: Any) -> None:
        status, headers, _, _ = await send(raw_get("/metrics"))
        assert status == 401
        assert headers["www-authenticate"] == 'Basic realm="samsa metrics", charset="UTF-8"'
        assert (await send(raw_get("/metrics", authorization="Bearer x")))[0] == 401
        status, _, body, took = await send(raw_get("/metrics", authorization=basic("alice", "no")))
        assert status == 401 and took >= DELAY_MS / 1000
        gate.check.backoff = LoginBackoff(base_s=0)
        status, _, body, _ = await send(
            raw_get("/metrics", authorization=basic("alice", "alice-pw"))
        )
        assert (status, body) == (200, b"alice's metrics\n")
        # Remembered: even with the listener's users gone it is not checked again.
        gate.check.verifier = CredentialVerifier({})
        assert (await send(raw_get("/metrics", authorization=basic("alice", "alice-pw"))))[0] == 200

    def scrape(request: Request) -> Response:
        return Response(200, f"{request.principal.name}'s metrics\n".encode())  # type: ignore[union-attr]

    with_endpoint(gate, {"/metrics": scrape}, {}, steps)


def test_an_oauthbearer_token_logs_in_until_it_expires() -> None:
    mechanisms = server_mechanisms(
        ["OAUTHBEARER"],
        lambda m: (
            "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;",
            "sasl.jaas.config",
        ),
    )
    token_check = PasswordCheck(
        CredentialVerifier(mechanisms),
        failed_delay_ms=0,
        what="test login",
        backoff=LoginBackoff(base_s=0),
    )
    login = SessionLogin(token_check, SessionStore(3600), secure=False)
    exp = int(time.time()) + 120

    async def steps(send: Any) -> None:
        offered = (await send(raw_get("/api/login")))[2]
        assert offered == {"login": True, "mechanisms": [], "token": True}
        status, headers, body, _ = await send(
            raw_post("/api/login", {"token": unsecured_token({"sub": "erin", "exp": exp})})
        )
        assert status == 200 and body["principal"] == "User:erin"
        assert body["mechanism"] == "OAUTHBEARER" and 110 <= body["expires_in_s"] <= 120
        assert (await send(raw_get("/api/data", cookie_of(headers))))[2] == {
            "principal": "User:erin"
        }
        expired = unsecured_token({"sub": "erin", "exp": int(time.time()) - 60})
        status, _, body, _ = await send(raw_post("/api/login", {"token": expired}))
        assert status == 401 and "invalid_token" in body["error"]
        status, _, body, _ = await send(
            raw_post("/api/login", {"username": "erin", "password": "x"})
        )
        assert status == 400 and "no user name and password" in body["error"]

    session_endpoint(login, steps)
