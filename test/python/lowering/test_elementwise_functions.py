"""The element-wise functions the SFP has no instruction for (lowering/convert_torch_to_spyre/
functions.py), on the device, on values that test their corners: zeros of both signs, halves
(ties of rounding), integers, tiny and large magnitudes, NaN.

Each body computes in float32 and is accurate to a few float32 roundings, and its result is
stored once: so, element by element, against the function in float64 on the inputs as the card
holds them,

    |device - exact| <= (u + 16 u32) |exact| + tiny        (u = 2^-10, u32 = 2^-24)

NaN exactly where the exact answer is NaN, and the saturated value beyond DL16's range. The
comparisons are numeric: -0 equals 0."""

import math
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from spyre_mlir.sim.numerics import DL16
from spyre_mlir.torch_device import eager

U32 = 2.0**-24


def _values() -> torch.Tensor:
    g = torch.Generator().manual_seed(0)
    special = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, 1e4, -1e4, 100.0, -100.0, 7.0, math.nan]
    return torch.cat([torch.randn(96, generator=g) * 3, torch.randn(32, generator=g) * 1e-3, torch.tensor(special)])


A = _values()
B = torch.cat([A.flip(0)[1:] * 0.7 + 0.3, torch.tensor([0.25])])  # a second operand, zero-free but for A's zeros

UNARY = {
    "floor": torch.floor,
    "ceil": torch.ceil,
    "trunc": torch.trunc,
    "round": torch.round,
    "round_decimals": lambda a: torch.round(a, decimals=2),
    "frac": torch.frac,
    "sign": torch.sign,
    "log1p": torch.log1p,
    "expm1": lambda a: torch.expm1(a.clamp(max=20)),
    "log2": torch.log2,
    "log10": torch.log10,
    "exp2": lambda a: torch.exp2(a.clamp(max=30)),
    "tan": torch.tan,
    "sinh": lambda a: torch.sinh(a.clamp(-20, 20)),
    "cosh": lambda a: torch.cosh(a.clamp(-20, 20)),
    "atan": torch.atan,
    "asin": torch.asin,
    "acos": torch.acos,
    "asinh": torch.asinh,
    "acosh": torch.acosh,
    "atanh": torch.atanh,
    "elu": F.elu,
    "leaky_relu": lambda a: F.leaky_relu(a, 0.1),
    "hardtanh": F.hardtanh,
    "softshrink": lambda a: F.softshrink(a, 0.5),
    "clamp_min": lambda a: torch.clamp_min(a, 0.3),
    "rpow": lambda a: torch.pow(2.0, a.clamp(-20, 20)),
}
BINARY = {
    "atan2": torch.atan2,
    "hypot": torch.hypot,
    "copysign": torch.copysign,
    "fmax": torch.fmax,
    "fmin": torch.fmin,
    "pow": lambda a, b: torch.pow(a.clamp(-3, 3), b.clamp(-4, 4)),
    "logaddexp": torch.logaddexp,
    "logaddexp2": torch.logaddexp2,
    "remainder": lambda a, b: torch.remainder(a.clamp(-50, 50), b),
    "fmod": lambda a, b: torch.fmod(a.clamp(-50, 50), b),
    "floor_divide": lambda a, b: torch.div(a.clamp(-50, 50), b, rounding_mode="floor"),
    "trunc_divide": lambda a, b: torch.div(a.clamp(-50, 50), b, rounding_mode="trunc"),
    "clamp_tensors": lambda a, b: torch.clamp(a, min=-b.abs(), max=b.abs()),
}
QUICK = {"floor", "log1p", "atan2", "remainder", "pow", "sign"}


def _check(name, got: torch.Tensor, exact: torch.Tensor) -> None:
    got, exact = got.double().numpy(), exact.double().numpy()
    nan = np.isnan(exact)
    assert np.array_equal(np.isnan(got), nan), f"{name}: NaN where the exact answer is not, or the reverse"
    top = DL16.max_value
    want = np.clip(exact[~nan], -top, top)  # beyond the format's range: the saturated value
    bound = (DL16.unit_roundoff + 16 * U32) * np.abs(want) + DL16.min_normal
    err = np.abs(got[~nan] - want)
    worst = int(np.argmax(err - bound))
    assert np.all(err <= bound), f"{name}: {got[~nan][worst]!r} where the exact answer is {want[worst]!r}"


def _on_device(fn, *xs: torch.Tensor) -> tuple[torch.Tensor, list]:
    with warnings.catch_warnings(), eager.placements() as placed:
        warnings.simplefilter("ignore")  # (log1p(-1) = -inf saturates, and says so)
        y = fn(*xs)
    return y.cpu(), placed


@pytest.mark.parametrize("name", [n if n in QUICK else pytest.param(n, marks=pytest.mark.slow) for n in UNARY])
def test_unary_function_on_the_device(name):
    fn = UNARY[name]
    a = A.to("spyre")
    got, placed = _on_device(fn, a)
    assert placed and all(p.where == "device" for p in placed)
    _check(name, got, fn(a.cpu().double()))


@pytest.mark.parametrize("name", [n if n in QUICK else pytest.param(n, marks=pytest.mark.slow) for n in BINARY])
def test_binary_function_on_the_device(name):
    fn = BINARY[name]
    a, b = A.to("spyre"), B.to("spyre")
    got, placed = _on_device(fn, a, b)
    assert placed and all(p.where == "device" for p in placed)
    _check(name, got, fn(a.cpu().double(), b.cpu().double()))  # (the clamps, negations and abs inside are exact)


def test_remainder_is_exact_for_large_quotients():
    """a - floor(a / b) b with n b taken off in two exact parts: exact where |a / b| < 2^24,
    where one float32 product n b would round (a / b = 24007 here)."""
    a = torch.tensor([49984.0, -49984.0, 12345.0, -3.5]).to("spyre")
    b = torch.tensor([2.08203125, 2.08203125, 1e-3, 0.25]).to("spyre")
    got = torch.remainder(a, b).cpu()
    assert torch.equal(got, torch.remainder(a.cpu().double(), b.cpu().double()).float())
