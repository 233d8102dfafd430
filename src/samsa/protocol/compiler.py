"""Compile message schemas into straight-line Python encode/decode functions.

Interpreting a schema field by field for every message is slow in Python, so each
(schema, version) pair is turned once into the source of one function that
unpacks runs of fixed-width fields with a single precompiled ``struct`` call,
walks arrays with plain loops, and builds plain dicts.  The generated functions
are cached; the hot path only calls them.

Decoders take ``(buf, pos)`` with ``buf`` a memoryview and return
``(message, pos)``; ``records`` fields come back as zero-copy memoryview slices.

Encoders take ``(msg, chunks)`` and append output pieces to ``chunks``; a
``records`` value that is not bytes-like (for example a file region to be sent
with ``os.sendfile``), or is at least ``SPLICE_MIN`` bytes, is appended as its
own chunk, the object itself: the encoder never copies large record data, so
a producer's batches go out from its buffers.  Such a value must have
``__len__``.  Smaller record sets are copied in, which is cheaper than a
separate piece.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from functools import cache
from typing import Any

from samsa.errors import DecodeError
from samsa.protocol.primitives import read_uvarint, uvarint_bytes
from samsa.protocol.reusable_body import MemoStruct
from samsa.protocol.schema import Field

# Record sets of at least this many bytes become chunks of their own (see above).
SPLICE_MIN = 16 * 1024

Decoder = Callable[[memoryview, int], tuple[dict[str, Any], int]]
Encoder = Callable[[dict[str, Any], list[Any]], None]

_FIXED = {
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


class _Gen:
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


def _active(fields: tuple[Field, ...], version: int) -> tuple[list[Field], list[Field]]:
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


# ----------------------------------------------------------------------------- decode


def _emit_decode_struct(
    g: _Gen, fields: tuple[Field, ...], version: int, flexible: bool, target: str, indent: int
) -> None:
    """Emit code that decodes a struct's fields into the dict named ``target``."""
    regular, tagged = _active(fields, version)
    absent = [f for f in fields if f not in regular and f not in tagged]
    items: list[str] = []
    for f in absent:
        items.append(f"{f.name!r}: {_default_expr(g, f)}")
    for f in tagged:
        items.append(f"{f.name!r}: {_default_expr(g, f)}")
    g.emit(indent, f"{target} = {{{', '.join(items)}}}")

    # Group consecutive fixed-width fields into one struct unpack.
    i = 0
    while i < len(regular):
        f = regular[i]
        if f.type in _FIXED:
            run = [f]
            j = i + 1
            while j < len(regular) and regular[j].type in _FIXED:
                run.append(regular[j])
                j += 1
            fmt = "".join(_FIXED[x.type][0] for x in run)
            size = sum(_FIXED[x.type][1] for x in run)
            s = g.struct_const(fmt)
            names = [g.var("v") for _ in run]
            g.emit(
                indent,
                f"{', '.join(names)}{',' if len(names) == 1 else ''} = {s}.unpack_from(buf, pos)",
            )
            g.emit(indent, f"pos += {size}")
            for name, x in zip(names, run, strict=True):
                g.emit(indent, f"{target}[{x.name!r}] = {name}")
            i = j
            continue
        _emit_decode_value(g, f, version, flexible, f"{target}[{f.name!r}]", indent)
        i += 1

    if flexible:
        _emit_decode_tagged(g, tagged, version, target, indent)


def _emit_decode_tagged(
    g: _Gen, tagged: list[Field], version: int, target: str, indent: int
) -> None:
    n = g.var("ntag")
    k = g.var("k")
    tag = g.var("tag")
    size = g.var("tsize")
    end = g.var("tend")
    _emit_uvarint(g, n, indent)
    g.emit(indent, f"for {k} in range({n}):")
    g.emit(indent + 1, f"{tag}, pos = _uvarint(buf, pos)")
    g.emit(indent + 1, f"{size}, pos = _uvarint(buf, pos)")
    g.emit(indent + 1, f"{end} = pos + {size}")
    g.emit(indent + 1, f"if {end} > _len(buf): raise DecodeError('truncated tagged field')")
    first = True
    for f in tagged:
        kw = "if" if first else "elif"
        first = False
        g.emit(indent + 1, f"{kw} {tag} == {f.tag}:")
        _emit_decode_value(g, f, version, True, f"{target}[{f.name!r}]", indent + 2)
        g.emit(indent + 2, f"if pos != {end}: raise DecodeError('tagged field size mismatch')")
    if tagged:
        g.emit(indent + 1, "else:")
        g.emit(indent + 2, f"pos = {end}")
    else:
        g.emit(indent + 1, f"pos = {end}")


