"""Element-wise functions the SFP has no instruction for, built in the pointwise body from the
instructions it has: add, sub, mul, div, max, min, neg, abs, exp, log, sqrt, rsqrt, tanh, erf,
sin, cos, and select on (mask != 0). The body computes in float32 and its result is rounded to
the device format once, as every pointwise result; each function here is accurate to a few
float32 roundings of its result (the forms are the classic ones of libm and Cephes), so the
device's error is its one rounding to DL16.

    select(m, a, b)         m != 0 ? a : b                      (a NaN mask selects a)
    positive(x)             max(x, 0): nonzero where x > 0      (or NaN)
    round(x)                |x| + 2^23 - 2^23: float32 addition rounds half to even; |x| >= 2^23
                            is an integer already; the sign put back (round(-0.4) = -0)
    floor, ceil, trunc      round(x) -+ 1 where it passed x
    log1p(x)                log(u) * x / (u - 1), u = 1 + x (Goldberg: exact where u's rounding
                            loses x's bits); x where u == 1; log(u) for u >= 2^24
    expm1(x)                (u - 1) * x / log(u), u = e^x (Kahan); x where u == 1, -1 where u == 0
    atan(x)                 Cephes' atanf: x reduced to |x| <= tan(pi/8) by pi/4 or pi/2 steps,
                            an odd polynomial of degree 9 (relative error ~1e-7)
    atan2, asin, acos       from atan, by the quadrant; asin(x) = atan2(x, sqrt((1-x)(1+x)))
    sinh, asinh, acosh, atanh
                            from expm1 and log1p (no cancellation near 0 or 1)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from xdsl.dialects import arith
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import FloatAttr
from xdsl.ir import Operation, SSAValue

from spyre_mlir.dialects import torch as t
from spyre_mlir.lowering.convert_torch_to_spyre.border import Lowering
from spyre_mlir.lowering.convert_torch_to_spyre.movement import filled
from spyre_mlir.lowering.convert_torch_to_spyre.utils import (
    NotOnDevice,
    addf,
    const,
    divf,
    is_vtensor,
    mulf,
    pointwise,
    pointwise_append,
    result_shape,
    scalar_of,
    subf,
)

# region Building a body

_TILES: list[Callable[[float], SSAValue]] = []
"""While a body is built by `function_pointwise`: a constant as a value the SFP holds in a
tile (an input of the pointwise op, a resident constant), for the places an instruction takes
no immediate (a select's operands)."""


def function_pointwise(
    ops: list[Operation], inputs: Sequence[SSAValue], shape: Sequence[int], body: Callable[..., SSAValue]
) -> SSAValue:
    """`pointwise` of `body`, with the constants a select reads as inputs: the body is built
    once to find them (built the same way again, it asks for the same ones), then with one
    more input per constant, a (1, ..., 1) device tensor holding it (sent once). Such a
    constant must be a value of the device format (0, +-1, 2, NaN): it is stored as one."""
    needed: dict[str, float] = {}

    def probe(*args: SSAValue) -> SSAValue:
        _TILES.append(lambda c: needed.setdefault(repr(c), c) and const(c) or const(c))
        try:
            return body(*args)
        finally:
            _TILES.pop()

    pointwise(inputs, shape, probe).erase()  # (it would hold uses of the inputs)
    extra = [filled(ops, (1,) * len(shape), c) for c in needed.values()]

    def built(*args: SSAValue) -> SSAValue:
        tiles = dict(zip(needed, args[len(inputs) :]))
        _TILES.append(lambda c: tiles[repr(c)])
        try:
            return body(*args[: len(inputs)])
        finally:
            _TILES.pop()

    return pointwise_append(ops, [*inputs, *extra], shape, built)


def _exact_in_16_bits(c: float) -> bool:
    """A value the device's 16-bit formats hold exactly (10 significant bits, a small
    exponent), or NaN."""
    if math.isnan(c) or c == 0:
        return True
    m, e = math.frexp(c)
    return m * 2**10 == int(m * 2**10) and -13 <= e <= 16


def _constant(v: SSAValue) -> float | None:
    owner = v.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, FloatAttr):
        return float(owner.value.value.data)
    return None


