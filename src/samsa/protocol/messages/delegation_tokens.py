"""Create/Renew/Expire/DescribeDelegationToken (keys 38-41): KIP-48's tokens.

Transcribed from Kafka 4.4's ``*DelegationTokenRequest/Response.json``.
Version 0 was removed in Kafka 4.0 (v1 is the baseline and the same as v0);
v2 is the first flexible version; CreateDelegationToken v3 names an owner
other than the requester (KIP-373) and the responses of Create and Describe
v3 name who requested the token.  A token is its id (a UUID string, the SCRAM
user name it logs in with) and its HMAC (the password, base64 on the client).
"""

from samsa.protocol.schema import F, api

_PRINCIPAL = [F("principal_type", "string"), F("principal_name", "string")]

APIS = [
    api(
        38,
        "CreateDelegationToken",
        listeners=("broker", "controller"),
        valid="1-3",
        flexible="2+",
        request=[
            F("owner_principal_type", "string", "3+", nullable="3+", default=None),
            F("owner_principal_name", "string", "3+", nullable="3+", default=None),
            F("renewers", "[]struct", fields=_PRINCIPAL),
            F("max_lifetime_ms", "int64"),
        ],
        response=[
            F("error_code", "int16"),
            F("principal_type", "string"),
            F("principal_name", "string"),
            F("token_requester_principal_type", "string", "3+"),
            F("token_requester_principal_name", "string", "3+"),
            F("issue_timestamp_ms", "int64"),
            F("expiry_timestamp_ms", "int64"),
            F("max_timestamp_ms", "int64"),
            F("token_id", "string"),
            F("hmac", "bytes"),
            F("throttle_time_ms", "int32"),
        ],
    ),
    api(
        39,
        "RenewDelegationToken",
        listeners=("broker", "controller"),
        valid="1-2",
        flexible="2+",
        request=[F("hmac", "bytes"), F("renew_period_ms", "int64")],
        response=[
            F("error_code", "int16"),
            F("expiry_timestamp_ms", "int64"),
            F("throttle_time_ms", "int32"),
        ],
    ),
    api(
        40,
        "ExpireDelegationToken",
        listeners=("broker", "controller"),
        valid="1-2",
        flexible="2+",
        request=[F("hmac", "bytes"), F("expiry_time_period_ms", "int64")],
        response=[
            F("error_code", "int16"),
            F("expiry_timestamp_ms", "int64"),
            F("throttle_time_ms", "int32"),
        ],
    ),
    api(
        41,
        "DescribeDelegationToken",
        listeners=("broker", "controller"),
        valid="1-3",
        flexible="2+",
        request=[F("owners", "[]struct", nullable="0+", default=None, fields=_PRINCIPAL)],
        response=[
            F("error_code", "int16"),
            F(
                "tokens",
                "[]struct",
                fields=[
                    *_PRINCIPAL,
                    F("token_requester_principal_type", "string", "3+"),
                    F("token_requester_principal_name", "string", "3+"),
                    F("issue_timestamp", "int64"),
                    F("expiry_timestamp", "int64"),
                    F("max_timestamp", "int64"),
                    F("token_id", "string"),
                    F("hmac", "bytes"),
                    F("renewers", "[]struct", fields=_PRINCIPAL),
                ],
            ),
            F("throttle_time_ms", "int32"),
        ],
    ),
]
