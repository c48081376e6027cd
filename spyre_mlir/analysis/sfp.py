"""The SFP program of a pointwise body: the vector instructions, in order, that compute it on
one chunk's tiles (its input tiles, f32 temporaries and the f16 output tile), and how many
temporaries they need (spyre-plan-scratchpad sizes them; convert-spyre-to-isa emits the
steps)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.ir import SSAValue

from spyre_mlir.dialects import spyre


@dataclass(frozen=True)
class SfpStep:
    """One SFP instruction of a pointwise body: dst = fn(srcs...) (an f32 immediate may stand
    for the second source). Locations: ("in", i) input tile, ("t", j) f32 temporary,
    ("out", 0) the f16 output tile."""

    fn: str
    dst: tuple[str, int]
    srcs: tuple[tuple[str, int], ...]
    imm: float | None = None


_COMMUTATIVE = frozenset({"add", "mul", "max", "min"})


def pointwise_program(op: spyre.PointwiseOp) -> tuple[list[SfpStep], int]:
    """The SFP steps of a pointwise body and the number of f32 temporaries they need.

    Constants become immediates; a temporary is reused once its value is dead; the yielded
    value is written straight to the output tile when nothing else reads it."""
    block = op.body.block
    loc: dict = {a: ("in", i) for i, a in enumerate(block.args)}
    consts: dict = {}
    terminator = block.last_op
    assert isinstance(terminator, spyre.YieldOp), "spyre.pointwise's verifier requires the yield"
    yielded = terminator.values[0]
    ops = [o for o in block.ops if not isinstance(o, spyre.YieldOp)]
    last_use: dict = {}
    for idx, o in enumerate(ops):
        for v in o.operands:
            last_use[v] = idx
        if o.name == "arith.select":  # the mask is read by the select, through its cmpf
            last_use[o.operands[0].owner.operands[0]] = idx
    free: list[int] = []
    n_temps = 0
    steps: list[SfpStep] = []

    def place(result: SSAValue, srcs: list, idx: int) -> tuple[str, int]:
        """Where op `idx`'s result goes: operands dying here free their temporaries (in-place
        reuse); the yielded value read by nothing else goes straight to the output tile."""
        nonlocal n_temps
        for v in srcs:
            if last_use.get(v) == idx and loc[v][0] == "t" and loc[v][1] not in free:
                free.append(loc[v][1])
        if result is yielded and not any(u.operation is not block.last_op for u in result.uses):
            dst = ("out", 0)
        else:
            if free:
                j = free.pop(0)
            else:
                j, n_temps = n_temps, n_temps + 1
            dst = ("t", j)
        loc[result] = dst
        return dst

    for idx, o in enumerate(ops):
        fn = spyre.POINTWISE_BODY_OPS[o.name]
        if fn == "cmp":  # folded into the select that reads it: (mask != 0)
            continue
        if fn == "select":
            mask = o.operands[0].owner.operands[0]
            srcs3 = [mask, o.operands[1], o.operands[2]]
            if any(v in consts for v in srcs3):
                raise ValueError("a select on constants has no SFP form")
            dst = place(o.results[0], srcs3, idx)
            steps.append(SfpStep("select", dst, tuple(loc[v] for v in srcs3)))
            continue
        if fn == "constant":
            assert isinstance(o, arith.ConstantOp) and isinstance(o.value, FloatAttr | IntegerAttr)
            consts[o.result] = float(o.value.value.data)
            continue
        srcs = list(o.operands)
        imm = None
        if len(srcs) == 2 and srcs[0] in consts and srcs[1] in consts:
            consts[o.results[0]] = _fold(fn, consts[srcs[0]], consts[srcs[1]])
            continue
        pre: SfpStep | None = None
        if len(srcs) == 2 and srcs[0] in consts and fn not in _COMMUTATIVE:
            # c - x = (-x) + c;  c / x = recip(x) * c
            if fn not in ("sub", "div"):
                raise ValueError(f"'{o.name}' with a constant first operand has no SFP form")
            pre_fn, fn = ("neg", "add") if fn == "sub" else ("recip", "mul")
            pre = SfpStep(pre_fn, ("pre", 0), (loc[srcs[1]],))
            c = consts[srcs[0]]
            srcs = [srcs[1]]
            imm = c
        elif len(srcs) == 2 and any(s in consts for s in srcs):
            if srcs[0] in consts:
                srcs = [srcs[1], srcs[0]]
            imm = consts[srcs[1]]
            srcs = srcs[:1]
        dst = place(o.results[0], srcs, idx)
        if pre is not None:  # the one-operand step runs in place in the destination
            steps.append(SfpStep(pre.fn, dst, pre.srcs))
            if imm == 1.0 and fn == "mul":
                continue
            steps.append(SfpStep(fn, dst, (dst,), imm))
            continue
        steps.append(SfpStep(fn, dst, tuple(loc[s] for s in srcs), imm))
    if loc.get(yielded, None) != ("out", 0):
        if yielded in consts:
            raise ValueError("a pointwise body yielding a constant has no SFP form")
        steps.append(SfpStep("copy", ("out", 0), (loc[yielded],)))
    return steps, n_temps


def _fold(fn: str, a: float, b: float) -> float:
    return {
        "add": a + b,
        "sub": a - b,
        "mul": a * b,
        "div": a / b if b else math.copysign(math.inf, a) if a else math.nan,
        "max": max(a, b),
        "min": min(a, b),
    }[fn]
