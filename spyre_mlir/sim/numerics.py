"""Device number formats: DL16 (the hardware's) and IEEE fp16 (for comparison).

DL16 — IBM's DLFloat16, "SEN169": 1 sign, 6 exponent, 9 fraction bits, bias 31.

    bits            value
    0x0000 / 0x8000 +0 / -0
    0x7FFF / 0xFFFF NaN (the single "not a number / infinity" pattern, NINF)
    otherwise       (-1)^s * 2^(e - 31) * (1 + f / 512)        e in 0..63, f in 0..511
    largest         0x7FFE = (2 - 2^-8) * 2^32  ~ 8.573e9
    smallest        0x0001 = (1 + 2^-9) * 2^-31 ~ 4.66e-10     (no subnormals)

The bit-level decode follows IBM's published NNP1 conversion (onnx-mlir,
src/Accelerators/NNPA/Support/Stickify/DLF16Conversion.hpp). Encoding (fp32 -> DL16), as
the device model applies it on every store to LX or DDR:

    NaN                      -> NaN pattern
    round to nearest, ties to even, at 9 fraction bits
    |rounded| > largest      -> +-largest            (saturate; +-inf too)
    exponent below 2^-31     -> +-0                  (flush; fp32 subnormals too)

IBM's NNP1 software conversion differs in two corner cases, recorded in docs/numerics.md:
it rounds ties away from zero and maps overflow to the NaN pattern. The device model rounds
to nearest even and saturates (the format has no infinity; a saturated value stays finite
and ordered where a NaN would spread through every later sum).

Unit roundoff (the relative error bound of one store in the normal range) is 2^-10 for DL16
and 2^-11 for IEEE fp16; tests derive their tolerances from `Numerics.unit_roundoff`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

DL16_BIAS = 31
DL16_NAN = 0x7FFF
DL16_MAX_BITS = 0x7FFE
DL16_MAX = float(np.float32((1 + 510 / 512) * 2.0**32))
DL16_MIN = float(np.float32((1 + 1 / 512) * 2.0**-31))


def dl16_encode_reference(x: np.ndarray) -> np.ndarray:
    """fp32 values -> DL16 bit patterns (uint16): the definition, field by field
    (`dl16_encode` computes the same bits faster; test_numerics checks that they agree)."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.int64)
    sign = (bits >> 16) & 0x8000
    mag = bits & 0x7FFFFFFF
    is_nan = mag > 0x7F800000
    lsb = (mag >> 14) & 1
    rounded = (mag + 0x1FFF + lsb) >> 14  # fp32 exponent (8 bits) : fraction (9 bits), RNE
    exp = (rounded >> 9) - 127 + DL16_BIAS
    frac = rounded & 0x1FF
    out = (exp << 9) | frac
    out = np.where((exp > 63) | ((exp == 63) & (frac == 0x1FF)), DL16_MAX_BITS, out)
    out = np.where(exp < 0, 0, out)
    out = np.where(is_nan, DL16_NAN, out)
    return (out | sign).astype(np.uint16).reshape(np.shape(x))  # ascontiguousarray made 0-d 1-d


def dl16_decode_reference(b: np.ndarray) -> np.ndarray:
    """DL16 bit patterns (uint16) -> fp32 values: the definition (`dl16_decode` looks the
    same values up in a table of all 65,536 patterns)."""
    b = np.asarray(b, dtype=np.uint16).astype(np.uint32)
    sign = (b & 0x8000) << 16
    mag = b & 0x7FFF
    exp = mag >> 9
    frac = mag & 0x1FF
    bits = sign | ((exp + (127 - DL16_BIAS)) << 23) | (frac << 14)
    bits = np.where(mag == 0, sign, bits)
    bits = np.where(mag == DL16_NAN, np.uint32(0x7FC00000), bits)
    return bits.astype(np.uint32).view(np.float32)


_ENCODE_CHUNK = 1 << 16
"""Elements per step of `dl16_encode`: its temporaries stay in cache."""


@functools.cache
def _dl16_of_rounded() -> np.ndarray:
    """DL16 bits of the fp32 values whose low 14 bits are zero, by their top 18 bits (sign,
    exponent, 9 fraction bits): the exponent's range (flush, saturate) as a table of 512 KiB,
    built at the first encode (~10 ms), not at import."""
    return dl16_encode_reference((np.arange(1 << 18, dtype=np.uint32) << 14).view(np.float32))


def _rounded(b: np.ndarray) -> np.ndarray:
    """(b + 0x1FFF + ((b >> 14) & 1)) >> 14 of fp32 bits b: `dl16_encode`'s rounded patterns."""
    r = b >> 14
    r &= 1
    r += b
    r += 0x1FFF
    r >>= 14
    return r


def dl16_encode(x: np.ndarray) -> np.ndarray:
    """fp32 values -> DL16 bit patterns (uint16), the bits of `dl16_encode_reference`.

    In 32-bit unsigned arithmetic on the bits b: round to nearest even at 9 fraction bits
    (r = sign:exponent:fraction of the rounded value, 18 bits), then the exponent's range
    by table:

        r = (b + 0x1FFF + ((b >> 14) & 1)) >> 14
        out = _dl16_of_rounded()[r]

    No finite value or infinity carries past bit 31 (the largest, -inf, is 0xFF800000), so
    r keeps its sign; a NaN's rounding may carry into the exponent (to an infinity) or past
    the sign, so NaNs, found by one test of the whole array, get the NaN pattern apart."""
    bits = np.ascontiguousarray(x, dtype=np.float32).reshape(-1).view(np.uint32)
    (out,) = _by_rounded(bits, [_dl16_of_rounded()])
    values = bits.view(np.float32)
    if np.isnan(values).any():
        nan = np.isnan(values)
        out[nan] = DL16_NAN | ((bits[nan] >> 16) & 0x8000)
    return out.reshape(np.shape(x))


