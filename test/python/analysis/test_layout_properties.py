"""Property test of data movement through stick layouts: hypothesis draws a tensor
(ranks 1-4, dims at and around the 64-lane stick boundaries), a chain of 1-3 views (permute,
transpose, slice with a step, select, expand, reshape/unsqueeze/squeeze/flatten), an exact
pointwise op after it and, where the result has rank >= 2, a matmul; dtypes f16 and f32.

The criterion:

  * the moved tensor is bit-exact. Its values are drawn from a set DL16, fp16 and fp32 all
    hold exactly (integers of magnitude <= 1000 scaled by 2^-j, j <= 3: at most 10 significant
    bits, DL16 keeps 1 + 9 fraction bits; docs/numerics.md), and the pointwise op is exact on
    them (x * 2, -x, relu, x + 0; no value overflows), so any difference from eager PyTorch -
    bit for bit, signed zeros included - is data put in the wrong place (layout arithmetic,
    propagate-layouts, lowering, DMA strides, transfers);
  * the matmul of the moved tensor with a normal-valued matrix is within the DL16 error bound
    `reference/evaluate.py` propagates (spyre_mlir.testing.criteria, docs/numerics.md), and
    across the run some f32 product shows DL16 rounding (a silent fp32 path would fail);
  * every op of the chain runs on the device (`GraphReport.cpu_fallback` is empty), except the
    classes in `excused` below, which the device has no relayout for yet; an excused example
    may fall back only in the ops of its excused class (its values are still checked).

Each example compiles its graph once (dynamic=False; a repeated chain reuses it). PROPS_N
sets the number of examples, PROPS_NOSHRINK=1 skips shrinking, and PROPS_COLLECT=file logs
every failing example there and goes on (local triage).
"""

from __future__ import annotations

import math
import os
from collections import Counter
from typing import Any

import numpy as np
import pytest
import torch
from helpers import assert_device_result, compile_captured
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from spyre_mlir.reference.evaluate import evaluate
from spyre_mlir.sim.numerics import DL16
from spyre_mlir.testing.hypothesis import example_count

pytestmark = pytest.mark.slow  # hundreds of compiled examples: make test, not make quick

DIMS = (1, 2, 63, 64, 65, 100, 127, 128, 150, 257)
MAX_ELEMENTS = 2**15
MAX_STICKS = 2**10
"""Caps on every tensor of the chain (input, expanded, result), in elements and in 64-lane
sticks (a last dim of 1 takes a stick per element), so that CI stays fast."""
MAX_MATMUL = 2**21
"""Cap on the matmul's multiply-adds (M K N)."""
EXAMPLES = int(os.environ.get("PROPS_N", example_count(300, 60)))
STEPS = (1, 1, 2, 3, 5)
STARTS = (0, 1, 2, 63, 64, 65, 128)

# region Views


def _prod(shape: tuple[int, ...]) -> int:
    return math.prod(shape)


