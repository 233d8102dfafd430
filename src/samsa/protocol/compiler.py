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

The generated source is written by codegen_decode and codegen_encode, with
the builder and field helpers they share in codegen; this module compiles and
caches it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from samsa.protocol.codegen.decode import decoder_gen
from samsa.protocol.codegen.encode import SPLICE_MIN, encoder_gen
from samsa.protocol.schema import Field

__all__ = [
    "SPLICE_MIN",
    "Decoder",
    "Encoder",
    "decoder_for",
    "encoder_for",
    "generated_source",
]

Decoder = Callable[[memoryview, int], tuple[dict[str, Any], int]]
Encoder = Callable[[dict[str, Any], list[Any]], None]


@cache
def decoder_for(fields: tuple[Field, ...], version: int, flexible: bool) -> Decoder:
    """Return the compiled decoder of ``fields`` at ``version``."""
    fn: Decoder = decoder_gen(fields, version, flexible).compile("_decode")
    return fn


@cache
def encoder_for(fields: tuple[Field, ...], version: int, flexible: bool) -> Encoder:
    """Return the compiled encoder of ``fields`` at ``version``."""
    fn: Encoder = encoder_gen(fields, version, flexible).compile("_encode")
    return fn


def generated_source(fields: tuple[Field, ...], version: int, flexible: bool, encode: bool) -> str:
    """The exact source ``encoder_for``/``decoder_for`` compile, for debugging."""
    gen = encoder_gen if encode else decoder_gen
    return "\n".join(gen(fields, version, flexible).lines)
