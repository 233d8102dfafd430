"""Checking an OAUTHBEARER token: unsecured JWS for tests, signed JWS against a JWKS file.

``UnsecuredValidator`` is Kafka's OAuthBearerUnsecuredValidatorCallbackHandler:
``alg`` must be ``none``, the principal claim (``sub`` unless
``unsecuredValidatorPrincipalClaimName``) a non-empty string, ``exp`` a number
of seconds, ``iat`` (when present) not in the future, every
``unsecuredValidatorRequiredScope`` present in the scope claim, with
``unsecuredValidatorAllowableClockSkewMs`` of slack.

``JwksValidator`` is Kafka's OAuthBearerValidatorCallbackHandler over a local
JWKS file (``sasl.oauthbearer.jwks.endpoint.url=file:...``): the signature is
checked with the key the header's ``kid`` names (RS256, RS384, RS512 or
ES256), then the same time checks, plus ``sasl.oauthbearer.expected.audience``
and ``sasl.oauthbearer.expected.issuer`` when set.  The keys are read when the
listener starts; ``cryptography`` (a C-backed library) does the arithmetic and
is imported only when a JWKS is configured.

Both return a ``ValidatedToken`` or raise ``TokenRefused`` with the status
Kafka puts in its JSON error (``invalid_token`` or ``insufficient_scope``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from samsa.errors import ConfigError, DecodeError
from samsa.protocol.sasl.oauthbearer import Jws, parse_jws, unb64url


class TokenRefused(Exception):
    def __init__(self, reason: str, status: str = "invalid_token", scope: str = "") -> None:
        super().__init__(reason)
        self.status = status
        self.scope = scope

    def json_error(self) -> bytes:
        """Kafka's error challenge: the status (and the scope that was missing)."""
        body = {"status": self.status, **({"scope": self.scope} if self.scope else {})}
        return json.dumps(body, separators=(",", ":")).encode()


@dataclass(frozen=True, slots=True)
class ValidatedToken:
    principal: str
    expires_ms: int
    scope: frozenset[str]


class TokenValidator(Protocol):
    def validate(self, token: str, now_ms: int) -> ValidatedToken: ...


@dataclass(frozen=True, slots=True)
class ClaimRules:
    """What both validators check once the token is trusted to be what it says."""

    principal_claim: str = "sub"
    scope_claim: str = "scope"
    required_scope: frozenset[str] = frozenset()
    skew_ms: int = 0
    audience: frozenset[str] = frozenset()
    issuer: str = ""

    def check(self, claims: Mapping[str, Any], now_ms: int) -> ValidatedToken:
        principal = claims.get(self.principal_claim)
        if not isinstance(principal, str) or not principal.strip():
            raise TokenRefused(f"the token has no principal claim {self.principal_claim!r}")
        exp = claims.get("exp")
        if not isinstance(exp, (int, float)) or isinstance(exp, bool):
            raise TokenRefused("the token has no numeric exp (expiration time) claim")
        expires_ms = int(exp * 1000)
        if expires_ms + self.skew_ms <= now_ms:
            raise TokenRefused("the indicated time is past the token's expiration time")
        iat = claims.get("iat")
        if iat is not None:
            if not _is_number(iat):
                raise TokenRefused("the iat (issued at) claim is not a number")
            if iat * 1000 > now_ms + self.skew_ms:
                raise TokenRefused("the token was issued in the future")
            if iat * 1000 >= expires_ms:
                raise TokenRefused("the token expires before it was issued")
        if self.issuer and claims.get("iss") != self.issuer:
            raise TokenRefused("the token's issuer (iss) is not the expected issuer")
        if self.audience:
            aud = claims.get("aud")
            given = {aud} if isinstance(aud, str) else set(aud) if isinstance(aud, list) else set()
            if not given & self.audience:
                raise TokenRefused("the token's audience (aud) is not an expected audience")
        scope = _scope(claims.get(self.scope_claim))
        missing = self.required_scope - scope
        if missing:
            raise TokenRefused(
                f"the token lacks the required scope {' '.join(sorted(missing))}",
                "insufficient_scope",
                " ".join(sorted(self.required_scope)),
            )
        return ValidatedToken(principal, expires_ms, scope)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _scope(value: Any) -> frozenset[str]:
    if isinstance(value, str):
        return frozenset(value.split())
    if isinstance(value, list):
        return frozenset(v for v in value if isinstance(v, str))
    return frozenset()


def _parse(token: str) -> Jws:
    try:
        return parse_jws(token)
    except DecodeError as exc:
        raise TokenRefused(str(exc)) from None


