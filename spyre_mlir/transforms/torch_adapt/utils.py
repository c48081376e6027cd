"""What the adaptations share: building torch ops, reading constants, erasing what is dead, and
the op names of views and element moves."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TypeGuard

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from spyre_mlir.dialects import torch as t


def new_op(name: str, operands: Sequence[SSAValue], result_type: Attribute) -> Operation:
    return t.torch_op_class(name).create(operands=list(operands), result_types=[result_type])


def scalar_constant(v: SSAValue) -> float | None:
    """The number a 0-d constant tensor holds: `scalar_tensor(c)` with a constant c, or a 0-d
    (or one-element) dense literal; else None."""
    owner = v.owner
    if isinstance(owner, Operation) and owner.name == "torch.aten.scalar_tensor":
        return t.constant_float_value(owner.operands[0])
    if isinstance(owner, t.ValueTensorLiteralOp) and isinstance(owner.value, DenseIntOrFPElementsAttr):
        values = owner.value.get_values()
        if len(values) == 1 and isinstance(v.type, t.ValueTensorType) and v.type.has_sizes and not v.type.get_shape():
            return float(values[0])
    return None


def binary_with_scalar(v: SSAValue, kind: str) -> tuple[SSAValue, float] | None:
    """(x, c) when v = kind(x, c) with a constant number c (mul: either side; add: alpha 1)."""
    op = v.owner
    if not isinstance(op, Operation) or op.name not in (f"torch.aten.{kind}.Tensor", f"torch.aten.{kind}.Scalar"):
        return None
    if kind == "add" and t.constant_float_value(op.operands[2]) != 1.0:
        return None
    a, b = op.operands[0], op.operands[1]
    if (c := t.constant_float_value(b)) is not None:
        return a, c
    if kind == "mul" and (c := t.constant_float_value(a)) is not None:
        return b, c
    return None


def sized(x: Attribute) -> TypeGuard[t.ValueTensorType]:
    """A `!torch.vtensor` type of known rank."""
    return isinstance(x, t.ValueTensorType) and x.has_sizes


def is_close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-6)


def erase_dead(rewriter: PatternRewriter, ops: Sequence[Operation]) -> None:
    """Erase the ops of a matched chain that lost their last use (torch ops have no effects
    to keep; constants are left to the canonical clean-up)."""
    for op in ops:
        if op.parent is not None and all(not r.uses for r in op.results):
            rewriter.erase(op)


def int_list(values: Sequence[int]) -> tuple[list[Operation], SSAValue]:
    """The ops of a constant int list, and the list."""
    items = [t.ConstantIntOp(v) for v in values]
    lst = t.PrimListConstructOp([i.result for i in items], t.ListType(t.IntType()))
    return [*items, lst], lst.result


VIEWS = (t.AtenViewOp.name, t.AtenReshapeOp.name, t.AtenUnsafeViewOp.name)


LANE_MOVES = (t.AtenPermuteOp.name, t.AtenTransposeIntOp.name)
"""Views that move elements between lanes on the device."""


ELEMENT_MOVES = (*VIEWS, *LANE_MOVES, t.AtenCloneOp.name, "torch.aten.expand", "torch.aten.unsqueeze")
"""Ops that move or copy elements and compute none (a scaling commutes with them)."""
