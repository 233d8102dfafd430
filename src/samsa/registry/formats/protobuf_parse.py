"""``.proto`` text to a ``FileDescriptorProto``: proto-schema-parser's AST, names resolved.

The parser only gives syntax; this module does what protoc does next: qualifies
type names by protobuf's scoping rules, turns map fields into map-entry messages,
proto3 ``optional`` into synthetic oneofs, and fills the descriptor.  The
descriptor is then checked by protobuf's own ``DescriptorPool`` (unknown types,
duplicate numbers, bad enum values) in ``protobuf.py``.
"""

from __future__ import annotations

from typing import Any

from antlr4.error.ErrorListener import ErrorListener
from google.protobuf import descriptor_pb2 as pb
from google.protobuf.descriptor_pb2 import FieldDescriptorProto as FieldProto
from proto_schema_parser import ast
from proto_schema_parser.parser import Parser

from samsa.registry.formats.base import InvalidSchemaError

F = pb.FieldDescriptorProto
SCALARS = {
    "double": F.TYPE_DOUBLE, "float": F.TYPE_FLOAT, "int64": F.TYPE_INT64,
    "uint64": F.TYPE_UINT64, "int32": F.TYPE_INT32, "fixed64": F.TYPE_FIXED64,
    "fixed32": F.TYPE_FIXED32, "bool": F.TYPE_BOOL, "string": F.TYPE_STRING,
    "bytes": F.TYPE_BYTES, "uint32": F.TYPE_UINT32, "sfixed32": F.TYPE_SFIXED32,
    "sfixed64": F.TYPE_SFIXED64, "sint32": F.TYPE_SINT32, "sint64": F.TYPE_SINT64,
}  # fmt: skip
LABELS = {"OPTIONAL": F.LABEL_OPTIONAL, "REQUIRED": F.LABEL_REQUIRED, "REPEATED": F.LABEL_REPEATED}
MAX_FIELD = 536870911


class _Raise(ErrorListener):
    def syntaxError(
        self, recognizer: Any, symbol: Any, line: int, column: int, msg: str, e: Any
    ) -> None:
        raise InvalidSchemaError(f"Invalid schema: line {line}:{column}: {msg}")


def _quiet(target: Any) -> None:
    target.removeErrorListeners()
    target.addErrorListener(_Raise())


def parse_text(text: str) -> ast.File:
    try:
        return Parser(setup_lexer=_quiet, setup_parser=_quiet).parse(text)
    except InvalidSchemaError:
        raise
    except Exception as e:  # the AST builder trips on some inputs the grammar accepts
        raise InvalidSchemaError(f"Invalid schema: {type(e).__name__}: {e}") from e


def symbols_of(fdp: pb.FileDescriptorProto) -> dict[str, str]:
    """Full name (with a leading dot) -> "message" or "enum", for a file's types."""
    found: dict[str, str] = {}
    prefix = f".{fdp.package}" if fdp.package else ""

    def walk(messages: Any, enums: Any, scope: str) -> None:
        for e in enums:
            found[f"{scope}.{e.name}"] = "enum"
        for m in messages:
            found[f"{scope}.{m.name}"] = "message"
            walk(m.nested_type, m.enum_type, f"{scope}.{m.name}")

    walk(fdp.message_type, fdp.enum_type, prefix)
    return found


