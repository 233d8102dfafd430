"""Signed JWS tokens and the JWKS that verifies them, made at test time."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

from samsa.protocol.sasl.oauthbearer import b64url


def _int(value: int, size: int | None = None) -> str:
    return b64url(value.to_bytes(size or (value.bit_length() + 7) // 8, "big"))


class Issuer:
    """One RSA and one EC P-256 key, each with a kid, and their JWKS."""

    def __init__(self) -> None:
        self.rsa = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.ec = ec.generate_private_key(ec.SECP256R1())

    def jwks(self) -> dict[str, Any]:
        rsa_numbers = self.rsa.public_key().public_numbers()
        ec_numbers = self.ec.public_key().public_numbers()
        return {
            "keys": [
                {"kty": "RSA", "kid": "rsa-1", "n": _int(rsa_numbers.n), "e": _int(rsa_numbers.e)},
                {
                    "kty": "EC",
                    "kid": "ec-1",
                    "crv": "P-256",
                    "x": _int(ec_numbers.x, 32),
                    "y": _int(ec_numbers.y, 32),
                },
            ]
        }

    def write_jwks(self, directory: Path) -> Path:
        path = directory / "jwks.json"
        path.write_text(json.dumps(self.jwks()))
        return path

    def token(self, claims: dict[str, Any], alg: str = "RS256", kid: str | None = None) -> str:
        kid = kid or ("rsa-1" if alg.startswith("RS") else "ec-1")
        header = b64url(json.dumps({"alg": alg, "kid": kid, "typ": "JWT"}).encode())
        body = b64url(json.dumps(claims).encode())
        signing_input = f"{header}.{body}".encode()
        if alg == "RS256":
            signature = self.rsa.sign(signing_input, padding.PKCS1v15(), hashes.SHA256())
        else:
            r, s = decode_dss_signature(self.ec.sign(signing_input, ec.ECDSA(hashes.SHA256())))
            signature = r.to_bytes(32, "big") + s.to_bytes(32, "big")
        return f"{header}.{body}.{b64url(signature)}"
