"""Clickstream events to a topic: JSON values such as
``{"user": "u7", "page": "/cart", "ts": "2026-11-25T10:00:03Z"}``, keyed by user.

Deterministic for a seed, so a test can compute the expected counts itself.
Event times are spread over ``minutes`` minutes from a fixed start.
"""

from __future__ import annotations

import argparse
import json
import random
from datetime import UTC, datetime, timedelta

from samsa.client import Producer

PAGES = ("/", "/search", "/product", "/cart", "/checkout")
START = datetime(2026, 11, 25, 10, 0, tzinfo=UTC)


def events(count: int, seed: int = 7, minutes: int = 5) -> list[dict[str, str]]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        moment = START + timedelta(seconds=rng.uniform(0, minutes * 60))
        out.append(
            {
                "user": f"u{rng.randrange(50)}",
                "page": rng.choice(PAGES),
                "ts": moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            }
        )
    return out


def send(bootstrap: str, topic: str, batch: list[dict[str, str]]) -> None:
    with Producer({"bootstrap.servers": bootstrap}) as producer:
        for event in batch:
            producer.send(topic, json.dumps(event).encode(), key=event["user"].encode())
        producer.flush()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bootstrap", default="127.0.0.1:9092")
    ap.add_argument("--topic", default="clicks")
    ap.add_argument("--events", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    send(args.bootstrap, args.topic, events(args.events, args.seed))
    print(f"sent {args.events} click events to {args.topic}")


if __name__ == "__main__":
    main()