class DescriptorBuilder:
    """Builds one file's descriptor from its AST, given the symbols of its imports."""

    def __init__(self, tree: ast.File, imported: dict[str, str]) -> None:
        self.tree = tree
        self.fdp = pb.FileDescriptorProto(name="default.proto")
        self.symbols = dict(imported)
        self.package = ""
        self.custom_options: dict[str, list[tuple[str, Any]]] = {}
        self._pending: list[tuple[FieldProto, str, str]] = []  # (field, written type, scope)

    def build(self) -> pb.FileDescriptorProto:
        tree = self.tree
        if tree.edition is not None:
            raise InvalidSchemaError("Invalid schema: protobuf editions are not supported")
        if tree.syntax not in (None, "proto2", "proto3"):
            raise InvalidSchemaError(f"Invalid schema: unknown syntax {tree.syntax!r}")
        self.proto3 = tree.syntax == "proto3"
        if self.proto3:
            self.fdp.syntax = "proto3"
        for element in tree.file_elements:
            if isinstance(element, ast.Package):
                self.package = self.fdp.package = element.name
        scope = f".{self.package}" if self.package else ""
        self._collect(tree.file_elements, scope)
        for element in tree.file_elements:
            if isinstance(element, ast.Import):
                if element.public:
                    self.fdp.public_dependency.append(len(self.fdp.dependency))
                if element.weak:
                    self.fdp.weak_dependency.append(len(self.fdp.dependency))
                self.fdp.dependency.append(element.name)
            elif isinstance(element, ast.Option):
                self._option(self.fdp.options, element, scope or ".")
            elif isinstance(element, ast.Message):
                self._message(self.fdp.message_type.add(), element, scope)
            elif isinstance(element, ast.Enum):
                self._enum(self.fdp.enum_type.add(), element, scope)
            elif isinstance(element, ast.Extension):
                self._extend(self.fdp.extension, element, scope)
            elif isinstance(element, ast.Service):
                self._service(self.fdp.service.add(), element, scope)
        for field, written, where in self._pending:
            self._resolve_field_type(field, written, where)
        return self.fdp

    def _collect(self, elements: list[Any], scope: str) -> None:
        for element in elements:
            if isinstance(element, ast.Message):
                self.symbols[f"{scope}.{element.name}"] = "message"
                self._collect(element.elements, f"{scope}.{element.name}")
            elif isinstance(element, ast.Enum):
                self.symbols[f"{scope}.{element.name}"] = "enum"
            elif isinstance(element, ast.Group):
                self.symbols[f"{scope}.{element.name}"] = "message"
                self._collect(element.elements, f"{scope}.{element.name}")
            elif isinstance(element, ast.MapField):
                self.symbols[f"{scope}.{_entry_name(element.name)}"] = "message"
            elif isinstance(element, ast.OneOf):
                self._collect(element.elements, scope)

    def resolve(self, name: str, scope: str) -> str:
        found = resolve_in(self.symbols, name, scope)
        if found is None:
            raise InvalidSchemaError(f"Invalid schema: unknown type {name}")
        return found

    def _message(self, msg: pb.DescriptorProto, node: Any, scope: str) -> None:
        msg.name = node.name
        here = f"{scope}.{node.name}"
        synthetic: list[str] = []
        for element in node.elements:
            if isinstance(element, ast.Field):
                field = self._field(msg.field.add(), element, here)
                if self.proto3 and element.cardinality == ast.FieldCardinality.OPTIONAL:
                    field.proto3_optional = True
                    synthetic.append(field.name)
            elif isinstance(element, ast.MapField):
                self._map_field(msg, element, here)
            elif isinstance(element, ast.Group):
                self._group(msg, msg.field, element, here)
            elif isinstance(element, ast.OneOf):
                index = len(msg.oneof_decl)
                msg.oneof_decl.add(name=element.name)
                for member in element.elements:
                    if isinstance(member, ast.Field):
                        self._field(msg.field.add(), member, here).oneof_index = index
                    elif isinstance(member, ast.Group):
                        self._group(msg, msg.field, member, here).oneof_index = index
            elif isinstance(element, ast.Message):
                self._message(msg.nested_type.add(), element, here)
            elif isinstance(element, ast.Enum):
                self._enum(msg.enum_type.add(), element, here)
            elif isinstance(element, ast.Reserved):
                for start, end in _ranges(element.ranges):
                    msg.reserved_range.add(start=start, end=end + 1)
                msg.reserved_name.extend(element.names)
            elif isinstance(element, ast.ExtensionRange):
                for start, end in _ranges(element.ranges):
                    msg.extension_range.add(start=start, end=end + 1)
            elif isinstance(element, ast.Extension):
                self._extend(msg.extension, element, here)
            elif isinstance(element, ast.Option):
                self._option(msg.options, element, here)
        for name in synthetic:  # protoc puts proto3 optional's oneofs after the real ones
            field = next(f for f in msg.field if f.name == name)
            field.oneof_index = len(msg.oneof_decl)
            msg.oneof_decl.add(name=f"_{name}")

    def _field(self, field: FieldProto, node: Any, scope: str) -> FieldProto:
        field.name, field.number = node.name, node.number
        field.label = LABELS[node.cardinality.value] if node.cardinality else F.LABEL_OPTIONAL
        self._pending.append((field, node.type, scope))
        for option in node.options:
            if option.name == "default":
                field.default_value = _default_text(option.value)
            elif option.name == "json_name":
                field.json_name = str(option.value)
            else:
                self._option(field.options, option, f"{scope}.{node.name}")
        return field

    def _resolve_field_type(self, field: FieldProto, written: str, scope: str) -> None:
        if written in SCALARS:
            field.type = SCALARS[written]
            return
        if field.type == F.TYPE_GROUP:
            return
        full = self.resolve(written, scope)
        field.type_name = full
        field.type = F.TYPE_ENUM if self.symbols[full] == "enum" else F.TYPE_MESSAGE

    def _map_field(self, msg: pb.DescriptorProto, node: Any, scope: str) -> None:
        entry = msg.nested_type.add(name=_entry_name(node.name))
        entry.options.map_entry = True
        for number, (name, written) in enumerate(
            (("key", node.key_type), ("value", node.value_type)), 1
        ):
            part = entry.field.add(name=name, number=number, label=F.LABEL_OPTIONAL)
            self._pending.append((part, written, f"{scope}.{entry.name}"))
        field = msg.field.add(name=node.name, number=node.number, label=F.LABEL_REPEATED)
        field.type, field.type_name = F.TYPE_MESSAGE, f"{scope}.{entry.name}"
        for option in node.options:
            self._option(field.options, option, f"{scope}.{node.name}")

    def _group(self, msg: pb.DescriptorProto, fields: Any, node: Any, scope: str) -> FieldProto:
        nested = ast.Message(name=node.name, elements=node.elements)
        self._message(msg.nested_type.add(), nested, scope)
        field = fields.add(name=node.name.lower(), number=node.number, type=F.TYPE_GROUP)
        field.label = LABELS[node.cardinality.value] if node.cardinality else F.LABEL_OPTIONAL
        field.type_name = f"{scope}.{node.name}"
        return field

    def _enum(self, enum: pb.EnumDescriptorProto, node: Any, scope: str) -> None:
        enum.name = node.name
        here = f"{scope}.{node.name}"
        for element in node.elements:
            if isinstance(element, ast.EnumValue):
                value = enum.value.add(name=element.name, number=element.number)
                for option in element.options:
                    self._option(value.options, option, f"{here}.{element.name}")
            elif isinstance(element, ast.EnumReserved):
                for start, end in _ranges(element.ranges):
                    enum.reserved_range.add(start=start, end=end)
                enum.reserved_name.extend(element.names)
            elif isinstance(element, ast.Option):
                self._option(enum.options, element, here)

    def _extend(self, target: Any, node: Any, scope: str) -> None:
        extendee = self.resolve(node.typeName, scope)
        for element in node.elements:
            if isinstance(element, ast.Field):
                self._field(target.add(), element, scope).extendee = extendee

    def _service(self, service: pb.ServiceDescriptorProto, node: Any, scope: str) -> None:
        service.name = node.name
        for element in node.elements:
            if isinstance(element, ast.Method):
                method = service.method.add(name=element.name)
                method.input_type = self.resolve(element.input_type.type, scope)
                method.output_type = self.resolve(element.output_type.type, scope)
                method.client_streaming = element.input_type.stream
                method.server_streaming = element.output_type.stream
            elif isinstance(element, ast.Option):
                self._option(service.options, element, f"{scope}.{node.name}")

    def _option(self, options: Any, node: Any, path: str) -> None:
        """Sets a standard option on the descriptor; custom ones are kept aside as text."""
        field = options.DESCRIPTOR.fields_by_name.get(node.name)
        value = node.value
        if field is not None and not isinstance(value, ast.MessageLiteral):
            try:
                if field.enum_type is not None:
                    name = value.name if isinstance(value, ast.Identifier) else str(value)
                    value = field.enum_type.values_by_name[name].number
                setattr(options, node.name, value)
                return
            except (KeyError, TypeError, ValueError, AttributeError) as e:
                raise InvalidSchemaError(f"Invalid schema: option {node.name}: {e}") from e
        self.custom_options.setdefault(path, []).append((node.name, value))


def resolve_in(symbols: dict[str, str], name: str, scope: str) -> str | None:
    """Protobuf's lookup: from the innermost scope outwards, the first that has ``name``."""
    if name.startswith("."):
        return name if name in symbols else None
    parts = [p for p in scope.split(".") if p]
    while True:
        candidate = "." + ".".join([*parts, name])
        if candidate in symbols:
            return candidate
        if not parts:
            return None
        parts.pop()


def _entry_name(field_name: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in field_name.split("_")) + "Entry"


def _ranges(texts: list[str]) -> list[tuple[int, int]]:
    out = []
    for text in texts:
        parts = [p.strip() for p in text.split("to")]
        try:
            start = int(parts[0], 0)
            end = (
                start if len(parts) == 1 else (MAX_FIELD if parts[1] == "max" else int(parts[1], 0))
            )
        except ValueError as e:
            raise InvalidSchemaError(f"Invalid schema: bad range {text!r}") from e
        out.append((start, end))
    return out


def _default_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, ast.Identifier):
        return value.name
    return str(value)
