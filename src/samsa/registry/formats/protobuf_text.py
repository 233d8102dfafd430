"""``FileDescriptorProto`` to ``.proto`` text: the canonical form the registry stores.

Confluent stores a Protobuf schema as Wire's re-formatted text (comments dropped,
two-space indents, one blank line between top-level items), whether the schema
came as text or as a base64 ``FileDescriptorProto`` (as confluent-kafka's
serializer sends it).  This printer writes the same shape from the descriptor.
Type names are written relative to the package where that resolves to the same
type from the place of use, fully qualified (leading dot) otherwise.
"""

from __future__ import annotations

import json
from typing import Any

from google.protobuf import descriptor_pb2 as pb
from google.protobuf.descriptor_pb2 import FieldDescriptorProto as FieldProto

from samsa.registry.formats.protobuf_parse import SCALARS, resolve_in

F = pb.FieldDescriptorProto
SCALAR_NAMES = {number: name for name, number in SCALARS.items()}
LABEL_NAMES = {
    F.LABEL_OPTIONAL: "optional",
    F.LABEL_REQUIRED: "required",
    F.LABEL_REPEATED: "repeated",
}


def default_json_name(name: str) -> str:
    parts = name.split("_")
    return parts[0] + "".join(p[:1].upper() + p[1:] for p in parts[1:])


