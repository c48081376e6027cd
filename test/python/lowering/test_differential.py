"""Differential tests of every op family the device path supports: hypothesis draws shapes
(ranks 0-4, sizes at the 64-lane stick boundaries 1, 63, 64, 65, 127, 128, 129, broadcasting),
dtypes (f32, f16, bf16) and values (normal values at several scales, zeros, denormals, values
beyond DL16's range, +-inf, NaN), and every compiled result is compared with the exact answer
PyTorch's own operators give in float64 (reference/evaluate.py) under the DL16 error bound that
reference propagates (docs/numerics.md).

The criterion, element by element (`assert_device_result`):

  * what the device receives is stated by DL16's documented transfer rule (sim/numerics.py,
    docs/numerics.md): a value beyond the largest finite DL16 value (+-inf too) saturates to
    +-DL16_MAX, a value that rounds below the smallest flushes to +-0, NaN stays NaN. The
    expected answer is computed from those values (`documented_transfer`); every other input
    is used as drawn, its rounding being inside the bound;
  * NaN where the exact answer is NaN, and nowhere else;
  * elsewhere the device value lies in [R(exact - bound), R(exact + bound)], where R is the
    documented saturation of every DL16 store (clip to +-DL16_MAX: DL16 has no infinity)
    followed by the cast to the output dtype eager PyTorch returns (f16 / bf16 round again);
    both are monotone, so this is exactly "within the bound" after the two documented steps.

Each family compiles one graph per (shape, dtype) holding all of its ops, and runs many value
draws through it (compiling per example would dominate the run time); hypothesis runs
derandomized with no deadline, so CI sees the same examples every time. Across a family's
examples, some f32 result must show DL16 rounding, so a silent fp32 path would fail too.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
import torch
from helpers import Fn, assert_device_result, cast_through, compile_captured
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from spyre_mlir.frontend.backend import STATS
from spyre_mlir.reference.evaluate import evaluate
from spyre_mlir.sim.numerics import DL16, DL16_MAX
from spyre_mlir.testing.criteria import reference
from spyre_mlir.testing.hypothesis import example_count

# every family compiles dozens of graphs: make test, not make quick; the families draw inside
# the test (st.data()), so the conftest cannot see them as properties: marked here
pytestmark = [pytest.mark.slow, pytest.mark.property]

EXAMPLES = example_count(full=60, every_commit=20)
"""Hypothesis examples per op family (each one a shape, a dtype and a draw of values): 60 in
`make test-full`, 20 in `make test`; DIFF_N overrides it, DIFF_NOSHRINK=1 skips shrinking (for a long local run)."""

DRAWN = int(os.environ.get("DIFF_N", EXAMPLES))

SETTINGS = settings(
    max_examples=DRAWN,
    phases=[Phase.explicit, Phase.generate] if os.environ.get("DIFF_NOSHRINK") else list(Phase),
    report_multiple_bugs=False,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

DTYPES = (torch.float32, torch.float16, torch.bfloat16)
STICK_SIZES = (1, 63, 64, 65, 127, 128, 129)

SPECIALS = (
    0.0,
    -0.0,
    1e-40,  # an fp32 (and bf16) denormal: flushes to 0
    -3e-10,  # a normal fp32 below DL16's smallest value (4.66e-10): flushes to -0
    DL16.min_normal,
    -65504.0,  # fp16's largest
    DL16_MAX,
    -DL16_MAX,
    1e10,  # beyond DL16's largest: saturates
    -1e30,
    math.inf,
    -math.inf,
    math.nan,
)
"""Values sprinkled into the normal draws (at stick edges and anywhere else)."""


# region The criterion


FLUSH_BELOW = 2.0**-31 * (1 + 2.0**-10)
"""Magnitudes up to this one round to DL16's +-0 (the smallest nonzero value is
(1 + 2^-9) 2^-31; the tie at half its step goes to the even pattern, 0)."""


def documented_transfer(x: np.ndarray) -> np.ndarray:
    """What DL16's documented transfer rule hands the device, where it is not a rounding: values
    it flushes become +-0, values beyond its range (+-inf too) become +-DL16_MAX, NaN stays NaN.
    Every other value is kept as drawn (its rounding is in the bound). Written from the rule,
    not through sim/numerics.py, so that a wrong encoder cannot hide behind its own output."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        out = np.where(np.abs(x) > DL16_MAX, np.copysign(DL16_MAX, x), x)
        return np.where(np.abs(x) <= FLUSH_BELOW, np.copysign(0.0, x), out)


