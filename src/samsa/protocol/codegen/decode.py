"""Generating a message decoder's source (see compiler.py for the contract).

The decoder reads runs of fixed-width fields with one precompiled ``struct``
unpack, reads one-byte varints inline, checks every length against the
buffer before slicing, and leaves ``records`` as a zero-copy memoryview.
"""

from __future__ import annotations

from samsa.protocol.codegen.generator import FIXED, CodeGen, active_fields, default_expr, fixed_runs
from samsa.protocol.schema import Field


def _emit_decode_struct(
    g: CodeGen, fields: tuple[Field, ...], version: int, flexible: bool, target: str, indent: int
) -> None:
    """Emit code that decodes a struct's fields into the dict named ``target``."""
    regular, tagged = active_fields(fields, version)
    absent = [f for f in fields if f not in regular and f not in tagged]
    items: list[str] = []
    for f in absent:
        items.append(f"{f.name!r}: {default_expr(g, f)}")
    for f in tagged:
        items.append(f"{f.name!r}: {default_expr(g, f)}")
    g.emit(indent, f"{target} = {{{', '.join(items)}}}")

    # Each run of consecutive fixed-width fields is one struct unpack.
    for item in fixed_runs(regular):
        if isinstance(item, list):
            fmt = "".join(FIXED[x.type][0] for x in item)
            size = sum(FIXED[x.type][1] for x in item)
            s = g.struct_const(fmt)
            names = [g.var("v") for _ in item]
            g.emit(
                indent,
                f"{', '.join(names)}{',' if len(names) == 1 else ''} = {s}.unpack_from(buf, pos)",
            )
            g.emit(indent, f"pos += {size}")
            for name, x in zip(names, item, strict=True):
                g.emit(indent, f"{target}[{x.name!r}] = {name}")
            continue
        _emit_decode_value(g, item, version, flexible, f"{target}[{item.name!r}]", indent)

    if flexible:
        _emit_decode_tagged(g, tagged, version, target, indent)


def _emit_decode_tagged(
    g: CodeGen, tagged: list[Field], version: int, target: str, indent: int
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


def _emit_uvarint(g: CodeGen, var: str, indent: int) -> None:
    """Read an unsigned varint into ``var``, inline when it is one byte.

    Lengths and tag counts almost always fit in one byte; a function call per
    varint was the largest single cost of decoding small flexible requests.
    """
    g.emit(indent, f"{var} = buf[pos]")
    g.emit(indent, f"if {var} < 128: pos += 1")
    g.emit(indent, f"else: {var}, pos = _uvarint(buf, pos)")


def _emit_read_length(g: CodeGen, flexible: bool, wide: bool, var: str, indent: int) -> None:
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
    g: CodeGen, f: Field, version: int, flexible: bool, dest: str, indent: int
) -> None:
    t = f.type
    nullable = version in f.nullable
    if t in FIXED:
        fmt, size = FIXED[t]
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


def decoder_gen(fields: tuple[Field, ...], version: int, flexible: bool) -> CodeGen:
    g = CodeGen()
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