def _by_rounded(bits: np.ndarray, tables: list[np.ndarray]) -> list[np.ndarray]:
    """Each table looked up at the rounded patterns r of the fp32 bits (`_rounded`), computed
    `_ENCODE_CHUNK` elements at a time."""
    if bits.size <= _ENCODE_CHUNK:  # one chunk (most calls): no output to fill piece by piece
        r = _rounded(bits)
        return [t.take(r) for t in tables]
    outs = [np.empty(bits.size, dtype=t.dtype) for t in tables]
    for lo in range(0, bits.size, _ENCODE_CHUNK):
        r = _rounded(bits[lo : lo + _ENCODE_CHUNK])
        for t, out in zip(tables, outs):
            out[lo : lo + _ENCODE_CHUNK] = t.take(r)
    return outs


_DL16_VALUES = dl16_decode_reference(np.arange(1 << 16, dtype=np.uint32).astype(np.uint16))


def _lookup(table: np.ndarray, b: np.ndarray) -> np.ndarray:
    return table.take(np.asarray(b, dtype=np.uint16))  # take: faster than table[b]; the shape of b


def dl16_decode(b: np.ndarray) -> np.ndarray:
    """DL16 bit patterns (uint16) -> fp32 values, by table (the values of `dl16_decode_reference`)."""
    return _lookup(_DL16_VALUES, b)


@functools.cache
def _dl16_values_of_rounded() -> np.ndarray:
    """The fp32 values of `_dl16_of_rounded`'s patterns (1 MiB), built at the first use."""
    return _DL16_VALUES.take(_dl16_of_rounded())


def dl16_store(x: np.ndarray, bits: bool = True) -> tuple[np.ndarray | None, np.ndarray]:
    """What a store of fp32 values x leaves: with `bits`, the DL16 patterns (`dl16_encode`'s),
    and the fp32 values they hold (`dl16_decode` of them, bit for bit), both from the rounded
    patterns r of `dl16_encode` by table. A NaN stores the NaN pattern, whose value is the
    quiet NaN 0x7FC00000 whatever its sign."""
    src = np.ascontiguousarray(x, dtype=np.float32).reshape(-1).view(np.uint32)
    values, *out_ = _by_rounded(src, [_dl16_values_of_rounded()] + ([_dl16_of_rounded()] if bits else []))
    out = out_[0] if out_ else None
    x32 = src.view(np.float32)
    if np.isnan(x32).any():
        nan = np.isnan(x32)
        values[nan] = _DL16_VALUES[DL16_NAN]
        if out is not None:
            out[nan] = DL16_NAN | ((src[nan] >> 16) & 0x8000)
    shape = np.shape(x)
    return (None if out is None else out.reshape(shape)), values.reshape(shape)


def fp16_encode(x: np.ndarray) -> np.ndarray:
    """fp32 -> IEEE binary16 bits (round to nearest even, overflow to inf, subnormals kept)."""
    with np.errstate(over="ignore"):
        return np.asarray(x, dtype=np.float32).astype(np.float16).view(np.uint16)


def fp16_decode(b: np.ndarray) -> np.ndarray:
    return np.asarray(b, dtype=np.uint16).view(np.float16).astype(np.float32)


@dataclass(frozen=True)
class Numerics:
    """One 16-bit device format: how values are stored, and how precise a store is."""

    name: str
    unit_roundoff: float
    """Relative error bound of one rounding in the normal range."""
    max_value: float
    min_normal: float

    def encode(self, x: np.ndarray) -> np.ndarray:
        return dl16_encode(x) if self.name == "dl16" else fp16_encode(x)

    def decode(self, b: np.ndarray) -> np.ndarray:
        return dl16_decode(b) if self.name == "dl16" else fp16_decode(b)

    def store(self, x: np.ndarray, bits: bool = True) -> tuple[np.ndarray | None, np.ndarray]:
        """A store of x: (its bit patterns, or None without `bits`; the values they hold),
        the same as (encode(x), decode(encode(x)))."""
        if self.name == "dl16":
            return dl16_store(x, bits)
        b = fp16_encode(x)
        return (b if bits else None), fp16_decode(b)

    def round(self, x: np.ndarray) -> np.ndarray:
        """The fp32 value a store of x leaves in device memory."""
        return self.store(x, bits=False)[1]

    def saturated(self, bits: np.ndarray) -> int:
        """How many of the stored patterns `bits` (uint16) are a saturated store: the largest
        finite DL16 value (what a value past the range stores), or an IEEE fp16 infinity."""
        top = DL16_MAX_BITS if self.name == "dl16" else 0x7C00
        return int(np.count_nonzero((bits & 0x7FFF) == top))


DL16 = Numerics("dl16", 2.0**-10, DL16_MAX, DL16_MIN)
IEEE_FP16 = Numerics("ieee-fp16", 2.0**-11, 65504.0, 2.0**-14)


def get_numerics(name: str) -> Numerics:
    try:
        return {"dl16": DL16, "ieee-fp16": IEEE_FP16}[name]
    except KeyError:
        raise ValueError(f"unknown numerics {name!r}: use 'dl16' or 'ieee-fp16'") from None