# endregion
# region Compiling once per (family, shape, dtype)


@dataclass
class Compiled:
    fn: Callable[..., Any]
    """The aot_autograd-compiled callable (Dynamo graph inputs -> outputs)."""
    order: list[int]
    """Which of the function's inputs is each graph input."""
    module: Any
    """The torch-level module of the same graph, for the reference."""
    ctx: Any


_CACHE: dict[Any, Compiled] = {}


def compile_family(key: Any, fn: Callable[..., Any], inputs: Sequence[torch.Tensor], device: bool = True) -> Compiled:
    """Compile `fn` for inputs of these shapes and dtypes the way the spyre backend does
    (helpers.compile_captured), keeping the compiled callable so that later value draws skip
    Dynamo; the graph must run wholly on the device. (`device=False`: only the torch-level
    module, for the reference.)"""
    if key in _CACHE:
        return _CACHE[key]
    c = compile_captured(fn, list(inputs), device)
    if device:
        assert c.report is not None, f"{key}: expected one compiled graph"
        assert not c.report.cpu_fallback, f"{key}: ran on the CPU: {dict(c.report.cpu_fallback)}"
    assert sorted(c.order) == list(range(len(inputs))), f"{key}: the graph does not take every input"
    found = _CACHE[key] = Compiled(c.fn, c.order, c.module, c.ctx)
    return found


@dataclass
class Family:
    """One op family: a function returning a tuple of outputs (one per op)."""

    name: str
    ops: Sequence[str]
    worst_rounding: float = 0.0
    examples: int = 0
    special: int = 0
    """Examples whose inputs hold a value DL16 saturates or flushes, +-inf or NaN."""
    per_op: dict[str, int] = field(default_factory=dict)

    def check(
        self,
        key: Any,
        fn: Callable[..., Any],
        inputs: Sequence[torch.Tensor],
        ops: Sequence[str] | None = None,
        stored: tuple[Callable[..., Any], Callable[..., list[np.ndarray | None]]] | None = None,
        stored_or_fused: bool = False,
    ) -> None:
        """Run one draw of `inputs` through the family's graph and check every output.

        `stored`: (g, where) for ops that may store an intermediate result in DL16, whose
        saturation the exact answer of the op does not see: g computes the same outputs with
        that store spelled out (a clamp to +-DL16_MAX), and where(documented inputs) says, per
        output, where an intermediate may leave DL16's range; there the expected value and its
        bound are g's. With `stored_or_fused`, there an element may match either g's answer
        within g's bound or the op's within its own (addmm's product is stored, and saturates,
        unless the bias runs as the matmul's epilogue on its fp32 sums: docs/numerics.md,
        "Intermediate stores")."""
        ops = list(ops or self.ops)
        user_inputs = list(inputs)
        c = compile_family((self.name, *key), fn, inputs)
        inputs = [inputs[i] for i in c.order]
        with torch.no_grad():
            outs = c.fn(*inputs)
            eager = fn(*[inputs[c.order.index(i)] for i in range(len(inputs))])
        outs = list(outs) if isinstance(outs, tuple | list) else [outs]
        eager = list(eager) if isinstance(eager, tuple | list) else [eager]
        host = [
            documented_transfer(x.detach().to(torch.float64).numpy()) if x.is_floating_point() else x.numpy()
            for x in inputs
        ]
        exact, bound = evaluate(c.module, host, DL16, c.ctx)
        drawn = [x.detach().to(torch.float64).numpy() for x in inputs if x.is_floating_point()]
        if any(
            ((h != x) & ~np.isnan(x)).any() or np.isnan(x).any()
            for h, x in zip((documented_transfer(x) for x in drawn), drawn)
        ):
            self.special += 1
        if stored is not None:
            g, where = stored
            as_f32 = [
                x.float() if x.is_floating_point() else x for x in user_inputs
            ]  # the reference runs in f64 anyway
            d = compile_family(("stored", self.name, *key), g, as_f32, device=False)
            host_user = [host[c.order.index(i)] for i in range(len(host))]
            d_exact, d_bound = evaluate(d.module, [host_user[i] for i in d.order], DL16, d.ctx)
            with np.errstate(invalid="ignore", over="ignore"):
                masks = where(*host_user)
            for j, m in enumerate(masks):
                if m is None:
                    continue
                if stored_or_fused:  # where the device's answer is g's, hold it to g's bound
                    y = outs[j].detach().to(torch.float64).numpy()
                    with np.errstate(invalid="ignore"):  # (g's bounds in the output's dtype, as below)
                        lo = cast_through(np.clip(d_exact[j] - d_bound[j], -DL16_MAX, DL16_MAX), outs[j].dtype)
                        hi = cast_through(np.clip(d_exact[j] + d_bound[j], -DL16_MAX, DL16_MAX), outs[j].dtype)
                        m = m & (lo <= y) & (y <= hi)
                exact[j] = np.where(m, d_exact[j], exact[j])
                bound[j] = np.where(m, d_bound[j], bound[j])
        assert len(outs) == len(ops) == len(exact), (len(outs), len(ops), len(exact))
        desc = ", ".join(f"{x.dtype}{list(x.shape)}" for x in inputs)
        for op, y, e, ex, b in zip(ops, outs, eager, exact, bound):
            assert y.shape == e.shape and y.dtype == e.dtype, (
                f"{op}: {y.dtype}{list(y.shape)} vs eager {e.dtype}{list(e.shape)}"
            )
            try:
                r = assert_device_result(y, ex, b, f"{self.name}/{op} on {desc}")
            except AssertionError:
                if os.environ.get("DIFF_DUMP"):
                    torch.save([inputs[c.order.index(i)] for i in range(len(inputs))], os.environ["DIFF_DUMP"])
                raise
            if y.dtype == torch.float32:
                self.worst_rounding = max(self.worst_rounding, r)
            self.per_op[op] = self.per_op.get(op, 0) + 1
        self.examples += 1

    def finish(self) -> None:
        # the floors of 60 examples (50 ran, 10 with special values) in proportion to the count
        assert self.examples >= DRAWN * 5 // 6, f"{self.name}: only {self.examples} of {DRAWN} examples ran"
        assert self.special >= DRAWN // 6, f"{self.name}: only {self.special} examples hold special values"
        assert self.worst_rounding > DL16.unit_roundoff / 8, f"{self.name}: no f32 result shows DL16 rounding at all"


