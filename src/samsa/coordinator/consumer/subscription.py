"""Which topics a member subscribes to: its topic list plus the broker-evaluated regex.

Kafka evaluates ``subscribed_topic_regex`` on the broker with RE2/J and matches
whole topic names; Python's ``re`` accepts the RE2 syntax clients use in
practice (character classes, alternation, anchors, ``.*``).  Internal topics
(leading ``__``) never match a regex, as in Kafka.  Compiled patterns are
cached: every heartbeat of a regex member resolves its subscription.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping

from samsa.coordinator.consumer.group import ConsumerMember, TopicMetadata


class InvalidRegex(ValueError):
    """The member's regex does not compile; answered INVALID_REGULAR_EXPRESSION."""


@functools.lru_cache(maxsize=256)
def compile_regex(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise InvalidRegex(f"invalid regular expression {pattern!r}: {exc}") from None


def subscribed_topics(member: ConsumerMember, existing: Iterable[str]) -> frozenset[str]:
    """The existing topics ``member`` subscribes to (names it lists that do not exist yet
    are left out, and picked up by the metadata check once they are created)."""
    names = set(existing)
    out = {t for t in member.subscribed_topic_names if t in names}
    if member.subscribed_topic_regex:
        pattern = compile_regex(member.subscribed_topic_regex)
        out.update(t for t in names if not t.startswith("__") and pattern.fullmatch(t))
    return frozenset(out)


def group_topics(
    members: Iterable[ConsumerMember], all_topics: Mapping[str, tuple[bytes, int]]
) -> tuple[dict[str, frozenset[str]], TopicMetadata]:
    """Each member's subscribed topics, and the metadata of their union."""
    per_member = {m.member_id: subscribed_topics(m, all_topics) for m in members}
    union: set[str] = set().union(*per_member.values()) if per_member else set()
    return per_member, {t: all_topics[t] for t in sorted(union)}