class ProtoPrinter:
    def __init__(
        self,
        fdp: pb.FileDescriptorProto,
        symbols: dict[str, str],
        custom_options: dict[str, list[tuple[str, Any]]] | None = None,
        sort_fields: bool = False,
    ) -> None:
        self.fdp = fdp
        self.symbols = symbols
        self.custom = custom_options or {}
        self.sort_fields = sort_fields
        self.proto3 = fdp.syntax == "proto3"
        self.lines: list[str] = []

    def text(self) -> str:
        fdp = self.fdp
        scope = f".{fdp.package}" if fdp.package else ""
        self.lines.append(f'syntax = "{fdp.syntax or "proto2"}";')
        if fdp.package:
            self.lines.append(f"package {fdp.package};")
        if fdp.dependency:
            self.lines.append("")
            for index, dep in enumerate(fdp.dependency):
                kind = "public " if index in fdp.public_dependency else ""
                kind = "weak " if index in fdp.weak_dependency else kind
                self.lines.append(f'import {kind}"{dep}";')
        options = self._options(fdp.options, scope or ".")
        if options:
            self.lines.append("")
            self.lines.extend(f"option {o};" for o in options)
        for message in fdp.message_type:
            self.lines.append("")
            self._message(message, scope, 0)
        for enum in fdp.enum_type:
            self.lines.append("")
            self._enum(enum, scope, 0)
        self._extends(fdp.extension, scope, 0)
        for service in fdp.service:
            self.lines.append("")
            self._service(service, scope)
        return "\n".join(self.lines) + "\n"

    def _out(self, depth: int, text: str) -> None:
        self.lines.append("  " * depth + text)

    def type_name(self, full: str, scope: str) -> str:
        """The shortest name that resolves to ``full`` from ``scope``."""
        parts = full.lstrip(".").split(".")
        for start in range(len(parts) - 1, -1, -1):
            candidate = ".".join(parts[start:])
            if resolve_in(self.symbols, candidate, scope) == full:
                return candidate
        return full

    def _message(self, msg: pb.DescriptorProto, scope: str, depth: int) -> None:
        here = f"{scope}.{msg.name}"
        self._out(depth, f"message {msg.name} {{")
        for option in self._options(msg.options, here):
            self._out(depth + 1, f"option {option};")
        entries = {n.name: n for n in msg.nested_type if n.options.map_entry}
        groups = {f.type_name for f in msg.field if f.type == F.TYPE_GROUP}
        fields = sorted(msg.field, key=lambda f: f.number) if self.sort_fields else list(msg.field)
        real_oneofs = {
            i for i, f in ((f.oneof_index, f) for f in msg.field if f.HasField("oneof_index"))
            if not f.proto3_optional
        }  # fmt: skip
        printed_oneofs: set[int] = set()
        for field in fields:
            if field.HasField("oneof_index") and field.oneof_index in real_oneofs:
                if field.oneof_index not in printed_oneofs:
                    printed_oneofs.add(field.oneof_index)
                    self._oneof(msg, field.oneof_index, fields, entries, here, depth + 1)
                continue
            self._field(field, entries, msg, here, depth + 1, in_oneof=False)
        for start, end in ((r.start, r.end - 1) for r in msg.reserved_range):
            self._out(depth + 1, f"reserved {_range(start, end)};")
        if msg.reserved_name:
            self._out(depth + 1, f"reserved {', '.join(json.dumps(n) for n in msg.reserved_name)};")
        for start, end in ((r.start, r.end - 1) for r in msg.extension_range):
            self._out(depth + 1, f"extensions {_range(start, end)};")
        for nested in msg.nested_type:
            if nested.name not in entries and f"{here}.{nested.name}" not in groups:
                self._message(nested, here, depth + 1)
        for enum in msg.enum_type:
            self._enum(enum, here, depth + 1)
        self._extends(msg.extension, here, depth + 1)
        self._out(depth, "}")

    def _oneof(
        self, msg: Any, index: int, fields: list[Any], entries: Any, here: str, depth: int
    ) -> None:
        self._out(depth, f"oneof {msg.oneof_decl[index].name} {{")
        for field in fields:
            if field.HasField("oneof_index") and field.oneof_index == index:
                self._field(field, entries, msg, here, depth + 1, in_oneof=True)
        self._out(depth, "}")

    def _field(
        self, field: FieldProto, entries: Any, msg: Any, scope: str, depth: int, in_oneof: bool
    ) -> None:
        options = self._field_options(field, scope)
        suffix = f" [{', '.join(options)}]" if options else ""
        entry_name = field.type_name.rsplit(".", 1)[-1]
        if (
            field.type == F.TYPE_MESSAGE
            and entry_name in entries
            and field.type_name == f"{scope}.{entry_name}"
        ):
            key, value = (self._type(f, scope) for f in entries[entry_name].field)
            self._out(depth, f"map<{key}, {value}> {field.name} = {field.number}{suffix};")
            return
        label = self._label(field, in_oneof)
        if field.type == F.TYPE_GROUP:
            group = next(n for n in msg.nested_type if f"{scope}.{n.name}" == field.type_name)
            self._out(depth, f"{label}group {group.name} = {field.number}{suffix} {{")
            body = pb.DescriptorProto()
            body.CopyFrom(group)
            for nested_field in body.field:
                self._field(nested_field, {}, body, f"{scope}.{group.name}", depth + 1, False)
            self._out(depth, "}")
            return
        self._out(
            depth, f"{label}{self._type(field, scope)} {field.name} = {field.number}{suffix};"
        )

    def _label(self, field: FieldProto, in_oneof: bool) -> str:
        if in_oneof:
            return ""
        if field.label == F.LABEL_REPEATED or field.label == F.LABEL_REQUIRED:
            return LABEL_NAMES[field.label] + " "
        if self.proto3 and not field.proto3_optional:
            return ""
        return "optional "

    def _type(self, field: FieldProto, scope: str) -> str:
        if field.type in SCALAR_NAMES:
            return SCALAR_NAMES[field.type]
        return self.type_name(field.type_name, scope)

    def _field_options(self, field: FieldProto, scope: str) -> list[str]:
        out = []
        if field.HasField("default_value"):
            value = field.default_value
            quoted = field.type in (F.TYPE_STRING, F.TYPE_BYTES)
            out.append(f"default = {json.dumps(value) if quoted else value}")
        if field.HasField("json_name") and field.json_name != default_json_name(field.name):
            out.append(f"json_name = {json.dumps(field.json_name)}")
        return out + self._options(field.options, f"{scope}.{field.name}")

    def _enum(self, enum: pb.EnumDescriptorProto, scope: str, depth: int) -> None:
        here = f"{scope}.{enum.name}"
        self._out(depth, f"enum {enum.name} {{")
        for option in self._options(enum.options, here):
            self._out(depth + 1, f"option {option};")
        for value in enum.value:
            options = self._options(value.options, f"{here}.{value.name}")
            suffix = f" [{', '.join(options)}]" if options else ""
            self._out(depth + 1, f"{value.name} = {value.number}{suffix};")
        for r in enum.reserved_range:
            self._out(depth + 1, f"reserved {_range(r.start, r.end)};")
        if enum.reserved_name:
            self._out(
                depth + 1, f"reserved {', '.join(json.dumps(n) for n in enum.reserved_name)};"
            )
        self._out(depth, "}")

    def _extends(self, fields: Any, scope: str, depth: int) -> None:
        by_extendee: dict[str, list[FieldProto]] = {}
        for field in fields:
            by_extendee.setdefault(field.extendee, []).append(field)
        for extendee, members in by_extendee.items():
            if depth == 0:
                self.lines.append("")
            self._out(depth, f"extend {self.type_name(extendee, scope)} {{")
            for field in members:
                self._field(field, {}, None, scope, depth + 1, in_oneof=False)
            self._out(depth, "}")

    def _service(self, service: pb.ServiceDescriptorProto, scope: str) -> None:
        self._out(0, f"service {service.name} {{")
        for option in self._options(service.options, f"{scope}.{service.name}"):
            self._out(1, f"option {option};")
        for m in service.method:
            arg = ("stream " if m.client_streaming else "") + self.type_name(m.input_type, scope)
            ret = ("stream " if m.server_streaming else "") + self.type_name(m.output_type, scope)
            self._out(1, f"rpc {m.name} ({arg}) returns ({ret});")
        self._out(0, "}")

    def _options(self, options: Any, path: str) -> list[str]:
        out = []
        for descriptor, value in options.ListFields():
            if descriptor.name == "map_entry":
                continue
            if descriptor.enum_type is not None:
                text = descriptor.enum_type.values_by_number[value].name
            else:
                text = _value_text(value)
            out.append(f"{descriptor.name} = {text}")
        for name, value in self.custom.get(path, ()):
            out.append(f"{name} = {_value_text(value)}")
        return sorted(out) if self.sort_fields else out


def _range(start: int, end: int) -> str:
    if start == end:
        return str(start)
    return f"{start} to {'max' if end >= 536870911 else end}"


def _value_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if hasattr(value, "name") and not isinstance(value, (int, float)):
        return str(value.name)
    if hasattr(value, "elements"):
        inner = ", ".join(
            f"{e.name}: {_value_text(e.value)}" for e in value.elements if hasattr(e, "name")
        )
        return "{ " + inner + " }"
    return str(value)