# endregion
# region Strategies


@st.composite
def shapes(draw: Any, min_rank: int = 0, max_rank: int = 4, max_elements: int = 6000) -> tuple[int, ...]:
    """Ranks 0-4; the last (stick) dim at a stick boundary; leading dims small or at a boundary."""
    rank = draw(st.integers(min_rank, max_rank))
    if rank == 0:
        return ()
    shape = [draw(st.sampled_from(STICK_SIZES))]
    for _ in range(rank - 1):  # leading dims, within the element budget
        room = max_elements // math.prod(shape)
        shape.insert(0, draw(st.sampled_from([d for d in (1, 2, 3, 63, 65) if d <= room] or [1])))
    shape = tuple(shape)
    return shape


@st.composite
def values(
    draw: Any,
    shape: tuple[int, ...],
    scales: Sequence[float] = (1.0, 1e-3, 30.0, 1e4, 1e8),
    specials: Sequence[float] = SPECIALS,
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """Normal values at a drawn scale (a seeded numpy draw: hypothesis picks the seed, the scale,
    and which special values land where, at stick edges or anywhere)."""
    seed = draw(st.integers(0, 2**32 - 1))
    scale = draw(st.sampled_from(scales))
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * scale
    n = max(1, x.size)
    flat = x.reshape(-1)
    if specials:
        for v, where in draw(st.lists(st.tuples(st.sampled_from(specials), st.integers(0, 2**31)), max_size=6)):
            edges = [i for i in (0, 62, 63, 64, 65, n - 1) if i < n]
            pos = edges[where % len(edges)] if where % 3 == 0 else where % n
            flat[pos] = v
    return torch.from_numpy(flat.reshape(shape).astype(np.float32)).to(dtype)


# endregion
# region Families


UNARY: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "relu": torch.relu,
    "neg": torch.neg,
    "abs": torch.abs,
    "exp": torch.exp,
    "log": torch.log,
    "sqrt": torch.sqrt,
    "rsqrt": torch.rsqrt,
    "tanh": torch.tanh,
    "sin": torch.sin,
    "cos": torch.cos,
    "erf": torch.erf,
    "sigmoid": torch.sigmoid,
    "reciprocal": torch.reciprocal,
    "gelu": torch.nn.functional.gelu,
    "gelu_tanh": lambda x: torch.nn.functional.gelu(x, approximate="tanh"),
}


