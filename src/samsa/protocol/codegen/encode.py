"""Generating a message encoder's source (see compiler.py for the contract).

The encoder packs runs of fixed-width fields with one precompiled ``struct``,
writes large or non-bytes ``records`` values as chunks of their own (never
copied, see ``SPLICE_MIN``), and writes a ``MemoStruct`` array element from
its memo when it wrote that element before.
"""

from __future__ import annotations

from samsa.protocol.codegen.generator import FIXED, CodeGen, active_fields, default_expr, fixed_runs
from samsa.protocol.reusable_body import MemoStruct
from samsa.protocol.schema import Field

# Record sets of at least this many bytes become chunks of their own (see compiler.py).
SPLICE_MIN = 16 * 1024


def _emit_encode_struct(
    g: CodeGen, fields: tuple[Field, ...], version: int, flexible: bool, src: str, indent: int
) -> None:
    regular, tagged = active_fields(fields, version)
    for item in fixed_runs(regular):
        if isinstance(item, list):
            fmt = "".join(FIXED[x.type][0] for x in item)
            s = g.struct_const(fmt)
            args = ", ".join(_get_expr(g, src, x) for x in item)
            g.emit(indent, f"b += {s}.pack({args})")
            continue
        val = g.var("x")
        g.emit(indent, f"{val} = {_get_expr(g, src, item)}")
        _emit_encode_value(g, item, version, flexible, val, indent)
    if flexible:
        _emit_encode_tagged(g, tagged, version, src, indent)


def _get_expr(g: CodeGen, src: str, f: Field) -> str:
    return f"{src}.get({f.name!r}, {default_expr(g, f)})"


def _emit_encode_tagged(
    g: CodeGen, tagged: list[Field], version: int, src: str, indent: int
) -> None:
    if not tagged:
        g.emit(indent, "b += b'\\x00'")
        return
    parts = g.var("tparts")
    g.emit(indent, f"{parts} = []")
    for f in tagged:
        val = g.var("x")
        default = default_expr(g, f)
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


def _emit_write_length(g: CodeGen, flexible: bool, wide: bool, expr: str, indent: int) -> None:
    if flexible:
        g.emit(indent, f"b += _uvb({expr} + 1)")
    else:
        s = g.struct_const("i" if wide else "h")
        g.emit(indent, f"b += {s}.pack({expr})")


def _emit_encode_value(
    g: CodeGen,
    f: Field,
    version: int,
    flexible: bool,
    val: str,
    indent: int,
    allow_splice: bool = True,
) -> None:
    t = f.type
    if t in FIXED:
        s = g.struct_const(FIXED[t][0])
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
    g: CodeGen, fields: tuple[Field, ...], version: int, flexible: bool, el: str, indent: int
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


def encoder_gen(fields: tuple[Field, ...], version: int, flexible: bool) -> CodeGen:
    g = CodeGen()
    g.emit(0, "def _encode(msg, chunks):")
    g.emit(1, "b = bytearray()")
    _emit_encode_struct(g, fields, version, flexible, "msg", 1)
    g.emit(1, "chunks.append(b)")
    return g
