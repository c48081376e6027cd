"""Which kernels of a step's program are its attention (docs/vllm.md, "Device time"): for the
step's figures (`StepTime.attention_s`) and bench/serve.py's attention share.

The compiled step is one function of launches; its KV caches are the arguments it writes in
place (`spyre.aliasing_output`), its visibility numbers the float arguments of the step's
(tokens, pages) shape. A launch is attention's when it reads a KV cache (the cache writes,
the gathers of the pages), or when it reads what attention computed or the visibility numbers
and no weight: the keys' relayout, the bias, the scores, the softmax and the context. The
output projection reads a weight: the layer's linears, norms and rotary embedding are not
attention's.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType, UnrealizedConversionCastOp
from xdsl.ir import BlockArgument, SSAValue

from spyre_mlir.dialects import spyre, spyre_isa

_VIEWS = (spyre.PermuteOp, spyre.ReshapeOp, spyre.ToDeviceOp, UnrealizedConversionCastOp)


def _source(v: SSAValue) -> SSAValue:
    """The value `v` is a view, a cast or a transfer of (a launch's output, or an argument)."""
    while isinstance(v.owner, _VIEWS):
        v = v.owner.operands[0]
    return v


def attention_kernels(module: ModuleOp, step_shape: tuple[int, int]) -> frozenset[str]:
    """The names of the attention kernels of a step's program (module docstring), whose
    visibility arguments have shape `step_shape` (tokens, pages)."""
    fn = next(op for op in module.ops if isinstance(op, func.FuncOp))
    args = fn.body.block.args
    caches = set(spyre.aliased_arguments(fn))
    visibility = set()
    weights = set()
    for a in args:
        t = a.type
        if a.index in caches or not isinstance(t, TensorType):
            continue
        element = str(t.element_type)
        if not element.startswith(("f", "bf")):
            continue
        if tuple(t.get_shape()) == step_shape:
            visibility.add(a.index)
        else:
            weights.add(a.index)
    derived: set[SSAValue] = set()
    names: set[str] = set()
    for op in fn.body.block.ops:
        if not isinstance(op, spyre_isa.LaunchOp):
            continue
        sources = [_source(v) for v in op.inputs]
        argument = {s.index for s in sources if isinstance(s, BlockArgument)}
        if argument & caches or (
            (argument & visibility or any(s in derived for s in sources)) and not argument & weights
        ):
            names.add(op.kernel_name)
            derived.update(op.outputs)
    return frozenset(names)
