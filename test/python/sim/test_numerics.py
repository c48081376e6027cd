"""DL16 (1-6-9, bias 31) and IEEE fp16 store rounding, checked bit for bit."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spyre_mlir.sim.numerics import DL16, DL16_MAX, DL16_MIN, IEEE_FP16, dl16_decode, dl16_encode


def bits(values):
    return [int(b) for b in dl16_encode(np.array(values, dtype=np.float32))]


def test_simple_values_encode_exactly():
    # 1.0 = 2^0 -> exponent 31 -> 31 << 9 = 0x3E00; 3.0 = 1.5 * 2^1 -> 0x4100
    assert bits([0.0, -0.0, 1.0, -1.0, 3.0, 0.5]) == [0x0000, 0x8000, 0x3E00, 0xBE00, 0x4100, 0x3C00]


def test_rounding_ties_go_to_even():
    ulp = 2.0**-9  # spacing of DL16 in [1, 2)
    assert bits([1 + ulp / 2]) == [0x3E00]  # tie between 0x3E00 (even) and 0x3E01: down
    assert bits([1 + 3 * ulp / 2]) == [0x3E02]  # tie between 0x3E01 and 0x3E02 (even): up
    assert bits([1 + ulp / 2 + 2.0**-20]) == [0x3E01]  # just above the tie: up
    assert bits([-(1 + ulp / 2)]) == [0xBE00]  # symmetric for negatives


def test_carry_into_the_exponent():
    assert bits([2 - 2.0**-11]) == [0x4000]  # rounds up to 2.0 = exponent 32


def test_saturation_of_infinities_and_large_values():
    assert bits([np.inf, -np.inf]) == [0x7FFE, 0xFFFE]
    assert bits([1e10, -1e10]) == [0x7FFE, 0xFFFE]
    assert dl16_decode(np.array([0x7FFE], dtype=np.uint16))[0] == np.float32(DL16_MAX)
    assert DL16_MAX == pytest.approx(8.573157376e9)


def test_flush_below_the_smallest_normal():
    assert bits([1e-12, -1e-12, 2.0**-32, 1e-45]) == [0x0000, 0x8000, 0x0000, 0x0000]
    assert bits([DL16_MIN]) == [0x0001]


def test_nan_is_the_single_ninf_pattern():
    assert bits([np.nan]) == [0x7FFF]
    assert np.isnan(dl16_decode(np.array([0x7FFF, 0xFFFF], dtype=np.uint16))).all()


def test_decode_of_every_pattern_roundtrips():
    allbits = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    values = dl16_decode(allbits)
    finite = ~np.isnan(values)
    again = dl16_encode(values[finite])
    # +-0 collapse onto themselves; every other finite pattern is a fixed point
    assert np.array_equal(again, allbits[finite])


@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=-8e9, max_value=8e9, allow_nan=False, width=32))
def test_relative_error_is_at_most_the_unit_roundoff(x):
    r = float(DL16.round(np.array([x], dtype=np.float32))[0])
    if abs(x) >= 2.0**-30:
        assert abs(r - x) <= DL16.unit_roundoff * abs(x)
    else:
        assert abs(r - x) <= 2.0**-30


def test_ieee_fp16_mode_is_numpy_half():
    x = np.array([1.0, 65504.0, 1e5, 1e-6, 1 + 2.0**-11], dtype=np.float32)
    with np.errstate(over="ignore"):
        assert np.array_equal(IEEE_FP16.round(x), x.astype(np.float16).astype(np.float32))


@pytest.mark.parametrize("numerics", [DL16, IEEE_FP16], ids=lambda n: n.name)
@pytest.mark.parametrize("size", [1000, 200_000])  # one table step, and several (dl16_store's chunks)
def test_a_store_gives_the_bits_and_the_values_they_hold(numerics, size):
    """`Numerics.store` is (encode, decode of it) bit for bit: NaNs of both signs, infinities,
    zeros of both signs, values to flush, to saturate, and ties; without bits, the values alone."""
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(size) * np.exp2(rng.uniform(-40, 40, size))).astype(np.float32)
    special = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-12, DL16_MAX * 1.5, 1 + 2.0**-10, 65520.0]
    x[: len(special)] = np.array(special, dtype=np.float32)
    with np.errstate(over="ignore"):
        want_bits = numerics.encode(x)
        stored, values = numerics.store(x)
        _, alone = numerics.store(x, bits=False)
    assert stored is not None and np.array_equal(stored, want_bits)
    assert np.array_equal(values.view(np.uint32), numerics.decode(want_bits).view(np.uint32))
    assert np.array_equal(alone.view(np.uint32), values.view(np.uint32))
