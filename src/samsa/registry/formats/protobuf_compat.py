"""Protobuf compatibility, by the rules Confluent documents and its ``SchemaDiff`` applies.

The old schema's descriptor is compared with the new one's (BACKWARD; FORWARD
swaps them).  Changes that break readers of the wire format are refused:

* PACKAGE_CHANGED: the file's package differs;
* MESSAGE_REMOVED: a message of the writer is missing from the reader;
* FIELD_KIND_CHANGED: a field number changes between scalar/enum, message and map;
* FIELD_SCALAR_KIND_CHANGED: a scalar changes outside its wire-compatible group
  (int32/int64/uint32/uint64/bool and enums; sint32/sint64; string/bytes;
  fixed32/sfixed32; fixed64/sfixed64; float; double);
* FIELD_NAMED_TYPE_CHANGED: a message-typed field names another message;
* FIELD_NUMERIC_LABEL_CHANGED: a numeric field turns repeated or back (packing);
* REQUIRED_FIELD_ADDED / REQUIRED_FIELD_REMOVED (proto2);
* ONEOF_FIELD_REMOVED, MULTIPLE_FIELDS_MOVED_TO_ONEOF, FIELD_MOVED_TO_EXISTING_ONEOF.

Everything else is compatible: adding or removing optional fields (so renumbering
a field is a removal plus an addition), renaming fields, enum changes, adding or
removing oneofs, moving messages (record message indexes are per schema id).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from google.protobuf import descriptor_pb2 as pb
from google.protobuf.descriptor_pb2 import FieldDescriptorProto as FieldProto

from samsa.registry.formats.protobuf import ProtobufSchema

F = pb.FieldDescriptorProto
_GROUPS = {
    F.TYPE_INT32: "GENERAL_NUMBER", F.TYPE_INT64: "GENERAL_NUMBER",
    F.TYPE_UINT32: "GENERAL_NUMBER", F.TYPE_UINT64: "GENERAL_NUMBER",
    F.TYPE_BOOL: "GENERAL_NUMBER", F.TYPE_ENUM: "GENERAL_NUMBER",
    F.TYPE_SINT32: "SIGNED_NUMBER", F.TYPE_SINT64: "SIGNED_NUMBER",
    F.TYPE_STRING: "STRING_OR_BYTES", F.TYPE_BYTES: "STRING_OR_BYTES",
    F.TYPE_FIXED32: "FIXED32", F.TYPE_SFIXED32: "FIXED32",
    F.TYPE_FIXED64: "FIXED64", F.TYPE_SFIXED64: "FIXED64",
    F.TYPE_FLOAT: "FLOAT", F.TYPE_DOUBLE: "DOUBLE",
}  # fmt: skip
_DESCRIPTIONS = {
    "PACKAGE_CHANGED": "The package at '{path}' in the new schema does not match the old",
    "MESSAGE_REMOVED": "The message at '{path}' in the old schema is missing in the new",
    "FIELD_KIND_CHANGED": "The kind of the field at '{path}' changed",
    "FIELD_SCALAR_KIND_CHANGED": "The scalar type of the field at '{path}' changed incompatibly",
    "FIELD_NAMED_TYPE_CHANGED": "The message type of the field at '{path}' changed",
    "FIELD_NUMERIC_LABEL_CHANGED": "The numeric field at '{path}' changed to or from repeated",
    "REQUIRED_FIELD_ADDED": "The required field at '{path}' was added",
    "REQUIRED_FIELD_REMOVED": "The required field at '{path}' was removed",
    "ONEOF_FIELD_REMOVED": "The field at '{path}' was removed from its oneof",
    "MULTIPLE_FIELDS_MOVED_TO_ONEOF": "Several existing fields were moved into the oneof at '{path}'",
    "FIELD_MOVED_TO_EXISTING_ONEOF": "A field was moved into the existing oneof at '{path}'",
}


@dataclass(frozen=True)
class _TypeInfo:
    proto: Any  # DescriptorProto or EnumDescriptorProto
    package: str
    local: bool  # defined in the schema itself, not in an import


def read_errors(reader: ProtobufSchema, writer: ProtobufSchema) -> list[str]:
    diff = _Diff(_types(writer), _types(reader))
    if writer.fdp.package != reader.fdp.package:
        diff.add("PACKAGE_CHANGED", "#/")
    diff.types(list(writer.fdp.message_type), list(reader.fdp.message_type), "#")
    return diff.errors


def _types(schema: ProtobufSchema) -> dict[str, _TypeInfo]:
    found: dict[str, _TypeInfo] = {}
    files = [(schema.fdp, True), *((d, False) for d in schema.deps.values())]
    for fdp, local in files:

        def walk(
            messages: Any, enums: Any, scope: str, fdp: Any = fdp, local: bool = local
        ) -> None:
            for enum in enums:
                found[f"{scope}.{enum.name}"] = _TypeInfo(enum, fdp.package, local)
            for msg in messages:
                found[f"{scope}.{msg.name}"] = _TypeInfo(msg, fdp.package, local)
                walk(msg.nested_type, msg.enum_type, f"{scope}.{msg.name}")

        walk(fdp.message_type, fdp.enum_type, f".{fdp.package}" if fdp.package else "")
    return found


class _Diff:
    def __init__(self, original: dict[str, _TypeInfo], update: dict[str, _TypeInfo]) -> None:
        self.original, self.update = original, update
        self.errors: list[str] = []
        self.comparing: set[tuple[str, str]] = set()

    def add(self, kind: str, path: str) -> None:
        description = _DESCRIPTIONS[kind].format(path=path)
        self.errors.append(f"{{errorType:'{kind}', description:'{description}'}}")

    def types(self, original: list[Any], update: list[Any], path: str) -> None:
        updates = {m.name: m for m in update}
        for msg in original:
            if msg.name not in updates:
                if not msg.options.map_entry:
                    self.add("MESSAGE_REMOVED", f"{path}/{msg.name}")
            else:
                self.message(msg, updates[msg.name], f"{path}/{msg.name}")

    def message(self, original: Any, update: Any, path: str) -> None:
        o_top, o_oneof = _split(original)
        u_top, u_oneof = _split(update)
        moved_away = set()
        for name, members in _by_oneof(update, u_oneof).items():
            moved = [n for n in members if n in o_top]
            existing = [n for n in members if n not in o_top and n in o_oneof]
            moved_away.update(moved)
            if len(moved) > 1:
                self.add("MULTIPLE_FIELDS_MOVED_TO_ONEOF", f"{path}/{name}")
            elif len(moved) == 1 and existing:
                self.add("FIELD_MOVED_TO_EXISTING_ONEOF", f"{path}/{name}")
        o_groups, u_groups = _by_oneof(original, o_oneof), _by_oneof(update, u_oneof)
        for name, members in o_groups.items():
            if name in u_groups:
                for number in members:
                    if number not in u_groups[name]:
                        self.add("ONEOF_FIELD_REMOVED", f"{path}/{name}/{number}")
        for number, field in o_top.items():
            if number in moved_away:
                continue
            removed = number not in u_top and number not in u_oneof
            if removed and field.label == F.LABEL_REQUIRED:
                self.add("REQUIRED_FIELD_REMOVED", f"{path}/{number}")
        for number, field in u_top.items():
            if number not in o_top and number not in o_oneof and field.label == F.LABEL_REQUIRED:
                self.add("REQUIRED_FIELD_ADDED", f"{path}/{number}")
        o_all = {**o_top, **o_oneof}
        u_all = {**u_top, **u_oneof}
        for number in sorted(set(o_all) & set(u_all)):
            self.field(o_all[number], u_all[number], f"{path}/{number}")
        self.types(list(original.nested_type), list(update.nested_type), path)

    def field(self, original: FieldProto, update: FieldProto, path: str) -> None:
        o_kind, u_kind = self._kind(original, self.original), self._kind(update, self.update)
        if o_kind != u_kind:
            self.add("FIELD_KIND_CHANGED", path)
            return
        if o_kind == "SCALAR":
            if _GROUPS[original.type] != _GROUPS[update.type]:
                self.add("FIELD_SCALAR_KIND_CHANGED", path)
            elif _GROUPS[original.type] != "STRING_OR_BYTES" and (
                (original.label == F.LABEL_REPEATED) != (update.label == F.LABEL_REPEATED)
            ):
                self.add("FIELD_NUMERIC_LABEL_CHANGED", path)
        elif o_kind == "MAP":
            o_entry = self.original[original.type_name].proto
            u_entry = self.update[update.type_name].proto
            for o_part, u_part in zip(o_entry.field, u_entry.field, strict=False):
                self.field(o_part, u_part, path)
        elif o_kind == "MESSAGE":
            self._named(original.type_name, update.type_name, path)

    def _named(self, o_name: str, u_name: str, path: str) -> None:
        o_info, u_info = self.original.get(o_name), self.update.get(u_name)
        if o_info is None or u_info is None:
            if o_name != u_name:
                self.add("FIELD_NAMED_TYPE_CHANGED", path)
            return
        if _local_name(o_name, o_info) != _local_name(u_name, u_info):
            self.add("FIELD_NAMED_TYPE_CHANGED", path)
            return
        if (o_info.local and u_info.local) or (o_name, u_name) in self.comparing:
            return  # compared where the types themselves are compared, or in progress
        self.comparing.add((o_name, u_name))
        before = len(self.errors)
        self.message(o_info.proto, u_info.proto, f"#/{_local_name(o_name, o_info)}")
        if len(self.errors) > before:
            self.add("FIELD_NAMED_TYPE_CHANGED", path)

    @staticmethod
    def _kind(field: FieldProto, types: dict[str, _TypeInfo]) -> str:
        if field.type in (F.TYPE_MESSAGE, F.TYPE_GROUP):
            info = types.get(field.type_name)
            is_map = info is not None and info.proto.options.map_entry
            return "MAP" if is_map else "MESSAGE"
        return "SCALAR"


def _split(msg: Any) -> tuple[dict[int, FieldProto], dict[int, FieldProto]]:
    """A message's fields by number: outside real oneofs, and inside them."""
    top, inside = {}, {}
    for field in msg.field:
        if field.HasField("oneof_index") and not field.proto3_optional:
            inside[field.number] = field
        else:
            top[field.number] = field
    return top, inside


def _by_oneof(msg: Any, inside: dict[int, FieldProto]) -> dict[str, list[int]]:
    groups: dict[str, list[int]] = {}
    for number, field in inside.items():
        groups.setdefault(msg.oneof_decl[field.oneof_index].name, []).append(number)
    return groups


def _local_name(full: str, info: _TypeInfo) -> str:
    prefix = f".{info.package}." if info.package else "."
    return full[len(prefix) :] if full.startswith(prefix) else full.lstrip(".")
