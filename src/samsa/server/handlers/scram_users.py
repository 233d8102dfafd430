"""DescribeUserScramCredentials (50) and AlterUserScramCredentials (51).

Describing reads this broker's metadata image, as Kafka's brokers answer it
from their metadata cache: only mechanisms and iteration counts leave the
broker.  Alterations are the controller's (``scram_control``) and are
forwarded to it; when no controller answers, every user named gets the error.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from samsa.errors import ErrorCode, KafkaError
from samsa.protocol.sasl.scram import MECHANISM_TYPES
from samsa.server.connections.router import Body, RequestContext, Router

if TYPE_CHECKING:
    from samsa.controller.image.scram_image import ScramImage
    from samsa.server.broker_api import BrokerApi

DESCRIBE_USER_SCRAM_CREDENTIALS = 50
ALTER_USER_SCRAM_CREDENTIALS = 51


def register(router: Router, broker: BrokerApi) -> None:
    router.register(
        DESCRIBE_USER_SCRAM_CREDENTIALS, lambda ctx, req: describe(broker.image.scram, req)
    )
    router.register(ALTER_USER_SCRAM_CREDENTIALS, lambda ctx, req: alter(broker, ctx, req))


def describe(scram: ScramImage, req: Body) -> Body:
    """Kafka's ScramImage.describe: every user when none are named; a name given
    twice is DUPLICATE_RESOURCE, an unknown one RESOURCE_NOT_FOUND."""
    asked = [u["name"] for u in req.get("users") or []]
    results: list[dict[str, Any]] = []
    if not asked:
        results = [_described(scram, user) for user in scram.users()]
    else:
        counts = Counter(asked)
        for user in dict.fromkeys(asked):
            if counts[user] > 1:
                results.append(
                    _user_error(
                        user,
                        ErrorCode.DUPLICATE_RESOURCE,
                        "Cannot describe SCRAM credentials for the same user twice in a "
                        f"single request: {user}",
                    )
                )
            elif not scram.mechanisms_of(user):
                results.append(
                    _user_error(
                        user,
                        ErrorCode.RESOURCE_NOT_FOUND,
                        f"Attempt to describe a user credential that does not exist: {user}",
                    )
                )
            else:
                results.append(_described(scram, user))
    return {"throttle_time_ms": 0, "error_code": 0, "error_message": None, "results": results}


def _described(scram: ScramImage, user: str) -> dict[str, Any]:
    return {
        "user": user,
        "error_code": 0,
        "error_message": None,
        "credential_infos": [
            {"mechanism": MECHANISM_TYPES[mechanism], "iterations": credential.iterations}
            for mechanism, credential in scram.mechanisms_of(user)
        ],
    }


def _user_error(user: str, code: ErrorCode, message: str) -> dict[str, Any]:
    return {"user": user, "error_code": code, "error_message": message, "credential_infos": []}


async def alter(broker: BrokerApi, ctx: RequestContext, req: Body) -> Body:
    try:
        return await broker.forward(ALTER_USER_SCRAM_CREDENTIALS, ctx.version, req)
    except KafkaError as exc:
        users = dict.fromkeys(c["name"] for c in [*req["deletions"], *req["upsertions"]])
        return {
            "throttle_time_ms": 0,
            "results": [
                {"user": u, "error_code": exc.code, "error_message": str(exc)} for u in users
            ],
        }
