"""AlterClientQuotas on the controller: Kafka's validation, records only on change,
replay into the image, and the quotas' round trip through a snapshot."""

from __future__ import annotations

from typing import Any

from tests.controller.helpers import image_of

from samsa.controller.image.metadata_image import images_equal
from samsa.controller.security.client_quota_control import ClientQuotaControl
from samsa.controller.snapshot_records import image_from_records, snapshot_records
from samsa.errors import ErrorCode
from samsa.protocol.metadata_records import decode_metadata_record, encode_metadata_record


def _entry(entity: list[tuple[str, str | None]], *ops: tuple[str, float, bool]) -> dict[str, Any]:
    return {
        "entity": [{"entity_type": t, "entity_name": n} for t, n in entity],
        "ops": [{"key": k, "value": v, "remove": r} for k, v, r in ops],
    }


def _alter(control: ClientQuotaControl, *entries: dict[str, Any], validate_only: bool = False):
    result = control.alter_client_quotas({"entries": list(entries), "validate_only": validate_only})
    assert result.response is not None
    codes = [(e["error_code"], e["error_message"]) for e in result.response["entries"]]
    return result.records, codes


def test_a_set_writes_one_record_per_changed_key_and_replays_into_the_image() -> None:
    image = image_of()
    control = ClientQuotaControl(image)
    records, codes = _alter(
        control,
        _entry([("user", "alice"), ("client-id", None)], ("producer_byte_rate", 1024, False)),
        _entry([("client-id", "c")], ("request_percentage", 12.5, False)),
    )
    assert codes == [(0, None), (0, None)]
    assert len(records) == 2
    for record in records:
        image.replay(decode_metadata_record(encode_metadata_record(record)))
    assert image.client_quotas == {
        (("client-id", None), ("user", "alice")): {"producer_byte_rate": 1024.0},
        (("client-id", "c"),): {"request_percentage": 12.5},
    }
    # The same command again changes nothing, so writes nothing.
    again, _ = _alter(
        control,
        _entry([("client-id", None), ("user", "alice")], ("producer_byte_rate", 1024, False)),
    )
    assert again == []
    removed, _ = _alter(control, _entry([("client-id", "c")], ("request_percentage", 0, True)))
    for record in removed:
        image.replay(record)
    assert (("client-id", "c"),) not in image.client_quotas


def test_bad_entries_get_kafkas_invalid_request_and_the_good_ones_go_ahead() -> None:
    control = ClientQuotaControl(image_of())
    records, codes = _alter(
        control,
        _entry([], ("producer_byte_rate", 1, False)),
        _entry([("group", "g")], ("producer_byte_rate", 1, False)),
        _entry([("user", "a"), ("user", "b")], ("producer_byte_rate", 1, False)),
        _entry([("ip", "1.2.3.4"), ("user", "a")], ("connection_creation_rate", 1, False)),
        _entry([("ip", "not-an-ip")], ("connection_creation_rate", 1, False)),
        _entry([("user", "a")], ("no_such_rate", 1, False)),
        _entry([("user", "a")], ("producer_byte_rate", 1.5, False)),
        _entry([("user", "")], ("consumer_byte_rate", 5, False)),
        _entry([("user", "a")], ("consumer_byte_rate", 2048, False)),
    )
    invalid = ErrorCode.INVALID_REQUEST
    assert [code for code, _ in codes] == [invalid] * 8 + [0]
    messages = [message for _, message in codes]
    assert messages[0] == "Invalid empty client quota entity"
    assert messages[1] == "Unhandled client quota entity type: group"
    assert messages[2] == "Invalid empty client quota entity, duplicate entity entry user"
    assert messages[3] == "Invalid empty client quota entity"
    assert messages[4] == "not-an-ip is not a valid IP or resolvable host."
    assert messages[5] == "Invalid configuration key no_such_rate"
    assert messages[6] == "Configuration producer_byte_rate must be a Long value"
    assert messages[7] == "Empty user not supported"
    assert len(records) == 1


def test_validate_only_answers_the_same_and_writes_nothing() -> None:
    control = ClientQuotaControl(image_of())
    records, codes = _alter(
        control,
        _entry([("user", "a")], ("producer_byte_rate", 100, False)),
        _entry([("user", "a")], ("bad", 1, False)),
        validate_only=True,
    )
    assert records == []
    assert [code for code, _ in codes] == [0, ErrorCode.INVALID_REQUEST]


def test_quotas_survive_a_snapshot() -> None:
    image = image_of()
    control = ClientQuotaControl(image)
    records, _ = _alter(
        control,
        _entry([("user", None)], ("consumer_byte_rate", 5000, False)),
        _entry([("ip", "10.0.0.1")], ("connection_creation_rate", 3, False)),
    )
    image.replay_all(records)
    rebuilt = image_from_records(snapshot_records(image))
    assert images_equal(image, rebuilt)
    assert rebuilt.client_quotas[(("user", None),)] == {"consumer_byte_rate": 5000.0}
