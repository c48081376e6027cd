"""Element-wise ops moved before views, and views of views folded."""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from spyre_mlir.dialects import torch as t
from spyre_mlir.transforms.torch_adapt.utils import LANE_MOVES, VIEWS, erase_dead, new_op, sized


def _elementwise_below(v: SSAValue) -> bool:
    """Whether v is, through views read by nothing else, the result of an element-wise op
    (an op an element-wise reader could join: a pointwise chain, a matmul's epilogue)."""
    while isinstance(v.owner, Operation) and v.owner.name in (*VIEWS, *LANE_MOVES) and v.has_one_use():
        v = v.owner.operands[0]
    return (
        isinstance(v.owner, Operation)
        and v.owner.name in (*t.ELEMENTWISE_UNARY, *t.ELEMENTWISE_BINARY, *t.ELEMENTWISE_SCALAR)
        and v.has_one_use()
    )


class ElementwiseBeforeView(RewritePattern):
    """f(view(x, s)) -> view(f(x), s); g(view(a, s), view(b, s)) -> view(g(a, b), s) when a and
    b have one shape, and the view keeps the last dim (so it is a free view on the device:
    each element stays in its lane; a view that moves elements between lanes is left where
    a pointwise op can do the moving). The new view reuses the old one's size list. f may
    be x op c (SDPA's math form scales q and k so) when x is, through views read by nothing
    else, an element-wise op's result, which the scaling then joins; after a product (a
    bmm's scores) it stays with the ops that follow it (the mask's add, the softmax).

    permute(x, p) op c -> permute(x op c, p) (or a transpose) only when x is, through views
    read by nothing else, an element-wise op's result: the scaling then joins that op
    (a pointwise chain, a matmul's epilogue) instead of running as a kernel of its own, and
    the permute's relayout, if one is needed, stays one relayout. Activations stay after a
    permute: a pointwise kernel there does the moving, or reads its input from LX where
    spyre-onchip-relayout transposed it (pointwise -> transpose -> pointwise)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op.name in t.ELEMENTWISE_UNARY or op.name in t.ELEMENTWISE_SCALAR:
            arity = 1
        elif op.name in t.ELEMENTWISE_BINARY:
            arity = 2
        else:
            return
        if len(op.results) != 1:
            return
        views = [v.owner for v in op.operands[:arity]]
        if op.name in t.ELEMENTWISE_SCALAR and isinstance(views[0], Operation) and views[0].name in LANE_MOVES:
            view = views[0]
            if not view.results[0].has_one_use() or not _elementwise_below(view.operands[0]):
                return
            source = view.operands[0]
            src_type, out_type = source.type, op.results[0].type
            if not (sized(src_type) and sized(out_type)):
                return
            inner = new_op(
                op.name,
                [source, *op.operands[1:]],
                t.ValueTensorType(list(src_type.get_shape()), out_type.get_dtype()),
            )
            moved = new_op(view.name, [inner.results[0], *view.operands[1:]], op.results[0].type)
            rewriter.replace(op, [inner, moved], [moved.results[0]])
            erase_dead(rewriter, [view])
            return
        reshapes = [w for w in views if isinstance(w, Operation) and w.name in VIEWS]
        if len(reshapes) != len(views):
            return
        sources = [w.operands[0] for w in reshapes]
        if op.name in t.ELEMENTWISE_SCALAR and not _elementwise_below(sources[0]):
            return  # a scaling joins an element-wise producer only (after a product it stays with what follows)
        types = [x for x in (v.type for v in sources) if sized(x)]
        rt = op.results[0].type
        if len(types) != len(sources) or not sized(rt):
            return
        shape = types[0].get_shape()
        if any(x.get_shape() != shape for x in types) or any(w.results[0].type != rt for w in reshapes):
            return  # sources of different shapes, or a broadcast / dtype change at the op
        if not shape or not rt.get_shape() or shape[-1] != rt.get_shape()[-1]:
            return  # the view moves elements between lanes: left where the op can do the moving
        inner = new_op(op.name, [*sources, *op.operands[arity:]], t.ValueTensorType(list(shape), rt.get_dtype()))
        view = new_op(reshapes[0].name, [inner.results[0], reshapes[0].operands[1]], rt)
        rewriter.replace(op, [inner, view], [view.results[0]])
        erase_dead(rewriter, reshapes)


class ViewOfView(RewritePattern):
    """view(view(x, s1), s2) -> view(x, s2); view(x, s) of x's own shape -> x, for an x some op
    computes. (A Linear's activation moved before its view leaves the view back to 2-d
    reading the view to 3-d: the matmul's result then feeds the next matmul directly.)"""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op.name not in VIEWS or len(op.results) != 1:
            return
        inner = op.operands[0].owner
        if isinstance(inner, Operation) and inner.name in VIEWS:
            source = inner.operands[0]
            new = new_op(op.name, [source, op.operands[1]], op.results[0].type)
            rewriter.replace(op, [new], [new.results[0]])
            erase_dead(rewriter, [inner])
            return
        same = (
            op.operands[0].type == op.results[0].type
            and isinstance(op.results[0].type, t.ValueTensorType)
            and op.results[0].type.has_sizes
        )
        if same and isinstance(inner, Operation):  # (a graph input stays behind its view: no result aliases an input)
            rewriter.replace(op, [], [op.operands[0]])
