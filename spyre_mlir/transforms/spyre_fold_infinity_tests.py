"""`spyre-fold-infinity-tests`: host tests of device values against infinity, answered.

DL16 has no infinity: a store saturates at +-8.57e9 (sim/numerics.py). So on a target with
`numerics = "dl16"` (the module's `spyre.target`; the default), a value brought back from the
device (`spyre.from_device`) never equals +-inf, and the host ops that test it for that have
a known answer, everywhere:

    eq.Scalar(from_device(d), +-inf)              -> all false
    ne.Scalar(from_device(d), +-inf)              -> all true
    logical_not(v)                                -> the other answer
    any.dim(v, dim, keepdim), all.dim(...)        -> v's answer (when `dim` is not empty)
    spyre.pointwise(m, a, b) { select(m != 0, a, b) }, m = to_device(v) with v's answer known
                                                  -> a (all true) or b (all false), when that
                                                     input has the result's type

Ops left without users by a fold (the tests, the transfers that fed only them, a
`full_like` that only shaped an unused operand) are erased. This is torch's `_safe_softmax`
decomposition in attention, where(all(x == -inf, -1), 0, softmax(x)): with DL16, softmax(x)
itself, without bringing x and the softmax back to the host, testing them there, sending a
mask and zeros and launching a select, every layer. The result is what the unfolded module
computes under DL16, bit for bit.

A module in which something was folded records the assumption, `spyre.numerics = "dl16"`, and
the runtime refuses to run it with another numerics mode (runtime/host.py). On a target with
`numerics = "ieee-fp16"`, which has infinities, the pass changes nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp, StringAttr, UnrealizedConversionCastOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from spyre_mlir.dialects import spyre
from spyre_mlir.dialects import torch as t

_ERASABLE_TORCH = {
    "torch.aten.eq.Scalar",
    "torch.aten.ne.Scalar",
    "torch.aten.logical_not",
    "torch.aten.any.dim",
    "torch.aten.all.dim",
    "torch.aten.full_like",
    "torch.aten.zeros_like",
}
"""Value-semantics torch ops a fold may leave without users (erased then)."""


def _through_casts(v: SSAValue) -> SSAValue:
    while isinstance(v.owner, UnrealizedConversionCastOp) and len(v.owner.inputs) == 1:
        v = v.owner.inputs[0]
    return v


def _answer(v: SSAValue) -> bool | None:
    """True (False) when every element of the boolean `v` is known to be true (false)
    with DL16 numerics; else None."""
    v = _through_casts(v)
    op = v.owner
    if not isinstance(op, Operation):
        return None
    if op.name in ("torch.aten.eq.Scalar", "torch.aten.ne.Scalar") and len(op.operands) == 2:
        other = t.constant_float_value(op.operands[1])
        if other is None or not math.isinf(other):
            return None
        if not isinstance(_through_casts(op.operands[0]).owner, spyre.FromDeviceOp):
            return None
        return op.name == "torch.aten.ne.Scalar"
    if op.name == "torch.aten.logical_not" and len(op.operands) == 1:
        inner = _answer(op.operands[0])
        return None if inner is None else not inner
    if op.name in ("torch.aten.any.dim", "torch.aten.all.dim") and len(op.operands) == 3:
        src, dim = op.operands[0], t.constant_int_value(op.operands[1])
        typ = src.type
        if dim is None or not isinstance(typ, t.ValueTensorType) or not typ.has_sizes:
            return None
        shape = typ.get_shape()
        if not -len(shape) <= dim < len(shape) or shape[dim] <= 0:  # any/all of nothing: another answer
            return None
        return _answer(src)
    return None


def _select_operands(op: spyre.PointwiseOp) -> tuple[int, int, int] | None:
    """(mask, if-true, if-false) input positions when the body is exactly
    `select(mask != 0, a, b)`; else None. (The verifier makes every `arith.cmpf` of a body
    a test against 0.0, `one` or `une`, feeding a select: the same for a mask of 0.0 / 1.0.)"""
    ops = list(op.body.block.ops)
    args: list[SSAValue] = list(op.body.block.args)
    if len(ops) != 4:
        return None
    _, cmp, sel, out = ops
    if not (
        isinstance(cmp, arith.CmpfOp)
        and isinstance(sel, arith.SelectOp)
        and list(out.operands) == [sel.result]
        and all(v in args for v in (cmp.operands[0], sel.operands[1], sel.operands[2]))
    ):
        return None
    return args.index(cmp.operands[0]), args.index(sel.operands[1]), args.index(sel.operands[2])


def _erase_unused(values: list[SSAValue]) -> None:
    """Erase the owners of `values` that have no users left and may go (transfers, casts,
    the tests above), and so on up their operands."""
    work = list(values)
    while work:
        v = work.pop()
        op = v.owner
        if not isinstance(op, Operation) or op.parent is None or any(r.uses for r in op.results):
            continue
        if not (
            isinstance(op, spyre.ToDeviceOp | spyre.FromDeviceOp | UnrealizedConversionCastOp)
            or op.name in _ERASABLE_TORCH
        ):
            continue
        operands = list(op.operands)
        Rewriter.erase_op(op)
        work.extend(operands)


@dataclass(frozen=True)
class SpyreFoldInfinityTestsPass(ModulePass):
    """Fold the host's infinity tests of device values (module docstring)."""

    name = "spyre-fold-infinity-tests"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if spyre.module_target(op).numerics != "dl16":  # only DL16 has no infinity to test for
            return
        folded = False
        for pw in [o for o in op.walk() if isinstance(o, spyre.PointwiseOp)]:
            where = _select_operands(pw)
            if where is None:
                continue
            mask, if_true, if_false = where
            m = pw.inputs[mask]
            if not isinstance(m.owner, spyre.ToDeviceOp):
                continue
            answer = _answer(m.owner.input)
            if answer is None:
                continue
            kept = pw.inputs[if_true if answer else if_false]
            if kept.type != pw.result.type:
                continue
            inputs = list(pw.inputs)
            pw.result.replace_all_uses_with(kept)
            Rewriter.erase_op(pw)
            _erase_unused(inputs)
            folded = True
        if folded:
            op.attributes[spyre.NUMERICS_ATTR] = StringAttr("dl16")