def _unary_all(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
    return tuple(f(x) for f in UNARY.values())


def check_one_tensor_family(name: str, outputs: list[str], fn: Callable[[torch.Tensor], Any]) -> None:
    """A family whose ops take one tensor: shape, dtype and values drawn, all outputs checked."""
    fam = Family(name, outputs)

    @SETTINGS
    @given(st.data())
    def run(data: Any) -> None:
        shape = data.draw(shapes())
        dtype = data.draw(st.sampled_from(DTYPES))
        fam.check((shape, dtype), fn, [data.draw(values(shape, dtype=dtype))])

    run()
    fam.finish()


def test_unary_family():
    check_one_tensor_family("unary", list(UNARY), _unary_all)


# endregion

# region Binary ops with broadcasting, where


@st.composite
def broadcast_shapes(draw: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Two shapes that broadcast: one drawn, the other a suffix of it with some dims 1 (either
    operand may be the smaller one)."""
    shape = draw(shapes())
    k = draw(st.integers(0, len(shape)))
    other = tuple(1 if draw(st.booleans()) else d for d in shape[len(shape) - k :])
    return (other, shape) if draw(st.booleans()) else (shape, other)


BINARY: dict[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    "add": torch.add,
    "sub_alpha": lambda x, y: torch.sub(x, y, alpha=2.0),
    "mul": torch.mul,
    "div": torch.div,
    "minimum": torch.minimum,
    "maximum": torch.maximum,
    "where": lambda x, y: torch.where(x > 0.3, x, y),
}


def _binary_all(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, ...]:
    return tuple(f(x, y) for f in BINARY.values())


def test_binary_family_with_broadcasting():
    fam = Family("binary", list(BINARY))

    @SETTINGS
    @given(st.data())
    def run(data: Any) -> None:
        sx, sy = data.draw(broadcast_shapes())
        dtype = data.draw(st.sampled_from(DTYPES))
        x, y = data.draw(values(sx, dtype=dtype)), data.draw(values(sy, dtype=dtype))
        fam.check((sx, sy, dtype), _binary_all, [x, y])

    run()
    fam.finish()


# endregion
# region Scalar operands: add/sub/mul/div.Scalar, pow, clamp


SCALAR: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "add_scalar": lambda x: x + 2.5,
    "rsub_scalar": lambda x: 2.0 - x,
    "mul_scalar": lambda x: x * -3.0,
    "div_scalar": lambda x: x / 4.0,
    "div_by_zero": lambda x: x / 0.0,
    "square": lambda x: x**2,
    "cube": lambda x: x**3,
    "pow_-1": lambda x: x**-1,
    "pow_0.5": lambda x: x**0.5,
    "pow_-0.5": lambda x: x**-0.5,
    "pow_1.5": lambda x: x**1.5,
    "pow_0.3": lambda x: x**0.3,
    "clamp": lambda x: torch.clamp(x, -0.5, 0.5),
    "clamp_min": lambda x: torch.clamp(x, min=0.1),
    "clamp_max": lambda x: torch.clamp(x, max=-0.25),
}


def _scalar_all(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
    return tuple(f(x) for f in SCALAR.values())


def test_scalar_operand_family():
    check_one_tensor_family("scalar", list(SCALAR), _scalar_all)


# endregion
# region Reductions over the last dim (padded lanes masked)


REDUCTIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "sum_keepdim": lambda x: x.sum(-1, keepdim=True),
    "mean_keepdim": lambda x: x.mean(-1, keepdim=True),
    "amax_keepdim": lambda x: x.amax(-1, keepdim=True),
    "sum": lambda x: x.sum(-1),
    "mean": lambda x: x.mean(-1),
    "amax": lambda x: x.amax(-1),
    "max_values": lambda x: x.max(-1).values,
}


def _reductions_all(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
    return tuple(f(x) for f in REDUCTIONS.values())


def test_reduction_family():
    check_one_tensor_family("reduce", list(REDUCTIONS), _reductions_all)


# endregion
# region Softmax and layer norm (last dim)


def test_softmax_family():
    check_one_tensor_family("softmax", ["softmax"], lambda x: torch.softmax(x, -1))


def test_knife_edge_draws_are_judged_as_the_device_computes_them():
    """Two draws where the device is right and a first-order or float64-only reference was not:
    a bf16 element equal to bf16(0.3) compared with 0.3 (PyTorch compares in bf16: not greater),
    and a softmax row whose two largest f32 inputs, 7 apart near 1e4, store as one DL16 value
    (a tie: 0.5 each, where the exact answers are 0.9991 and 0.0009; the bound must hold beyond
    first order in the inputs' errors)."""
    x = torch.linspace(-1, 1, 63, dtype=torch.bfloat16)
    x[33] = 0.3
    assert x[33].item() == 0.30078125
    binary = Family("binary", list(BINARY))
    binary.check(((63,), (), torch.bfloat16), _binary_all, [x, torch.tensor(0.125, dtype=torch.bfloat16)])
    assert binary.examples == 1
    x = torch.full((2, 63), -1e4)
    x[1, 36], x[1, 37] = 1e4, 1e4 + 7
    y = torch.compile(lambda v: torch.softmax(v, -1), backend="spyre")(x)
    assert y[1, 36].item() == y[1, 37].item() == 0.5  # the tie the draw is about
    softmax = Family("softmax", ["softmax"])
    softmax.check(((2, 63), torch.float32), lambda v: torch.softmax(v, -1), [x])
    assert softmax.examples == 1


LN_EPS = 1e-5


def _layer_norms(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, ...]:
    n = x.shape[-1]
    return (
        torch.nn.functional.layer_norm(x, (n,), w, b, eps=LN_EPS),
        torch.nn.functional.layer_norm(x, (n,), eps=LN_EPS),
    )


def _layer_norms_stored(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Layer norm as the device computes it (docs/numerics.md, "Intermediate stores"): the
    deviations d = x - mean and their squares are stored in DL16 before the variance's mean,
    so both saturate at DL16_MAX."""
    d = torch.clamp(x - x.mean(-1, keepdim=True), -DL16_MAX, DL16_MAX)
    var = torch.clamp(d * d, max=DL16_MAX).mean(-1, keepdim=True)
    z = d * torch.rsqrt(var + LN_EPS)
    return z * w + b, z


def _layer_norm_saturates(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> list[np.ndarray | None]:
    """Rows whose squared deviations reach DL16's range (with a margin: the device's rounded
    deviations may reach it a little before the exact ones)."""
    d = x - x.mean(-1, keepdims=True)
    rows = np.nan_to_num(d * d, nan=0.0).max(-1, keepdims=True) > DL16_MAX / 4
    return [np.broadcast_to(rows, x.shape)] * 2


def test_layer_norm_family():
    fam = Family("layer_norm", ["layer_norm", "layer_norm_no_affine"])

    @SETTINGS
    @given(st.data())
    def run(data: Any) -> None:
        shape = data.draw(shapes(min_rank=1))
        dtype = data.draw(st.sampled_from(DTYPES))
        x = data.draw(values(shape, dtype=dtype))
        w = data.draw(values(shape[-1:], scales=(1.0,), specials=(), dtype=dtype))
        b = data.draw(values(shape[-1:], scales=(1.0,), specials=(), dtype=dtype))
        fam.check((shape, dtype), _layer_norms, [x, w, b], stored=(_layer_norms_stored, _layer_norm_saturates))

    run()
    fam.finish()


# endregion
# region Matmul: mm, addmm, linear, bmm


def _matmuls(
    a: torch.Tensor, b: torch.Tensor, w: torch.Tensor, bias: torch.Tensor, a3: torch.Tensor, b3: torch.Tensor
) -> tuple[torch.Tensor, ...]:
    return (
        torch.mm(a, b),
        torch.addmm(bias, a, b, beta=0.5, alpha=2.0),
        torch.nn.functional.linear(a, w, bias),
        torch.bmm(a3, b3),
    )


def _matmuls_stored(
    a: torch.Tensor, b: torch.Tensor, w: torch.Tensor, bias: torch.Tensor, a3: torch.Tensor, b3: torch.Tensor
) -> tuple[torch.Tensor, ...]:
    """addmm and linear as the device computes them when the bias is a kernel of its own
    (docs/numerics.md, "Intermediate stores"): the product is stored in DL16 (saturating at
    DL16_MAX) before alpha, beta and the bias; a bmm by one column (or of one row) as a
    product and a sum: the element-wise products stored in DL16, then their sum."""
    if b3.shape[2] == 1:  # rows times a column: products (batch, m, k)
        bmm = torch.clamp(a3 * b3.transpose(1, 2), -DL16_MAX, DL16_MAX).sum(2, keepdim=True)
    elif a3.shape[1] == 1:  # a row times columns: products (batch, k, n)
        bmm = torch.clamp(a3.transpose(1, 2) * b3, -DL16_MAX, DL16_MAX).sum(1, keepdim=True)
    else:
        bmm = torch.bmm(a3, b3)
    return (
        torch.mm(a, b),
        torch.clamp(torch.mm(a, b), -DL16_MAX, DL16_MAX) * 2.0 + 0.5 * bias,
        torch.clamp(torch.mm(a, w.t()), -DL16_MAX, DL16_MAX) + bias,
        bmm,
    )


def _matmul_saturates(
    a: np.ndarray, b: np.ndarray, w: np.ndarray, bias: np.ndarray, a3: np.ndarray, b3: np.ndarray
) -> list[np.ndarray | None]:
    big = lambda p: np.nan_to_num(np.abs(p), nan=0.0) > DL16_MAX / 4  # noqa: E731
    with np.errstate(invalid="ignore", over="ignore"):  # (products stored: _matmuls_stored)
        if b3.shape[2] == 1:
            products = big(a3 * np.swapaxes(b3, 1, 2)).any(axis=2, keepdims=True)
        elif a3.shape[1] == 1:
            products = big(np.swapaxes(a3, 1, 2) * b3).any(axis=1, keepdims=True)
        else:
            products = None
    return [None, big(a @ b), big(a @ w.T), products]


def test_matmul_family():
    fam = Family("matmul", ["mm", "addmm", "linear", "bmm"])

    @SETTINGS
    @given(st.data())
    def run(data: Any) -> None:
        m, k, n = (data.draw(st.sampled_from(STICK_SIZES)) for _ in range(3))
        batch = data.draw(st.integers(1, 3))
        dtype = data.draw(st.sampled_from(DTYPES))
        draw = lambda *s, **kw: data.draw(values(s, dtype=dtype, **kw))  # noqa: E731
        ins = [draw(m, k), draw(k, n), draw(n, k), draw(n, scales=(1.0,)), draw(batch, m, k), draw(batch, k, n)]
        fam.check(
            (m, k, n, batch, dtype), _matmuls, ins, stored=(_matmuls_stored, _matmul_saturates), stored_or_fused=True
        )

    run()
    fam.finish()


# endregion
# region Data movement: views, transposes, expand, slice, select, embedding


def _movement(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Views and copies of a rank >= 2 tensor; each result goes through one exact pointwise
    multiply by 2 so that the graph computes it on the device (a bare view of an input would be
    replayed by aot_autograd on the host)."""
    last = x.shape[-1]
    outs = [
        x.transpose(-1, -2) * 2.0,
        x.permute(*reversed(range(x.dim()))) * 2.0,
        x.reshape(-1, last) * 2.0,
        x.unsqueeze(0) * 2.0,
        x[:1].squeeze(0) * 2.0,
        x.unsqueeze(-2).expand(*x.shape[:-1], 2, last) * 2.0,
        x[0] * 2.0,
        x[-1:] * 2.0,
        x.clone() * 2.0,
        (x * 2.0)[..., :1] + 1.0,  # one element per stick (a lane-0 layout)
    ]
    if last > 64:
        outs.append(x[..., 64:] * 2.0)
    return tuple(outs)


MOVEMENT = [
    "transpose",
    "permute",
    "reshape",
    "unsqueeze",
    "squeeze",
    "expand",
    "select",
    "slice",
    "clone",
    "slice_lane",
    "slice_stick",
]


def test_data_movement_family():
    fam = Family("movement", MOVEMENT)

    @SETTINGS
    @given(st.data())
    def run(data: Any) -> None:
        shape = data.draw(shapes(min_rank=2, max_elements=3000))
        dtype = data.draw(st.sampled_from(DTYPES))
        x = data.draw(values(shape, dtype=dtype))
        fam.check((shape, dtype), _movement, [x], MOVEMENT[: 10 + (shape[-1] > 64)])

    run()
    fam.finish()


def test_select_along_the_stick_dim():
    """x[..., 0] leaves one element per stick where the result needs them side by side: the
    device transposes the stick dim with the rows (a block transpose), copies one row and
    transposes back. A tensor whose other dims are all 1 (a decode step's row) is first
    broadcast to two rows, so that there is a dim to transpose with, and one is kept: the whole
    graph runs on the device either way."""
    fn = lambda v: (v * 2.0)[..., 0] + 1.0  # noqa: E731
    for shape in ((3, 65), (1, 65), (65,)):
        x = torch.randn(*shape, generator=torch.Generator().manual_seed(0))
        torch._dynamo.reset()
        before = len(STATS.graphs)
        with torch.no_grad(), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = torch.compile(fn, backend="spyre")(x)
        spyre_warnings = [str(w.message) for w in caught if str(w.message).startswith("spyre")]
        assert not spyre_warnings and STATS.graphs[before].device_fraction == 1, spyre_warnings
        (exact,), (bound,) = reference(Fn(fn), x, numerics=DL16)
        assert_device_result(y, exact, bound, f"select along the stick dim of {shape}")


def test_an_element_per_stick_broadcast_with_a_vector():
    """A mean along the last dim, permuted so the means lie along the new last dim (an element
    per stick, splatted), times a per-row scale, plus a vector along that dim: no splat holds
    the vector, so the sum takes the generic layout (spyre-propagate-layouts' chooser)."""
    fn = lambda x, s, w: x.mean(dim=3, keepdim=True).permute(3, 1, 2, 0).reshape(1, 23, 64) * torch.sigmoid(s) + w  # noqa: E731
    g = torch.Generator().manual_seed(0)
    args = (torch.randn(64, 1, 23, 4, generator=g), torch.randn(1, 23, 1, generator=g), torch.randn(64, generator=g))
    torch._dynamo.reset()
    before = len(STATS.graphs)
    with torch.no_grad():
        y = torch.compile(fn, backend="spyre")(*args)
    assert STATS.graphs[before].device_fraction == 1
    (exact,), (bound,) = reference(Fn(fn), *args, numerics=DL16)
    assert_device_result(y, exact, bound, "an element per stick plus a vector")


def _cats(*pieces: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """The pieces joined along each dim they can join on, and rotary's rotate_half of the
    first piece (halves of its last dim, the second negated, swapped)."""
    x = pieces[0]
    half = x.shape[-1] // 2
    outs = [torch.cat(pieces, dim=-1) * 2.0, torch.cat((x, x * 0.5), dim=0) * 2.0]
    outs.append(torch.cat((-x[..., half:], x[..., :half]), dim=-1) * 2.0)
    return tuple(outs)


def test_cat_family():
    """torch.cat along the stick dim (pieces of any width: off a stick boundary the device
    transposes them to another dim), along a leading dim, and rotary's rotate_half."""
    fam = Family("cat", ["cat_last", "cat_first", "rotate_half"])

    @SETTINGS
    @given(st.data())
    def run(data: Any) -> None:
        lead = data.draw(st.sampled_from(((1,), (3,), (1, 1), (2, 5), (65,), (1, 7))))
        first = data.draw(st.sampled_from((4, 32, 63, 64, 65, 100)))  # rotate_half's halves hold 2 or more
        widths = [first, *data.draw(st.lists(st.sampled_from((1, 2, 32, 63, 64, 65, 100)), min_size=1, max_size=2))]
        dtype = data.draw(st.sampled_from(DTYPES))
        pieces = [data.draw(values((*lead, w), dtype=dtype)) for w in widths]
        fam.check((lead, tuple(widths), dtype), _cats, pieces)

    run()
    fam.finish()


def test_embedding_family():
    fam = Family("embedding", ["embedding"])

    @SETTINGS
    @given(st.data())
    def run(data: Any) -> None:
        rows = data.draw(st.sampled_from((1, 5, 65)))
        width = data.draw(st.sampled_from(STICK_SIZES))
        dtype = data.draw(st.sampled_from(DTYPES))
        table = data.draw(values((rows, width), dtype=dtype))
        ids_shape = data.draw(st.sampled_from(((1,), (3,), (2, 7), (1, 2, 65))))
        seed = data.draw(st.integers(0, 2**32 - 1))
        ids = torch.from_numpy(np.random.default_rng(seed).integers(0, rows, ids_shape))
        fam.check((rows, width, ids_shape, dtype), lambda t, i: torch.nn.functional.embedding(i, t), [table, ids])

    run()
    fam.finish()


# endregion