def _fits(shape: tuple[int, ...]) -> bool:
    sticks = _prod(shape[:-1]) * -(-shape[-1] // 64) if shape else 1
    return 0 < _prod(shape) <= MAX_ELEMENTS and sticks <= MAX_STICKS


@st.composite
def views(draw: Any, shape: tuple[int, ...]) -> tuple[tuple, tuple[int, ...]]:
    """One view applicable to `shape` (rank stays 1-4), and the shape it gives."""
    rank = len(shape)
    kinds = ["slice", "reshape"]
    if rank >= 2:
        kinds += ["permute", "transpose", "select"]
    if rank < 4 or 1 in shape:
        kinds.append("expand")
    kind = draw(st.sampled_from(kinds))
    if kind == "permute":
        perm = tuple(draw(st.permutations(range(rank))))
        return ("permute", perm), tuple(shape[p] for p in perm)
    if kind == "transpose":
        a, b = draw(st.integers(0, rank - 1)), draw(st.integers(0, rank - 1))
        s = list(shape)
        s[a], s[b] = s[b], s[a]
        return ("transpose", a, b), tuple(s)
    if kind == "slice":
        d = draw(st.integers(0, rank - 1))
        n = shape[d]
        start = draw(st.sampled_from([s for s in STARTS if s < n]))
        stop = draw(st.sampled_from(sorted({n, max(start + 1, n - 1), min(n, start + 64), min(n, start + 65)})))
        step = draw(st.sampled_from(STEPS))
        s = list(shape)
        s[d] = len(range(start, stop, step))
        return ("slice", d, start, stop, step), tuple(s)
    if kind == "select":
        d = draw(st.integers(0, rank - 1))
        i = draw(st.sampled_from(sorted({0, shape[d] - 1, shape[d] // 2})))
        return ("select", d, i), shape[:d] + shape[d + 1 :]
    if kind == "expand":
        ones = [i for i, n in enumerate(shape) if n == 1]
        if ones and (rank == 4 or draw(st.booleans())):
            d = draw(st.sampled_from(ones))
            base = shape
        else:  # a new dim of extent 1 first (unsqueeze), then expanded
            d = draw(st.integers(0, rank))
            base = shape[:d] + (1,) + shape[d:]
        size = draw(st.sampled_from([n for n in DIMS if _fits(base[:d] + (n,) + base[d + 1 :])] or [1]))
        new = base[:d] + (size,) + base[d + 1 :]
        return ("expand", new, base), new
    # reshapes: merge two adjacent dims, split one, unsqueeze, squeeze, flatten
    forms = ["flatten"]
    if rank >= 2:
        forms.append("merge")
    if rank < 4:
        forms += ["split", "unsqueeze"]
    if rank >= 2 and 1 in shape:
        forms.append("squeeze")
    form = draw(st.sampled_from(forms))
    if form == "flatten":
        new = (_prod(shape),)
    elif form == "merge":
        d = draw(st.integers(0, rank - 2))
        new = shape[:d] + (shape[d] * shape[d + 1],) + shape[d + 2 :]
    elif form == "split":
        d = draw(st.integers(0, rank - 1))
        divisors = [a for a in range(1, shape[d] + 1) if shape[d] % a == 0]
        a = draw(st.sampled_from(divisors))
        new = shape[:d] + (a, shape[d] // a) + shape[d + 1 :]
    elif form == "unsqueeze":
        d = draw(st.integers(0, rank))
        new = shape[:d] + (1,) + shape[d:]
    else:
        d = draw(st.sampled_from([i for i, n in enumerate(shape) if n == 1]))
        new = shape[:d] + shape[d + 1 :]
    return ("reshape", new), new


def apply_view(x: torch.Tensor, v: tuple) -> torch.Tensor:
    kind = v[0]
    if kind == "permute":
        return x.permute(*v[1])
    if kind == "transpose":
        return x.transpose(v[1], v[2])
    if kind == "slice":
        _, d, start, stop, step = v
        return x[(slice(None),) * d + (slice(start, stop, step),)]
    if kind == "select":
        return x.select(v[1], v[2])
    if kind == "expand":
        _, new, base = v
        return x.reshape(base).expand(*new)
    return x.reshape(v[1])


# endregion
# region The excused classes


def excused(shape: tuple[int, ...], chain: tuple[tuple, ...]) -> set[str]:
    """Torch ops of the chain that may run on the CPU, by class; everything else must run on
    the device. Each class is a relayout the device does not have yet:

      * a reshape that moves elements to other lanes (`_reshape_moves_lanes`);
      * a slice or select along the stick (last) dim that changes the elements' lanes (a step,
        a start off a stick boundary, a select in a rank >= 2 tensor), when every other dim is
        1: the device transposes the stick dim with another dim of extent > 1 to take such
        rows, and there is none.

    A slice of one element of the stick dim off a stick boundary is excused too (below). A
    pointwise op on a `(..., 1)` tensor whose elements sit along the sticks of another dim runs
    on the device: the lane scatter puts each element in a stick of its own."""
    allowed: set[str] = set()
    for v in chain:
        last = len(shape) - 1
        alone = all(n == 1 for n in shape[:-1])  # no other dim to transpose the stick dim with
        if v[0] == "slice":
            _, d, start, stop, step = v
            shifts = (
                d == last and shape[last] > 1 and ((step != 1 and len(range(start, stop, step)) > 1) or start % LANES)
            )
            if shifts and (alone or len(range(start, stop, step)) == 1):
                # (one element off a stick boundary: taken between two transposes, which the
                # device has for most layouts but not yet where the new stick dim's digits
                # cross a 64-block, e.g. a (2, 63, 2) host tensor viewed as (126, 2))
                allowed.add("torch.aten.slice.Tensor")
        elif v[0] == "select":
            if v[1] == last and alone and shape[last] > 1 and (last > 0 or v[2] % LANES):
                allowed.add("torch.aten.select.int")  # likewise (one element: lane 0 of its stick)
        elif v[0] == "expand":
            if _reshape_moves_lanes(shape, v[2]):
                allowed |= RESHAPES
        elif v[0] == "reshape" and _reshape_moves_lanes(shape, v[1]):
            allowed |= RESHAPES
        shape = _after(shape, v)
    return allowed


LANES = 64
"""Elements of one stick on the device (DL16: 2 bytes each)."""

RESHAPES = {"torch.aten.view", "torch.aten._unsafe_view", "torch.aten.reshape"}


def _reshape_moves_lanes(old: tuple[int, ...], new: tuple[int, ...]) -> bool:
    """A reshape is a free view of the stick layout (element i of a row in lane i % 64 of
    stick i // 64, rows padded to whole sticks) iff the last dim keeps its extent or both last
    dims are whole sticks; otherwise elements change lanes or cross the padding, and the device
    has no relayout for that yet."""
    a, b = (old or (1,))[-1], (new or (1,))[-1]
    return a != b and not (a % LANES == 0 and b % LANES == 0)


def _intermediates(shape: tuple[int, ...], v: tuple) -> list[tuple[int, ...]]:
    """Shapes a view passes through (the unsqueezed base of an expand)."""
    return [v[2]] if v[0] == "expand" else []


def _after(shape: tuple[int, ...], v: tuple) -> tuple[int, ...]:
    return tuple(apply_view(torch.empty(shape, device="meta"), v).shape)


# endregion
# region Compiling


POINTWISE = {
    "mul2": lambda y: y * 2.0,
    "neg": lambda y: -y,
    "relu": torch.relu,
    "add0": lambda y: y + 0.0,
}

_CACHE: dict[Any, Any] = {}


def compile_chain(key: Any, fn: Any, inputs: list[torch.Tensor]) -> tuple[Any, Any, Any, Counter]:
    """Compile `fn` as the spyre backend does; (callable, torch-level module, ctx, cpu fallbacks)."""
    if key in _CACHE:
        return _CACHE[key]
    c = compile_captured(fn, inputs)
    assert c.order == list(range(len(inputs))), "graph inputs reordered"
    assert c.report is not None, f"{key}: the whole graph fell back to the CPU"
    found = _CACHE[key] = (c.fn, c.module, c.ctx, c.report.cpu_fallback)
    return found


# endregion
# region The property


def exact_values(rng: np.random.Generator, shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
    """Integers in [-1000, 1000] scaled by 2^-j (j in 0..3): exact in DL16, fp16 and fp32."""
    k = rng.integers(-1000, 1001, shape).astype(np.float64)
    j = rng.integers(0, 4, shape)
    return torch.from_numpy((k / 2.0**j).astype(np.float32)).to(dtype)


def bits(y: torch.Tensor) -> torch.Tensor:
    return y.contiguous().view(torch.int16 if y.dtype == torch.float16 else torch.int32)


STATS_RUN: Counter = Counter()


@st.composite
def examples(draw: Any) -> dict[str, Any]:
    rank = draw(st.integers(1, 4))
    shape: tuple[int, ...] = (draw(st.sampled_from(DIMS)),)
    for _ in range(rank - 1):  # leading dims, within the caps
        shape = (draw(st.sampled_from([n for n in DIMS if _fits((n, *shape))] or [1])), *shape)
    chain: list[tuple] = []
    cur = shape
    want = draw(st.integers(1, 3))
    for _ in range(4 * want):  # views that leave the caps are drawn again
        v, new = draw(views(cur))
        if not _fits(new) or any(not _fits(s) for s in _intermediates(cur, v)):
            continue
        chain.append(v)
        cur = new
        if len(chain) == want:
            break
    if not chain:  # (rare) a free view, so that every example moves data
        chain.append(("slice", 0, 0, cur[0], 1))
    op = draw(st.sampled_from(sorted(POINTWISE)))
    n = draw(st.sampled_from((1, 64, 65)))
    mm = len(cur) >= 2 and _prod(cur) * n <= MAX_MATMUL and _fits((*cur[:-1], n))
    dtype = draw(st.sampled_from((torch.float32, torch.float16)))
    seed = draw(st.integers(0, 2**32 - 1))
    return dict(shape=shape, chain=tuple(chain), result=cur, op=op, n=n if mm else None, dtype=dtype, seed=seed)


@settings(
    max_examples=EXAMPLES,
    phases=[Phase.explicit, Phase.generate] if os.environ.get("PROPS_NOSHRINK") else list(Phase),
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(examples())
# examples the property has failed on (each compiled wrong or fell back to the CPU unhandled)
@example(
    ex=dict(
        shape=(2, 3, 5, 1),
        chain=(("permute", (0, 1, 2, 3)),),
        result=(2, 3, 5, 1),
        op="add0",
        n=1,
        dtype=torch.float32,
        seed=0,
    )
)
@example(
    ex=dict(
        shape=(4, 130),
        chain=(("transpose", 0, 1), ("slice", 0, 1, 130, 1)),
        result=(129, 4),
        op="mul2",
        n=None,
        dtype=torch.float16,
        seed=1,
    )
)
@example(
    ex=dict(
        shape=(5, 100), chain=(("slice", 0, 1, 5, 2),), result=(2, 100), op="neg", n=64, dtype=torch.float32, seed=2
    )
)
@example(
    ex=dict(
        shape=(3, 100, 130),
        chain=(("slice", 2, 1, 129, 3),),
        result=(3, 100, 43),
        op="relu",
        n=None,
        dtype=torch.float16,
        seed=3,
    )
)
@example(
    ex=dict(shape=(4, 65, 100), chain=(("select", 2, 0),), result=(4, 65), op="mul2", n=65, dtype=torch.float32, seed=4)
)
@example(
    ex=dict(shape=(2, 2), chain=(("slice", 1, 1, 2, 1),), result=(2, 1), op="add0", n=1, dtype=torch.float32, seed=6)
)
@example(
    ex=dict(
        shape=(3, 1, 100),
        chain=(("slice", 0, 0, 2, 1), ("permute", (0, 2, 1))),
        result=(2, 100, 1),
        op="mul2",
        n=1,
        dtype=torch.float16,
        seed=7,
    )
)
@example(
    ex=dict(
        shape=(3, 5, 100),
        chain=(("permute", (1, 0, 2)), ("slice", 2, 64, 65, 1), ("expand", (5, 3, 128), (5, 3, 1))),
        result=(5, 3, 128),
        op="neg",
        n=64,
        dtype=torch.float16,
        seed=5,
    )
)
def test_views_move_data_exactly(ex: dict[str, Any]) -> None:
    if os.environ.get("PROPS_COLLECT"):  # local triage: log every failing example, keep going
        try:
            check(ex)
        except Exception as e:
            with open(os.environ["PROPS_COLLECT"], "a") as f:
                f.write(f"{ex!r}\n    {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}\n")
        return
    check(ex)


def check(ex: dict[str, Any]) -> None:
    shape, chain, op, n, dtype = ex["shape"], ex["chain"], ex["op"], ex["n"], ex["dtype"]
    rng = np.random.default_rng(ex["seed"])
    x = exact_values(rng, shape, dtype)
    inputs = [x]
    if n is not None:
        k = ex["result"][-1]
        inputs.append(torch.from_numpy(rng.standard_normal((k, n)).astype(np.float32)).to(dtype))

    def fn(x: torch.Tensor, *w: torch.Tensor) -> tuple[torch.Tensor, ...]:
        y = x
        for v in chain:
            y = apply_view(y, v)
        z = POINTWISE[op](y)
        return (z, z @ w[0]) if w else (z,)

    key = (shape, chain, op, n, dtype)
    run, module, ctx, fallback = compile_chain(key, fn, inputs)
    where = f"{dtype} {shape} -> {' -> '.join(map(str, chain))} -> {op}" + (
        f" @ ({ex['result'][-1]}, {n})" if n else ""
    )
    allowed = excused(shape, chain)
    assert set(fallback) <= allowed, (
        f"{where}: ran on the CPU: {dict(fallback)} (excused here: {sorted(allowed) or 'none'})"
    )
    STATS_RUN["examples"] += 1
    STATS_RUN["fallback" if fallback else "device"] += 1
    for name in fallback:
        STATS_RUN[f"cpu:{name}"] += 1
    for v in chain:
        STATS_RUN[v[0]] += 1
    STATS_RUN[f"rank{len(shape)}"] += 1
    STATS_RUN[f"chain{len(chain)}"] += 1
    with torch.no_grad():
        outs = run(*inputs)
        eager = fn(*inputs)
    z, ez = outs[0], eager[0]
    assert z.dtype == ez.dtype and z.shape == ez.shape, (
        f"{where}: {z.dtype}{list(z.shape)} vs eager {ez.dtype}{list(ez.shape)}"
    )
    if not torch.equal(bits(z), bits(ez)):
        bad = (bits(z) != bits(ez)).nonzero()
        i = tuple(bad[0].tolist())
        raise AssertionError(
            f"{where}: {len(bad)} element(s) moved wrong; first at {i}: device {z[i].item()!r}, eager {ez[i].item()!r}"
        )
    if n is not None:
        host = [t.detach().to(torch.float64).numpy() for t in inputs]
        exact, bound = evaluate(module, host, DL16, ctx)
        r = assert_device_result(outs[1], exact[1], bound[1], f"{where} (matmul)")
        if dtype == torch.float32:
            STATS_RUN["worst_rounding"] = max(STATS_RUN["worst_rounding"], r)
        STATS_RUN["matmul"] += 1


def test_zz_enough_examples_ran() -> None:
    """The property ran its examples, with matmuls, and DL16 rounding showed in some product."""
    if not STATS_RUN["examples"]:
        return  # the property was deselected
    print(dict(STATS_RUN))
    assert STATS_RUN["examples"] >= EXAMPLES, STATS_RUN
    assert STATS_RUN["matmul"] >= EXAMPLES // 5, STATS_RUN
    assert STATS_RUN["worst_rounding"] > DL16.unit_roundoff / 8, STATS_RUN


# endregion