def _tile(v: SSAValue) -> SSAValue:
    c = _constant(v)
    if c is None or not _TILES:
        return v
    assert _exact_in_16_bits(c), f"a selected constant {c} would be rounded: select +-1 and multiply instead"
    return _TILES[-1](c)


def _unary(x: SSAValue, fn: Callable[[float], float], make: Callable[[SSAValue], Operation]) -> SSAValue:
    """A one-operand instruction, folded on a constant (the SFP takes none as its source)."""
    c = _constant(x)
    if c is not None:
        return const(fn(c))
    return make(x).results[0]


# endregion
# region Body pieces


def select(mask: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
    """mask != 0 ? a : b (the SFP's select; a NaN mask is nonzero)."""
    m = _constant(mask)
    if m is not None:
        return a if m != 0 else b
    return arith.SelectOp(arith.CmpfOp(mask, const(0.0), "une").result, _tile(a), _tile(b)).result


def positive(x: SSAValue) -> SSAValue:
    """A mask nonzero where x > 0 (or x is NaN)."""
    return maxf(x, const(0.0))


def negative(x: SSAValue) -> SSAValue:
    """A mask nonzero where x < 0 (-inf included) or x is -0 (its reciprocal is -inf); zero
    for NaN."""
    return select(is_nan(x), const(0.0), maxf(positive(neg(x)), positive(neg(divf(const(1.0), x)))))


def neg(x: SSAValue) -> SSAValue:
    return _unary(x, lambda c: -c, arith.NegfOp)


def absf(x: SSAValue) -> SSAValue:
    return _unary(x, abs, mathd.AbsFOp)


def exp(x: SSAValue) -> SSAValue:
    return _unary(x, _exp, mathd.ExpOp)


def log(x: SSAValue) -> SSAValue:
    return _unary(x, _log, mathd.LogOp)


def sqrt(x: SSAValue) -> SSAValue:
    return _unary(x, lambda c: math.sqrt(c) if c >= 0 else math.nan, mathd.SqrtOp)


def _exp(c: float) -> float:
    try:
        return math.exp(c)
    except OverflowError:
        return math.inf


def _log(c: float) -> float:
    return math.log(c) if c > 0 else -math.inf if c == 0 else math.nan


def maxf(a: SSAValue, b: SSAValue) -> SSAValue:
    ca, cb = _constant(a), _constant(b)
    if ca is not None and cb is not None:
        return const(math.nan if math.isnan(ca) or math.isnan(cb) else max(ca, cb))
    return arith.MaximumfOp(a, b).result


def minf(a: SSAValue, b: SSAValue) -> SSAValue:
    ca, cb = _constant(a), _constant(b)
    if ca is not None and cb is not None:
        return const(math.nan if math.isnan(ca) or math.isnan(cb) else min(ca, cb))
    return arith.MinimumfOp(a, b).result


def with_sign_of(r: SSAValue, x: SSAValue, signed_zero: bool = False) -> SSAValue:
    """|r| with x's sign (r >= 0): -r where x < 0 (where x is -0 too with `signed_zero`; a
    constant r: times +-1, since a selected constant is held in the device format)."""
    below = negative(x) if signed_zero else positive(neg(x))
    if _constant(r) is not None:
        return mulf(select(below, const(-1.0), const(1.0)), r)
    return select(below, neg(r), r)


_INTEGRAL = 2.0**23
"""float32 values of this magnitude and above are integers."""


def round_even(x: SSAValue) -> SSAValue:
    a = absf(x)
    r = subf(addf(a, const(_INTEGRAL)), const(_INTEGRAL))
    return with_sign_of(select(positive(subf(a, const(_INTEGRAL))), a, r), x)


def floor(x: SSAValue) -> SSAValue:
    r = round_even(x)
    return select(positive(subf(r, x)), subf(r, const(1.0)), r)


def ceil(x: SSAValue) -> SSAValue:
    r = round_even(x)
    return select(positive(subf(x, r)), addf(r, const(1.0)), r)


def trunc(x: SSAValue) -> SSAValue:
    return with_sign_of(floor(absf(x)), x)


def log1p(x: SSAValue) -> SSAValue:
    u = addf(const(1.0), x)
    goldberg = select(subf(u, const(1.0)), mulf(log(u), divf(x, subf(u, const(1.0)))), x)
    return select(positive(subf(u, const(2.0**24))), log(u), goldberg)


def expm1(x: SSAValue) -> SSAValue:
    u = exp(x)
    kahan = select(u, mulf(subf(u, const(1.0)), divf(x, log(u))), const(-1.0))
    small = select(subf(u, const(1.0)), kahan, x)
    return select(positive(subf(x, const(16.0))), subf(u, const(1.0)), small)


_ATAN_P = (8.05374449538e-2, -1.38776856032e-1, 1.99777106478e-1, -3.33329491539e-1)
"""Cephes atanf's polynomial in z = x^2 on |x| <= tan(pi/8)."""


def atan(x: SSAValue) -> SSAValue:
    a = absf(x)
    big = positive(subf(a, const(2.414213562373095)))  # tan(3 pi/8)
    mid = positive(subf(a, const(0.4142135623730950)))  # tan(pi/8)
    reduced = select(big, neg(divf(const(1.0), a)), select(mid, divf(subf(a, const(1.0)), addf(a, const(1.0))), a))
    offset = mulf(select(big, const(2.0), select(mid, const(1.0), const(0.0))), const(math.pi / 4))
    z = mulf(reduced, reduced)
    p = const(_ATAN_P[0])
    for c in _ATAN_P[1:]:
        p = addf(mulf(p, z), const(c))
    r = addf(offset, addf(mulf(mulf(p, z), reduced), reduced))
    return with_sign_of(r, x)


def atan2(y: SSAValue, x: SSAValue) -> SSAValue:
    """The angle of (x, y), as C's atan2: atan(y / x), plus pi with y's sign for x < 0 (or
    -0); on the y axis y / x is +-inf and atan gives +-pi/2; at the origin 0 or pi, with y's
    sign."""
    base = atan(divf(y, x))
    moved = select(negative(x), addf(base, with_sign_of(const(math.pi), y, signed_zero=True)), base)
    origin = select(negative(x), with_sign_of(const(math.pi), y, True), with_sign_of(const(0.0), y, True))
    return select(maxf(absf(x), absf(y)), moved, origin)  # (the mask is zero only at the origin)


def sinh(x: SSAValue) -> SSAValue:
    e = expm1(absf(x))
    r = mulf(const(0.5), addf(e, divf(e, addf(e, const(1.0)))))
    return with_sign_of(select(positive(subf(absf(x), const(20.0))), mulf(const(0.5), exp(absf(x))), r), x)


def asinh(x: SSAValue) -> SSAValue:
    a = absf(x)
    z = mulf(a, a)
    near = log1p(addf(a, divf(z, addf(const(1.0), sqrt(addf(const(1.0), z))))))
    far = addf(log(a), const(math.log(2.0)))
    return with_sign_of(select(positive(subf(a, const(2.0**12))), far, near), x)


def acosh(x: SSAValue) -> SSAValue:
    d = subf(x, const(1.0))  # exact near 1
    r = log1p(addf(d, sqrt(mulf(d, addf(x, const(1.0))))))
    return select(positive(neg(d)), const(math.nan), r)  # NaN below 1 (the form is not, far below -1)


def atanh(x: SSAValue) -> SSAValue:
    return mulf(const(0.5), log1p(divf(mulf(const(2.0), x), subf(const(1.0), x))))


def is_nan(x: SSAValue) -> SSAValue:
    """A mask nonzero where x is NaN: x - x is NaN for NaN and +-inf, 1/x - 1/x is NaN for NaN
    and 0 (0 for +-inf)."""
    r = divf(const(1.0), x)
    return select(subf(x, x), subf(r, r), const(0.0))


# endregion
# region Lowerings

UNARY_FUNCTIONS: dict[str, tuple[Callable[[SSAValue], SSAValue], str]] = {
    "torch.aten.floor": (floor, "round(x) - 1 where it passed x"),
    "torch.aten.ceil": (ceil, "round(x) + 1 where it passed x"),
    "torch.aten.trunc": (trunc, "floor(|x|) with x's sign"),
    "torch.aten.round": (round_even, "|x| + 2^23 - 2^23 (ties to even), x's sign"),
    "torch.aten.frac": (lambda x: subf(x, trunc(x)), "x - trunc(x)"),
    "torch.aten.sign": (
        lambda x: select(
            is_nan(x), const(0.0), select(positive(x), const(1.0), select(positive(neg(x)), const(-1.0), x))
        ),
        "1, -1, or x for 0 (NaN: 0)",
    ),
    "torch.aten.log1p": (log1p, "log(u) * x / (u - 1), u = 1 + x"),
    "torch.aten.expm1": (expm1, "(u - 1) * x / log(u), u = exp(x)"),
    "torch.aten.log2": (lambda x: mulf(log(x), const(1.0 / math.log(2.0))), "log(x) / log(2)"),
    "torch.aten.log10": (lambda x: mulf(log(x), const(1.0 / math.log(10.0))), "log(x) / log(10)"),
    "torch.aten.exp2": (lambda x: exp(mulf(x, const(math.log(2.0)))), "exp(x log(2))"),
    "torch.aten.tan": (lambda x: divf(mathd.SinOp(x).result, mathd.CosOp(x).result), "sin(x) / cos(x)"),
    "torch.aten.sinh": (sinh, "(E + E / (E + 1)) / 2, E = expm1(|x|), x's sign"),
    "torch.aten.cosh": (lambda x: mulf(const(0.5), addf(exp(absf(x)), exp(neg(absf(x))))), "(e^|x| + e^-|x|) / 2"),
    "torch.aten.atan": (atan, "Cephes atanf"),
    "torch.aten.asin": (
        lambda x: atan2(x, sqrt(mulf(subf(const(1.0), x), addf(const(1.0), x)))),
        "atan2(x, sqrt(1 - x^2))",
    ),
    "torch.aten.acos": (
        lambda x: atan2(sqrt(mulf(subf(const(1.0), x), addf(const(1.0), x))), x),
        "atan2(sqrt(1 - x^2), x)",
    ),
    "torch.aten.asinh": (asinh, "log1p(|x| + x^2 / (1 + sqrt(1 + x^2))), x's sign"),
    "torch.aten.acosh": (acosh, "log1p(x - 1 + sqrt((x - 1)(x + 1)))"),
    "torch.aten.atanh": (atanh, "log1p(2x / (1 - x)) / 2"),
}
"""Unary functions and their body."""


def divmod_(a: SSAValue, b: SSAValue, rounding: Callable[[SSAValue], SSAValue]) -> tuple[SSAValue, SSAValue]:
    """(n, r): n = rounding(a / b) and r = a - n b, exact for |a / b| < 2^24: n b is taken
    off in two parts, n's multiple of 2^12 toward zero and the rest, each product exact (b has
    10 significant bits, as a device value), each difference exact (a multiple of b's last bit
    narrow enough for float32); where a / b rounded across an integer, n is one off and r lies
    on the wrong side (b's for floor, a's for trunc) or beyond |b|: both move by one step.
    Beyond 2^24, n b is not exact: r is a's and b's within their own rounding."""
    n = rounding(divf(a, b))
    high = mulf(trunc(mulf(n, const(2.0**-12))), const(2.0**12))  # (0 for |n| < 2^12)
    r = subf(subf(a, mulf(high, b)), mulf(subf(n, high), b))
    side = b if rounding is floor else a  # r takes b's sign (floor) or a's (trunc)
    s = select(positive(neg(side)), const(-1.0), const(1.0))
    under = positive(neg(mulf(r, s)))  # r on the wrong side: n one too far
    over = positive(subf(absf(r), absf(b)))  # |r| > |b|: n one short
    n = select(under, subf(n, s_of(b, s, rounding)), select(over, addf(n, s_of(b, s, rounding)), n))
    r = select(under, addf(r, mulf(s, absf(b))), select(over, subf(r, mulf(s, absf(b))), r))
    return n, r


def s_of(b: SSAValue, s: SSAValue, rounding: Callable[[SSAValue], SSAValue]) -> SSAValue:
    """The step of n that moves r by s |b|: s |b| / b."""
    return mulf(s, select(positive(neg(b)), const(-1.0), const(1.0)))


def _pow(a: SSAValue, b: SSAValue) -> SSAValue:
    """a^b: exp(b log|a|), negative for a < 0 and odd integer b, NaN for a < 0 and b not an
    integer; at a = 0: 1 for b = 0, 0 for b > 0, inf for b < 0 (as C's pow)."""
    magnitude = exp(mulf(b, log(absf(a))))  # log(0) = -inf: 0 for b > 0, inf for b < 0, NaN for b = 0
    fraction = subf(b, floor(b))
    half = mulf(b, const(0.5))
    odd = subf(half, floor(half))
    signed = select(odd, neg(magnitude), magnitude)
    negative_base = select(fraction, const(math.nan), signed)
    r = select(positive(neg(a)), negative_base, magnitude)
    return select(b, r, const(1.0))  # a^0 = 1, NaN and 0 included


def _logaddexp(a: SSAValue, b: SSAValue) -> SSAValue:
    m = maxf(a, b)
    return addf(m, log1p(exp(neg(absf(subf(a, b))))))


def _logaddexp2(a: SSAValue, b: SSAValue) -> SSAValue:
    m = maxf(a, b)
    d = mulf(neg(absf(subf(a, b))), const(math.log(2.0)))
    return addf(m, mulf(log1p(exp(d)), const(1.0 / math.log(2.0))))


BINARY_FUNCTIONS: dict[str, tuple[Callable[[SSAValue, SSAValue], SSAValue], str]] = {
    "remainder": (lambda a, b: divmod_(a, b, floor)[1], "a - floor(a / b) b, exact (divmod_)"),
    "fmod": (lambda a, b: divmod_(a, b, trunc)[1], "a - trunc(a / b) b, exact (divmod_)"),
    "atan2": (atan2, "atan(a / b) by the quadrant"),
    "hypot": (lambda a, b: sqrt(addf(mulf(a, a), mulf(b, b))), "sqrt(a^2 + b^2)"),
    "copysign": (lambda a, b: with_sign_of(absf(a), b, signed_zero=True), "|a| with b's sign"),
    "fmax": (lambda a, b: select(is_nan(a), b, select(is_nan(b), a, maxf(a, b))), "max, a NaN ignored"),
    "fmin": (lambda a, b: select(is_nan(a), b, select(is_nan(b), a, minf(a, b))), "min, a NaN ignored"),
    "pow": (_pow, "exp(b log|a|), the sign for a < 0 and odd integer b"),
    "logaddexp": (_logaddexp, "max + log1p(exp(-|a - b|))"),
    "logaddexp2": (_logaddexp2, "max + log1p(2^-|a - b|) / log(2)"),
    "floor_divide": (lambda a, b: divmod_(a, b, floor)[0], "floor(a / b), exact (divmod_)"),
}
"""Binary functions (tensor and scalar overloads) and their body."""

_BINARY_OPS = {
    **{f"torch.aten.{n}": n for n in ("atan2", "hypot", "fmax", "fmin", "logaddexp", "logaddexp2", "floor_divide")},
    **{f"torch.aten.{n}.{o}": n for n in ("remainder", "fmod", "copysign") for o in ("Tensor", "Scalar")},
    "torch.aten.pow.Tensor_Tensor": "pow",
    "torch.aten.pow.Scalar": "pow",
}


class LowerUnaryFunctions(Lowering):
    """The unary functions of UNARY_FUNCTIONS, and round with decimals (as PyTorch: round(x
    10^d) / 10^d, or round(x / 10^-d) 10^-d for d < 0)."""

    lowers = {
        **{name: f"spyre.pointwise: {what}" for name, (_, what) in UNARY_FUNCTIONS.items()},
        "torch.aten.round.decimals": "spyre.pointwise: round(x 10^d) / 10^d",
    }

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        ops: list[Operation] = []
        x = self.dev(op.operands[0], op)
        fn = _round_decimals(op) if op.name == "torch.aten.round.decimals" else UNARY_FUNCTIONS[op.name][0]
        pw = function_pointwise(ops, [x], result_shape(op), fn)
        return ops, pw


def _round_decimals(op: Operation) -> Callable[[SSAValue], SSAValue]:
    d = t.constant_int_value(op.operands[1])
    if d is None:
        raise NotOnDevice("decimals is not constant")
    scale = float(10 ** abs(d))

    def fn(a: SSAValue) -> SSAValue:
        if d >= 0:
            return divf(round_even(mulf(a, const(scale))), const(scale))
        return mulf(round_even(divf(a, const(scale))), const(scale))

    return fn


class LowerBinaryFunctions(Lowering):
    """The binary functions of BINARY_FUNCTIONS, of two tensors or of a tensor and a number
    (`pow.Scalar`: a number to a tensor's power)."""

    lowers = {name: f"spyre.pointwise: {BINARY_FUNCTIONS[kind][1]}" for name, kind in _BINARY_OPS.items()}

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        ops: list[Operation] = []
        fn = BINARY_FUNCTIONS[_BINARY_OPS[op.name]][0]
        a_v, b_v = op.operands[0], op.operands[1]
        if not is_vtensor(a_v):  # pow.Scalar: base ** tensor
            base = scalar_of(a_v, op, "the base")
            pw = function_pointwise(ops, [self.promoted(b_v, op)], result_shape(op), lambda b: fn(const(base), b))
        elif not is_vtensor(b_v):
            s = scalar_of(b_v, op, "other")
            pw = function_pointwise(ops, [self.promoted(a_v, op)], result_shape(op), lambda a: fn(a, const(s)))
        else:
            pw = function_pointwise(ops, [self.promoted(a_v, op), self.promoted(b_v, op)], result_shape(op), fn)
        return ops, pw


class LowerActivations(Lowering):
    """Activations with parameters: elu (celu and selu are elus), hardtanh, leaky_relu,
    softshrink; clamp with tensor bounds, clamp_min and clamp_max; div with a rounding mode."""

    lowers = {
        "torch.aten.elu": "spyre.pointwise: x > 0 ? scale x : scale alpha expm1(input_scale x)",
        "torch.aten.hardtanh": "spyre.pointwise: min(max(x, lo), hi)",
        "torch.aten.leaky_relu": "spyre.pointwise: x > 0 ? x : slope x",
        "torch.aten.softshrink": "spyre.pointwise: x - lambda, x + lambda or 0",
        "torch.aten.clamp.Tensor": "spyre.pointwise: min(max(x, lo), hi)",
        "torch.aten.clamp_min": "spyre.pointwise: max(x, lo)",
        "torch.aten.clamp_min.Tensor": "spyre.pointwise: max(x, lo)",
        "torch.aten.clamp_max": "spyre.pointwise: min(x, hi)",
        "torch.aten.clamp_max.Tensor": "spyre.pointwise: min(x, hi)",
        "torch.aten.div.Tensor_mode": "spyre.pointwise: trunc(a / b) or floor(a / b)",
        "torch.aten.div.Scalar_mode": "spyre.pointwise: trunc(a / s) or floor(a / s)",
    }

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        ops: list[Operation] = []
        name = op.name
        x = self.dev(op.operands[0], op)
        shape = result_shape(op)
        if name == "torch.aten.elu":
            alpha, scale, input_scale = (
                scalar_of(v, op, w) for v, w in zip(op.operands[1:4], ("alpha", "scale", "input_scale"))
            )
            pw = function_pointwise(
                ops,
                [x],
                shape,
                lambda a: select(
                    positive(a), mulf(a, const(scale)), mulf(expm1(mulf(a, const(input_scale))), const(scale * alpha))
                ),
            )
        elif name == "torch.aten.hardtanh":
            lo, hi = scalar_of(op.operands[1], op, "min_val"), scalar_of(op.operands[2], op, "max_val")
            pw = function_pointwise(ops, [x], shape, lambda a: minf(maxf(a, const(lo)), const(hi)))
        elif name == "torch.aten.leaky_relu":
            slope = scalar_of(op.operands[1], op, "negative_slope")
            pw = function_pointwise(ops, [x], shape, lambda a: select(positive(a), a, mulf(a, const(slope))))
        elif name == "torch.aten.softshrink":
            lam = scalar_of(op.operands[1], op, "lambd")
            pw = function_pointwise(
                ops,
                [x],
                shape,
                lambda a: select(
                    positive(subf(a, const(lam))),
                    subf(a, const(lam)),
                    select(positive(neg(addf(a, const(lam)))), addf(a, const(lam)), mulf(a, const(0.0))),
                ),
            )
        elif name.startswith("torch.aten.div"):
            mode = None if isinstance(op.operands[2].type, t.NoneType) else t.constant_str_value(op.operands[2])
            if mode not in (None, "trunc", "floor"):
                raise NotOnDevice(f"rounding mode {mode!r}")
            rounded = {None: lambda q: q, "trunc": trunc, "floor": floor}[mode]
            if name == "torch.aten.div.Scalar_mode":
                s = scalar_of(op.operands[1], op, "other")
                pw = function_pointwise(ops, [x], shape, lambda a: rounded(divf(a, const(s))))
            else:
                pw = function_pointwise(ops, [x, self.dev(op.operands[1], op)], shape, lambda a, b: rounded(divf(a, b)))
        else:  # the clamps
            bounds = op.operands[1:]
            kinds = {"torch.aten.clamp_min": "lo", "torch.aten.clamp_min.Tensor": "lo"}.get(name)
            kinds = kinds or {"torch.aten.clamp_max": "hi", "torch.aten.clamp_max.Tensor": "hi"}.get(name)
            roles = [kinds] if kinds else ["lo", "hi"]
            inputs = [x]
            steps: list[tuple[str, float | None]] = []
            for role, v in zip(roles, bounds):
                if isinstance(v.type, t.NoneType):
                    continue
                if is_vtensor(v):
                    inputs.append(self.dev(v, op))
                    steps.append((role, None))
                else:
                    steps.append((role, scalar_of(v, op, "the bound")))

            def body(a: SSAValue, *tensors: SSAValue) -> SSAValue:
                k = 0
                for role, value in steps:
                    if value is None:
                        bound, k = tensors[k], k + 1
                    else:
                        bound = const(value)
                    a = maxf(a, bound) if role == "lo" else minf(a, bound)
                return a

            pw = function_pointwise(ops, inputs, shape, body)
        return ops, pw


# endregion
