"""The source builder the codec compiler writes with (see compiler.py).

What decoding and encoding generation share: ``CodeGen`` accumulates the
lines of one generated function and the constants they name (precompiled
``struct`` formats, helpers, defaults), ``FIXED`` maps the fixed-width types
to their ``struct`` codes, and ``active_fields`` picks the fields a version
has.  Kept apart so codegen_decode and codegen_encode each read as the
generator of one direction only.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

from samsa.errors import DecodeError
from samsa.protocol.primitives import read_uvarint, uvarint_bytes
from samsa.protocol.schema import Field

FIXED = {
    "int8": ("b", 1),
    "int16": ("h", 2),
    "int32": ("i", 4),
    "int64": ("q", 8),
    "uint16": ("H", 2),
    "uint32": ("I", 4),
    "float64": ("d", 8),
    "bool": ("?", 1),
    "uuid": ("16s", 16),
}


class CodeGen:
    """Accumulates generated source lines and the constants they reference."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.consts: dict[str, Any] = {
            "_uvarint": read_uvarint,
            "_uvb": uvarint_bytes,
            "DecodeError": DecodeError,
            "_str": str,
            "_bytes": bytes,
            "_len": len,
        }
        self.counter = 0

    def var(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def struct_const(self, fmt: str) -> str:
        name = "_S_" + fmt.replace("?", "B_").replace("16s", "U")
        self.consts.setdefault(name, struct.Struct(">" + fmt))
        return name

    def const(self, value: Any) -> str:
        name = self.var("_c")
        self.consts[name] = value
        return name

    def emit(self, indent: int, line: str) -> None:
        self.lines.append("    " * indent + line)

    def compile(self, name: str) -> Any:
        src = "\n".join(self.lines)
        namespace = dict(self.consts)
        exec(compile(src, f"<samsa codec {name}>", "exec"), namespace)
        return namespace[name]


def active_fields(fields: tuple[Field, ...], version: int) -> tuple[list[Field], list[Field]]:
    """Split the fields present at ``version`` into (regular, tagged)."""
    regular = []
    tagged = []
    for f in fields:
        if version in f.tagged:
            tagged.append(f)
        elif version in f.versions:
            regular.append(f)
    tagged.sort(key=lambda f: f.tag or 0)
    return regular, tagged


def fixed_runs(fields: list[Field]) -> Iterator[Field | list[Field]]:
    """``fields`` in order, each run of consecutive fixed-width ones as one list:
    a run is read or written with a single precompiled ``struct`` call."""
    i = 0
    while i < len(fields):
        if fields[i].type not in FIXED:
            yield fields[i]
            i += 1
            continue
        j = i + 1
        while j < len(fields) and fields[j].type in FIXED:
            j += 1
        yield fields[i:j]
        i = j


def default_expr(g: CodeGen, f: Field) -> str:
    value = f.default_value()
    if isinstance(value, list):
        return "[]"
    if value is None or isinstance(value, (bool, int, float, str, bytes)):
        return repr(value)
    return g.const(value)