def _emit_uvarint(g: _Gen, var: str, indent: int) -> None:
    """Read an unsigned varint into ``var``, inline when it is one byte.

    Lengths and tag counts almost always fit in one byte; a function call per
    varint was the largest single cost of decoding small flexible requests.
    """
    g.emit(indent, f"{var} = buf[pos]")
    g.emit(indent, f"if {var} < 128: pos += 1")
    g.emit(indent, f"else: {var}, pos = _uvarint(buf, pos)")


def _emit_read_length(g: _Gen, flexible: bool, wide: bool, var: str, indent: int) -> None:
    """Read a length/count into ``var``; -1 means null in both encodings."""
    if flexible:
        _emit_uvarint(g, var, indent)
        g.emit(indent, f"{var} -= 1")
    elif wide:
        s = g.struct_const("i")
        g.emit(indent, f"{var}, = {s}.unpack_from(buf, pos)")
        g.emit(indent, "pos += 4")
    else:
        s = g.struct_const("h")
        g.emit(indent, f"{var}, = {s}.unpack_from(buf, pos)")
        g.emit(indent, "pos += 2")


def _emit_decode_value(
    g: _Gen, f: Field, version: int, flexible: bool, dest: str, indent: int
) -> None:
    t = f.type
    nullable = version in f.nullable
    if t in _FIXED:
        fmt, size = _FIXED[t]
        s = g.struct_const(fmt)
        g.emit(indent, f"{dest}, = {s}.unpack_from(buf, pos)")
        g.emit(indent, f"pos += {size}")
        return
    if t == "struct":
        sub = g.var("st")
        if nullable:
            # Kafka marks a nullable struct with an int8: -1 null, 1 present.
            m = g.var("m")
            s = g.struct_const("b")
            g.emit(indent, f"{m}, = {s}.unpack_from(buf, pos)")
            g.emit(indent, "pos += 1")
            g.emit(indent, f"if {m} < 0:")
            g.emit(indent + 1, f"{dest} = None")
            g.emit(indent, "else:")
            _emit_decode_struct(g, f.fields, version, flexible, sub, indent + 1)
            g.emit(indent + 1, f"{dest} = {sub}")
            return
        _emit_decode_struct(g, f.fields, version, flexible, sub, indent)
        g.emit(indent, f"{dest} = {sub}")
        return
    n = g.var("n")
    if t in ("string", "bytes", "records"):
        _emit_read_length(g, flexible, t != "string", n, indent)
        g.emit(indent, f"if {n} < 0:")
        if nullable or t == "records":
            g.emit(indent + 1, f"{dest} = None")
        else:
            g.emit(indent + 1, f"raise DecodeError('null for non-nullable field {f.name}')")
        g.emit(indent, "else:")
        g.emit(indent + 1, f"if pos + {n} > _len(buf): raise DecodeError('truncated {f.name}')")
        if t == "string":
            g.emit(indent + 1, f"{dest} = _str(buf[pos:pos + {n}], 'utf-8')")
        elif t == "bytes":
            g.emit(indent + 1, f"{dest} = _bytes(buf[pos:pos + {n}])")
        else:
            g.emit(indent + 1, f"{dest} = buf[pos:pos + {n}]")
        g.emit(indent + 1, f"pos += {n}")
        return
    if f.is_array:
        _emit_read_length(g, flexible, True, n, indent)
        lst = g.var("lst")
        g.emit(indent, f"if {n} < 0:")
        if nullable:
            g.emit(indent + 1, f"{dest} = None")
        else:
            g.emit(indent + 1, f"raise DecodeError('null for non-nullable array {f.name}')")
        g.emit(indent, "else:")
        g.emit(
            indent + 1, f"if {n} > _len(buf) - pos: raise DecodeError('array {f.name} too long')"
        )
        g.emit(indent + 1, f"{lst} = []")
        g.emit(indent + 1, f"{dest} = {lst}")
        idx = g.var("i")
        g.emit(indent + 1, f"for {idx} in range({n}):")
        et = f.element_type
        if et == "struct":
            el = g.var("el")
            _emit_decode_struct(g, f.fields, version, flexible, el, indent + 2)
            g.emit(indent + 2, f"{lst}.append({el})")
        else:
            el_field = Field(
                name=f.name,
                type=et,
                versions=f.versions,
                nullable=f.nullable if et in ("string", "bytes") else f.nullable.__class__(1, 0),
                tag=None,
                tagged=f.tagged.__class__(1, 0),
                default=None,
                fields=(),
            )
            el = g.var("el")
            _emit_decode_value(g, el_field, version, flexible, el, indent + 2)
            g.emit(indent + 2, f"{lst}.append({el})")
        return
    raise AssertionError(f"unhandled type {t}")


