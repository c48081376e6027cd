"""How the passes keep `#spyre.origin` (dialects/spyre/origin.py): the ops a rewrite makes
take the origin of what it replaces.

    carrying(module, patterns)   the patterns as one, each rewrite of an op X giving the ops it
                                 inserts (those that need one) the origin
                                     ops    = X's ops + the ops of every op the rewrite erased
                                     values = per result, the torch value of the result it
                                              replaced (through casts), else -1; all -1 for
                                              rewrites equivalent only as a whole (values=False)
                                 (the patterns unchanged when the module is not numbered)
    relayout_origin(r, reader)   a restickify holds its input's value in another layout
    pointwise_origin(op, parts)  an op doing what `parts` did: all their ops -> the last's values
    part_origin(op, of)          an op doing part of `of`'s work: of's ops -> no value
    kernel_origins(module)       every kernel's origin from its body
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ModuleOp, UnrealizedConversionCastOp
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from spyre_mlir.dialects import spyre
from spyre_mlir.dialects.spyre.origin import COMPUTE_OPS, is_torch_compute


def _needs(op: Operation) -> bool:
    return op.name in COMPUTE_OPS or is_torch_compute(op)


class CarryOrigins(RewritePattern):
    """`inner` whose rewrites give the ops they insert the origin of what they replace."""

    def __init__(self, inner: RewritePattern, values: bool = True):
        self.inner = inner
        self.values = values
        """Whether a result that replaces another holds its value: a lowering's does; a rewrite
        equivalent only where its ops meet (torch-adapt moving a scaling from one operand of a
        product to the other) makes no such claim."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        inserted: list[Operation] = []
        erased: set[int] = set()
        values: dict[SSAValue, int] = {}

        def on_insert(new: Operation) -> None:
            inserted.append(new)

        def on_remove(old: Operation) -> None:
            origin = spyre.origin_of(old)
            if origin is not None:
                erased.update(origin.op_ids)

        def on_replace(old: Operation, new_results: Sequence[SSAValue | None]) -> None:
            for r, v in zip(old.results, new_results):
                while v is not None and isinstance(v.owner, UnrealizedConversionCastOp) and v.owner in inserted:
                    v = v.owner.inputs[0]
                if v is not None:
                    values[v] = spyre.value_of(r)

        handlers = (
            (rewriter.operation_insertion_handler, on_insert),
            (rewriter.operation_removal_handler, on_remove),
            (rewriter.operation_replacement_handler, on_replace),
        )
        for handler_list, fn in handlers:
            handler_list.append(fn)  # type: ignore[arg-type]
        try:
            self.inner.match_and_rewrite(op, rewriter)
        finally:
            for handler_list, fn in handlers:
                handler_list.remove(fn)  # type: ignore[arg-type]
        if not inserted:
            return
        own = spyre.origin_of(op)
        base = erased | set(own.op_ids if own is not None else ())
        for new in inserted:
            if spyre.origin_of(new) is not None or not _needs(new):
                continue
            if isinstance(new, spyre.RestickifyOp):
                relayout_origin(new, op)
                continue
            held = [values.get(r, -1) if self.values else -1 for r in new.results]
            spyre.set_origin(new, spyre.OriginAttr(base | {v for v in held if v >= 0}, held))


def carrying(module: ModuleOp, pattern: RewritePattern, values: bool = True) -> RewritePattern:
    """`pattern`, carrying origins when the module's torch ops are numbered (`values`:
    CarryOrigins.values)."""
    return CarryOrigins(pattern, values) if spyre.numbered(module) is not None else pattern


def relayout_origin(r: Operation, reader: Operation | None = None) -> None:
    """A relayout (spyre.restickify) holds its input's value: ops = the op of that value (the
    reader's ops when the value is no torch op's), values = [that value]. Nothing in a module
    that is not numbered."""
    held = spyre.value_of(r.operands[0])
    base = spyre.origin_of(reader) if reader is not None else None
    if held < 0 and base is None:
        return
    spyre.set_origin(r, spyre.OriginAttr({held} if held >= 0 else set(base.op_ids if base else ()), [held]))


def pointwise_origin(op: Operation, parts: Sequence[Operation]) -> None:
    """`op` computes what `parts` did (the last part's result is its result): their ops, the
    last one's values."""
    origins = [spyre.origin_of(p) for p in parts]
    if all(o is None for o in origins):
        return
    ops = {i for o in origins if o is not None for i in o.op_ids}
    last = origins[-1]
    held = list(last.value_ids) if last is not None else [-1] * len(op.results)
    spyre.set_origin(op, spyre.OriginAttr(ops, held))


def part_origin(op: Operation, of: Operation) -> None:
    """`op` does part of `of`'s work and holds no torch value: `of`'s ops -> -1 per result."""
    origin = spyre.origin_of(of)
    if origin is not None:
        spyre.set_origin(op, spyre.OriginAttr(origin.op_ids, [-1] * len(op.results)))


def kernel_origins(module: ModuleOp) -> None:
    """Every kernel's origin from its body (spyre.kernel_body_origin), where its body has one."""
    for kernel in module.walk():
        if isinstance(kernel, spyre.KernelOp):
            origin = spyre.kernel_body_origin(kernel)
            if origin is not None:
                kernel.origin = origin