class UnsecuredValidator:
    def __init__(self, rules: ClaimRules) -> None:
        self.rules = rules

    @classmethod
    def from_jaas(cls, options: Mapping[str, str], key: str) -> UnsecuredValidator:
        try:
            skew_ms = int(options.get("unsecuredValidatorAllowableClockSkewMs", "0"))
        except ValueError:
            raise ConfigError(
                f"{key}: unsecuredValidatorAllowableClockSkewMs is not a number"
            ) from None
        return cls(
            ClaimRules(
                principal_claim=options.get("unsecuredValidatorPrincipalClaimName", "sub"),
                scope_claim=options.get("unsecuredValidatorScopeClaimName", "scope"),
                required_scope=frozenset(
                    options.get("unsecuredValidatorRequiredScope", "").replace(",", " ").split()
                ),
                skew_ms=skew_ms,
            )
        )

    def validate(self, token: str, now_ms: int) -> ValidatedToken:
        jws = _parse(token)
        if jws.header.get("alg") != "none" or jws.signature:
            raise TokenRefused("an unsecured token must have alg none and no signature")
        return self.rules.check(jws.claims, now_ms)


class JwksValidator:
    def __init__(self, keys: Mapping[str, Any], rules: ClaimRules) -> None:
        self._keys = dict(keys)
        self.rules = rules

    @classmethod
    def from_file(cls, location: str, rules: ClaimRules) -> JwksValidator:
        path = Path(location.removeprefix("file://").removeprefix("file:"))
        key = "sasl.oauthbearer.jwks.endpoint.url"
        try:
            document = json.loads(path.read_text())
        except OSError as exc:
            raise ConfigError(f"{key}: cannot read {path}: {exc.strerror}") from None
        except ValueError:
            raise ConfigError(f"{key}: {path} is not a JSON Web Key Set") from None
        keys = {}
        for index, jwk in enumerate(document.get("keys", []) if isinstance(document, dict) else []):
            keys[str(jwk.get("kid", index))] = _public_key(jwk, key)
        if not keys:
            raise ConfigError(f"{key}: {path} holds no keys")
        return cls(keys, rules)

    def validate(self, token: str, now_ms: int) -> ValidatedToken:
        jws = _parse(token)
        kid = jws.header.get("kid")
        key = self._keys.get(kid) if kid is not None else None
        if key is None and kid is None and len(self._keys) == 1:
            key = next(iter(self._keys.values()))
        if key is None:
            raise TokenRefused(f"no key in the JWKS for kid {kid!r}")
        _verify(key, str(jws.header.get("alg")), jws.signing_input, jws.signature)
        return self.rules.check(jws.claims, now_ms)


def _public_key(jwk: Mapping[str, Any], key: str) -> Any:
    try:
        from cryptography.hazmat.primitives.asymmetric import ec, rsa
    except ImportError:
        raise ConfigError(
            f"{key}: checking signed tokens needs the cryptography package "
            "(pip install 'samsa[oauth]')"
        ) from None

    def number(name: str) -> int:
        return int.from_bytes(unb64url(str(jwk[name])), "big")

    try:
        if jwk.get("kty") == "RSA":
            return rsa.RSAPublicNumbers(number("e"), number("n")).public_key()
        if jwk.get("kty") == "EC" and jwk.get("crv") == "P-256":
            return ec.EllipticCurvePublicNumbers(
                number("x"), number("y"), ec.SECP256R1()
            ).public_key()
    except (KeyError, ValueError, DecodeError) as exc:
        raise ConfigError(f"{key}: a key of the JWKS is malformed ({exc})") from None
    raise ConfigError(f"{key}: only RSA and EC P-256 keys are supported, got {jwk.get('kty')}")


def _verify(key: Any, alg: str, signing_input: bytes, signature: bytes) -> None:
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
    from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

    hashes_by_alg: dict[str, type[hashes.SHA256 | hashes.SHA384 | hashes.SHA512]] = {
        "RS256": hashes.SHA256,
        "RS384": hashes.SHA384,
        "RS512": hashes.SHA512,
    }
    try:
        if alg in hashes_by_alg and isinstance(key, rsa.RSAPublicKey):
            key.verify(signature, signing_input, padding.PKCS1v15(), hashes_by_alg[alg]())
            return
        if alg == "ES256" and isinstance(key, ec.EllipticCurvePublicKey):
            if len(signature) != 64:
                raise TokenRefused("an ES256 signature is 64 bytes")
            r, s = (int.from_bytes(signature[i : i + 32], "big") for i in (0, 32))
            key.verify(encode_dss_signature(r, s), signing_input, ec.ECDSA(hashes.SHA256()))
            return
    except InvalidSignature:
        raise TokenRefused("the token's signature does not verify") from None
    raise TokenRefused(f"algorithm {alg} does not match the key (RS256/384/512, ES256)")