def _default_expr(g: _Gen, f: Field) -> str:
    value = f.default_value()
    if isinstance(value, list):
        return "[]"
    if value is None or isinstance(value, (bool, int, float, str, bytes)):
        return repr(value)
    return g.const(value)


# ----------------------------------------------------------------------------- encode


def _emit_encode_struct(
    g: _Gen, fields: tuple[Field, ...], version: int, flexible: bool, src: str, indent: int
) -> None:
    regular, tagged = _active(fields, version)
    i = 0
    while i < len(regular):
        f = regular[i]
        if f.type in _FIXED:
            run = [f]
            j = i + 1
            while j < len(regular) and regular[j].type in _FIXED:
                run.append(regular[j])
                j += 1
            fmt = "".join(_FIXED[x.type][0] for x in run)
            s = g.struct_const(fmt)
            args = ", ".join(_get_expr(g, src, x) for x in run)
            g.emit(indent, f"b += {s}.pack({args})")
            i = j
            continue
        val = g.var("x")
        g.emit(indent, f"{val} = {_get_expr(g, src, f)}")
        _emit_encode_value(g, f, version, flexible, val, indent)
        i += 1
    if flexible:
        _emit_encode_tagged(g, tagged, version, src, indent)


def _get_expr(g: _Gen, src: str, f: Field) -> str:
    return f"{src}.get({f.name!r}, {_default_expr(g, f)})"


def _emit_encode_tagged(g: _Gen, tagged: list[Field], version: int, src: str, indent: int) -> None:
    if not tagged:
        g.emit(indent, "b += b'\\x00'")
        return
    parts = g.var("tparts")
    g.emit(indent, f"{parts} = []")
    for f in tagged:
        val = g.var("x")
        default = _default_expr(g, f)
        g.emit(indent, f"{val} = {src}.get({f.name!r}, {default})")
        g.emit(indent, f"if {val} is not None and {val} != {default}:")
        saved = g.var("saved")
        g.emit(indent + 1, f"{saved} = b")
        g.emit(indent + 1, "b = bytearray()")
        _emit_encode_value(g, f, version, True, val, indent + 1, allow_splice=False)
        g.emit(indent + 1, f"{parts}.append(_uvb({f.tag}) + _uvb(_len(b)) + b)")
        g.emit(indent + 1, f"b = {saved}")
    g.emit(indent, f"b += _uvb(_len({parts}))")
    g.emit(indent, f"for _p in {parts}: b += _p")


def _emit_write_length(g: _Gen, flexible: bool, wide: bool, expr: str, indent: int) -> None:
    if flexible:
        g.emit(indent, f"b += _uvb({expr} + 1)")
    else:
        s = g.struct_const("i" if wide else "h")
        g.emit(indent, f"b += {s}.pack({expr})")


def _emit_encode_value(
    g: _Gen,
    f: Field,
    version: int,
    flexible: bool,
    val: str,
    indent: int,
    allow_splice: bool = True,
) -> None:
    t = f.type
    if t in _FIXED:
        s = g.struct_const(_FIXED[t][0])
        g.emit(indent, f"b += {s}.pack({val})")
        return
    if t == "struct":
        sub = g.var("sv")
        if version in f.nullable:
            g.emit(indent, f"if {val} is None:")
            g.emit(indent + 1, "b += b'\\xff'")
            g.emit(indent, "else:")
            g.emit(indent + 1, "b += b'\\x01'")
            g.emit(indent + 1, f"{sub} = {val}")
            _emit_encode_struct(g, f.fields, version, flexible, sub, indent + 1)
            return
        g.emit(indent, f"{sub} = {val} if {val} is not None else {{}}")
        _emit_encode_struct(g, f.fields, version, flexible, sub, indent)
        return
    if t in ("string", "bytes", "records"):
        g.emit(indent, f"if {val} is None:")
        _emit_write_length(g, flexible, t != "string", "-1", indent + 1)
        g.emit(indent, "else:")
        if t == "string":
            enc = g.var("e")
            g.emit(indent + 1, f"{enc} = {val}.encode('utf-8')")
            _emit_write_length(g, flexible, False, f"_len({enc})", indent + 1)
            g.emit(indent + 1, f"b += {enc}")
        elif t == "records" and allow_splice:
            _emit_write_length(g, flexible, True, f"_len({val})", indent + 1)
            g.emit(
                indent + 1,
                f"if isinstance({val}, (bytes, bytearray, memoryview)) "
                f"and _len({val}) < {SPLICE_MIN}:",
            )
            g.emit(indent + 2, f"b += {val}")
            g.emit(indent + 1, "else:")
            g.emit(indent + 2, "chunks.append(b)")
            g.emit(indent + 2, f"chunks.append({val})")
            g.emit(indent + 2, "b = bytearray()")
        else:
            _emit_write_length(g, flexible, True, f"_len({val})", indent + 1)
            g.emit(indent + 1, f"b += {val}")
        return
    if f.is_array:
        g.emit(indent, f"if {val} is None:")
        _emit_write_length(g, flexible, True, "-1", indent + 1)
        g.emit(indent, "else:")
        _emit_write_length(g, flexible, True, f"_len({val})", indent + 1)
        el = g.var("el")
        g.emit(indent + 1, f"for {el} in {val}:")
        et = f.element_type
        if et == "struct" and not _holds_records(f.fields):
            _emit_encode_memo_struct(g, f.fields, version, flexible, el, indent + 2)
        elif et == "struct":
            _emit_encode_struct(g, f.fields, version, flexible, el, indent + 2)
        else:
            el_field = Field(
                name=f.name,
                type=et,
                versions=f.versions,
                nullable=f.nullable,
                tag=None,
                tagged=f.tagged.__class__(1, 0),
                default=None,
                fields=(),
            )
            _emit_encode_value(g, el_field, version, flexible, el, indent + 2, allow_splice)
        return
    raise AssertionError(f"unhandled type {t}")


