"""Protobuf schemas: ``.proto`` text or a base64 ``FileDescriptorProto``, as Confluent takes.

confluent-kafka's ProtobufSerializer registers the base64 of the message's
``FileDescriptorProto``, and its deserializer asks for ``format=serialized`` to get
one back; people register ``.proto`` text by hand.  Both become one descriptor
here, checked by protobuf's own ``DescriptorPool``; the canonical text is printed
from it.  References are imports: a reference's name is the path the schema
imports (``import "other.proto";``), and the well-known ``google/protobuf/*.proto``
files need no reference.
"""

from __future__ import annotations

import base64
import binascii
import functools
import importlib
from collections.abc import Sequence
from typing import Any

from google.protobuf import descriptor_pb2 as pb
from google.protobuf import descriptor_pool
from google.protobuf.message import DecodeError

from samsa.registry.formats.base import (
    InvalidSchemaError,
    ParsedSchema,
    ResolvedReference,
    SchemaFormat,
)
from samsa.registry.formats.protobuf_parse import DescriptorBuilder, parse_text, symbols_of
from samsa.registry.formats.protobuf_text import ProtoPrinter

_WELL_KNOWN_MODULES = (
    "any", "api", "descriptor", "duration", "empty", "field_mask",
    "source_context", "struct", "timestamp", "type", "wrappers",
)  # fmt: skip


@functools.cache
def well_known() -> dict[str, pb.FileDescriptorProto]:
    found = {}
    for name in _WELL_KNOWN_MODULES:
        module = importlib.import_module(f"google.protobuf.{name}_pb2")
        fdp = pb.FileDescriptorProto()
        fdp.ParseFromString(module.DESCRIPTOR.serialized_pb)
        found[fdp.name] = fdp
    return found


class ProtobufSchema(ParsedSchema):
    schema_type = "PROTOBUF"

    def __init__(
        self,
        fdp: pb.FileDescriptorProto,
        deps: dict[str, pb.FileDescriptorProto],
        custom_options: dict[str, list[tuple[str, Any]]],
        normalize: bool = False,
    ) -> None:
        self.fdp = fdp
        self.deps = deps  # every file this one needs, transitively, by import path
        self.custom_options = custom_options
        self.symbols = symbols_of(fdp)
        for dep in deps.values():
            self.symbols.update(symbols_of(dep))
        self._normalize = normalize
        self._text = ProtoPrinter(fdp, self.symbols, custom_options, sort_fields=normalize).text()

    def canonical(self) -> str:
        return self._text

    def normalized(self) -> ProtobufSchema:
        return ProtobufSchema(self.fdp, self.deps, self.custom_options, normalize=True)

    def record_names(self) -> tuple[str, ...]:
        """Every message's full name, nested ones too: which of them a record holds
        is in its body (the message indexes), which the broker does not read."""
        names: list[str] = []

        def add(messages: Any, prefix: str) -> None:
            for message in messages:
                name = f"{prefix}.{message.name}" if prefix else message.name
                names.append(name)
                add(message.nested_type, name)

        add(self.fdp.message_type, self.fdp.package)
        return tuple(names)

    def serialized(self) -> str:
        return base64.standard_b64encode(self.fdp.SerializeToString()).decode("ascii")

    def read_errors(self, writer: ParsedSchema) -> list[str]:
        from samsa.registry.formats.protobuf_compat import read_errors

        if not isinstance(writer, ProtobufSchema):
            return [f"Incompatible because of different schema type: {writer.schema_type}"]
        return read_errors(self, writer)


class _Protobuf(SchemaFormat):
    schema_type = "PROTOBUF"

    def parse(
        self, text: str, references: Sequence[ResolvedReference], *, is_new: bool
    ) -> ProtobufSchema:
        deps: dict[str, pb.FileDescriptorProto] = {}
        for ref in references:
            if not isinstance(ref.schema, ProtobufSchema):
                raise InvalidSchemaError(f"Reference {ref.name} is not a Protobuf schema")
            deps.update(ref.schema.deps)
            dep = pb.FileDescriptorProto()
            dep.CopyFrom(ref.schema.fdp)
            dep.name = ref.name
            deps[ref.name] = dep
        custom: dict[str, list[tuple[str, Any]]] = {}
        try:
            tree = parse_text(text)
        except InvalidSchemaError as text_error:
            fdp = _from_base64(text)
            if fdp is None:
                raise text_error from None
        else:
            builder = DescriptorBuilder(tree, _imported_symbols(tree_imports(tree), deps))
            fdp = builder.build()
            custom = builder.custom_options
        for name in fdp.dependency:
            if name not in deps and name not in well_known():
                raise InvalidSchemaError(f"Invalid schema: import {name!r} has no reference")
            if name not in deps:
                deps[name] = well_known()[name]
        _validate(fdp, deps)
        return ProtobufSchema(fdp, deps, custom)


PROTOBUF = _Protobuf()


def tree_imports(tree: Any) -> list[str]:
    from proto_schema_parser import ast

    return [e.name for e in tree.file_elements if isinstance(e, ast.Import)]


def _imported_symbols(
    imports: list[str], deps: dict[str, pb.FileDescriptorProto]
) -> dict[str, str]:
    symbols: dict[str, str] = {}
    for name in imports:
        dep = deps.get(name) or well_known().get(name)
        if dep is None:
            raise InvalidSchemaError(f"Invalid schema: import {name!r} has no reference")
        symbols.update(symbols_of(dep))
        # public imports of an import are visible too
        for index in dep.public_dependency:
            public = deps.get(dep.dependency[index]) or well_known().get(dep.dependency[index])
            if public is not None:
                symbols.update(symbols_of(public))
    return symbols


def _from_base64(text: str) -> pb.FileDescriptorProto | None:
    try:
        raw = base64.b64decode(text.strip(), validate=True)
        fdp = pb.FileDescriptorProto()
        fdp.ParseFromString(raw)
    except (binascii.Error, ValueError, DecodeError):
        return None
    return fdp if fdp.message_type or fdp.enum_type or fdp.package else None


def _validate(fdp: pb.FileDescriptorProto, deps: dict[str, pb.FileDescriptorProto]) -> None:
    """protobuf's pool checks what protoc checks: types, numbers, names, enum values."""
    pool = descriptor_pool.DescriptorPool()
    added: set[str] = set()

    def add(file: pb.FileDescriptorProto, trail: tuple[str, ...]) -> None:
        if file.name in added:
            return
        if file.name in trail:
            raise InvalidSchemaError(f"Invalid schema: import cycle through {file.name!r}")
        for name in file.dependency:
            if name in deps:
                add(deps[name], (*trail, file.name))
        pool.Add(file)
        added.add(file.name)

    try:
        for dep in deps.values():
            add(dep, ())
        main = pb.FileDescriptorProto()
        main.CopyFrom(fdp)
        while main.name in added:
            main.name = "_" + main.name
        add(main, ())
    except InvalidSchemaError:
        raise
    except Exception as e:  # the pool raises TypeError / ValueError with protoc's message
        raise InvalidSchemaError(f"Invalid schema: {e}") from e
