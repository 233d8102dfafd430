"""The registry state fed by ``_schemas`` records, in Confluent's exact format."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from samsa.registry.records import RegistryKey, SchemaValue
from samsa.registry.store import RegistryState

# Records as Confluent Schema Registry writes them (Jackson, compact, property order
# of SchemaKey / ConfigKey / ...; null members left out; tombstones are null values).
CONFLUENT_LOG: list[tuple[bytes, bytes | None]] = [
    (b'{"keytype":"NOOP","magic":0}', None),
    (b'{"keytype":"CONFIG","magic":0}', b'{"compatibilityLevel":"FULL"}'),
    (b'{"keytype":"SCHEMA","subject":"user-value","version":1,"magic":1}',
     b'{"subject":"user-value","version":1,"id":1,"schema":"\\"string\\"","deleted":false}'),
    (b'{"keytype":"SCHEMA","subject":"order-value","version":1,"magic":1}',
     b'{"subject":"order-value","version":1,"id":2,"schemaType":"PROTOBUF",'
     b'"schema":"syntax = \\"proto3\\";\\n\\nmessage Order {\\n  int64 id = 1;\\n}\\n",'
     b'"deleted":false,"metadata":{"properties":{"owner":"x"}}}'),
    (b'{"keytype":"SCHEMA","subject":"user-value","version":2,"magic":1}',
     b'{"subject":"user-value","version":2,"id":3,"schema":"\\"bytes\\"","deleted":false}'),
    (b'{"keytype":"CONFIG","subject":"user-value","magic":0}', b'{"compatibilityLevel":"NONE"}'),
    (b'{"keytype":"MODE","subject":"order-value","magic":0}', b'{"mode":"READONLY"}'),
    (b'{"keytype":"DELETE_SUBJECT","subject":"user-value","magic":0}',
     b'{"subject":"user-value","version":2}'),
    (b'{"keytype":"SCHEMA","subject":"user-value","version":1,"magic":1}', None),
    (b'{"keytype":"CONFIG","subject":"user-value","magic":0}', None),
]  # fmt: skip


def replay(log: list[tuple[bytes, bytes | None]]) -> RegistryState:
    state = RegistryState()
    for offset, (key, value) in enumerate(log):
        assert state.apply(key, value, offset) is None
    return state


def test_confluent_records_build_the_state() -> None:
    state = replay(CONFLUENT_LOG)
    assert state.applied_offset == len(CONFLUENT_LOG) - 1
    assert state.configs == {None: {"compatibilityLevel": "FULL"}}
    assert state.modes == {"order-value": "READONLY"}
    # DELETE_SUBJECT soft-deleted versions 1..2; the tombstone then removed version 1.
    assert [v.version for v in state.versions("user-value", include_deleted=True)] == [2]
    assert state.versions("user-value") == []
    assert state.subject_names() == ["order-value"]
    assert state.subject_names(include_deleted=True) == ["order-value", "user-value"]
    order = state.latest("order-value")
    assert order is not None and order.schema_type == "PROTOBUF"
    assert order.extra == {"metadata": {"properties": {"owner": "x"}}}
    # Ids: soft-deleted schemas stay readable by id; permanently deleted ones do not,
    # but their ids stay taken.
    assert state.schema_by_id(3) is not None and state.schema_by_id(1) is None
    assert state.next_id() == 4


def test_keys_and_values_round_trip_in_confluents_bytes() -> None:
    for key, value in CONFLUENT_LOG:
        parsed = RegistryKey.decode(key)
        assert parsed.encode() == key
        if parsed.keytype == "SCHEMA" and value is not None:
            decoded = SchemaValue.decode(value)
            assert json.loads(decoded.encode()) == json.loads(value)
    assert RegistryKey.schema("s", 3).encode() == (
        b'{"keytype":"SCHEMA","subject":"s","version":3,"magic":1}'
    )
    assert RegistryKey.config(None).encode() == b'{"keytype":"CONFIG","magic":0}'


def test_overwrites_reuse_the_key_bytes_they_were_read_with() -> None:
    # Karapace spells the global config key with "subject":null; compaction works on
    # bytes, so a later write must use the same spelling.
    state = RegistryState()
    karapace_key = b'{"keytype":"CONFIG","subject":null,"magic":0}'
    state.apply(karapace_key, b'{"compatibilityLevel":"NONE"}')
    assert state.raw_key(RegistryKey.config(None)) == karapace_key
    assert state.configs[None] == {"compatibilityLevel": "NONE"}


def test_a_second_schema_under_a_used_id_is_refused() -> None:
    state = RegistryState()
    state.apply(RegistryKey.schema("a", 1).encode(), SchemaValue("a", 1, 7, '"int"').encode())
    reason = state.apply(
        RegistryKey.schema("b", 1).encode(), SchemaValue("b", 1, 7, '"long"').encode()
    )
    assert reason is not None and "id already in use" in reason
    assert state.version("b", 1) is None


def test_malformed_records_are_skipped_not_fatal() -> None:
    state = RegistryState()
    assert state.apply(b"not json", b"{}") is not None
    assert state.apply(b'{"keytype":"WHAT","magic":0}', b"{}") is not None
    key = RegistryKey.schema("s", 1).encode()
    assert state.apply(key, b'{"subject":"s"}') is not None
    assert state.subject_names(include_deleted=True) == []


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.binary(max_size=80), st.one_of(st.none(), st.binary(max_size=80)))))
def test_arbitrary_bytes_never_crash_the_state(records: list[tuple[bytes, bytes | None]]) -> None:
    state = RegistryState()
    for key, value in records:
        state.apply(key, value)


SUBJECTS = st.sampled_from(["a", "b"])
COMMANDS = st.lists(
    st.tuples(st.sampled_from(["put", "soft", "hard"]), SUBJECTS, st.integers(1, 3)), max_size=30
)


@settings(max_examples=200, deadline=None)
@given(COMMANDS)
def test_ids_only_grow_whatever_is_deleted(commands: list[tuple[str, str, int]]) -> None:
    state = RegistryState()
    seen_max = 0
    for kind, subject, version in commands:
        key = RegistryKey.schema(subject, version).encode()
        if kind == "put":
            schema_id = state.next_id()
            assert schema_id > seen_max
            text = json.dumps({"type": "fixed", "name": "F", "size": schema_id})
            state.apply(key, SchemaValue(subject, version, schema_id, text).encode())
            seen_max = schema_id
        elif kind == "soft" and (stored := state.version(subject, version)):
            stored_copy = SchemaValue(**{**stored.__dict__, "deleted": True})
            state.apply(key, stored_copy.encode())
        elif kind == "hard":
            state.apply(key, None)
        assert state.next_id() == seen_max + 1