def _holds_records(fields: tuple[Field, ...]) -> bool:
    return any(f.type == "records" or _holds_records(f.fields) for f in fields)


def _emit_encode_memo_struct(
    g: _Gen, fields: tuple[Field, ...], version: int, flexible: bool, el: str, indent: int
) -> None:
    """A struct array element; a ``MemoStruct`` one is written from its memo
    when this encoder wrote it before, and remembered when not."""
    memo, hit, start = g.var("memo"), g.var("hit"), g.var("start")
    memo_class, key = g.const(MemoStruct), g.const(object())
    g.emit(indent, f"{memo} = {el}.memo if {el}.__class__ is {memo_class} else None")
    g.emit(indent, f"if {memo} is not None:")
    g.emit(indent + 1, f"{hit} = {memo}.get({key})")
    g.emit(indent + 1, f"if {hit} is not None:")
    g.emit(indent + 2, f"b += {hit}")
    g.emit(indent + 2, "continue")
    g.emit(indent + 1, f"{start} = _len(b)")
    _emit_encode_struct(g, fields, version, flexible, el, indent)
    g.emit(indent, f"if {memo} is not None:")
    g.emit(indent + 1, f"{memo}[{key}] = _bytes(b[{start}:])")


# ----------------------------------------------------------------------------- entry points


def _decoder_gen(fields: tuple[Field, ...], version: int, flexible: bool) -> _Gen:
    g = _Gen()
    g.emit(0, "def _decode(buf, pos):")
    g.emit(1, "try:")
    _emit_decode_struct(g, fields, version, flexible, "msg", 2)
    g.emit(1, "except DecodeError:")
    g.emit(2, "raise")
    g.emit(1, "except Exception as exc:")
    g.emit(2, "raise DecodeError(f'malformed message: {exc}') from None")
    g.emit(1, "if pos > _len(buf): raise DecodeError('message is truncated')")
    g.emit(1, "return msg, pos")
    return g


def _encoder_gen(fields: tuple[Field, ...], version: int, flexible: bool) -> _Gen:
    g = _Gen()
    g.emit(0, "def _encode(msg, chunks):")
    g.emit(1, "b = bytearray()")
    _emit_encode_struct(g, fields, version, flexible, "msg", 1)
    g.emit(1, "chunks.append(b)")
    return g


@cache
def decoder_for(fields: tuple[Field, ...], version: int, flexible: bool) -> Decoder:
    """Return the compiled decoder of ``fields`` at ``version``."""
    fn: Decoder = _decoder_gen(fields, version, flexible).compile("_decode")
    return fn


@cache
def encoder_for(fields: tuple[Field, ...], version: int, flexible: bool) -> Encoder:
    """Return the compiled encoder of ``fields`` at ``version``."""
    fn: Encoder = _encoder_gen(fields, version, flexible).compile("_encode")
    return fn


def generated_source(fields: tuple[Field, ...], version: int, flexible: bool, encode: bool) -> str:
    """The exact source ``encoder_for``/``decoder_for`` compile, for debugging."""
    gen = _encoder_gen if encode else _decoder_gen
    return "\n".join(gen(fields, version, flexible).lines)
