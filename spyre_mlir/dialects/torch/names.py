"""The `torch` ops by family, by name: the ops that make constants from shapes and numbers, the
dtype conversions, the element-wise families the lowering matches, and the ops that are pure
functions of their operands (`PURE_OPS`: their catch-all classes carry `Pure`).
"""

CREATION_OPS = frozenset(
    {
        "torch.aten.full",
        "torch.aten.full_like",
        "torch.aten.zeros",
        "torch.aten.zeros_like",
        "torch.aten.ones",
        "torch.aten.ones_like",
        "torch.aten.empty_like",
        "torch.aten.empty.memory_format",
        "torch.aten.scalar_tensor",
        "torch.aten.arange",
        "torch.aten.arange.start",
        "torch.aten.arange.start_step",
        "torch.aten.lift_fresh_copy",
        "torch.prim.NumToTensor.Scalar",
    }
)
"""Ops that make constants from shapes and numbers: the host builds them (the real stack
constant-folds them at compile time)."""

COLLECTIVES = frozenset(
    {
        "torch.vllm.all_reduce",
        "torch.vllm.all_gather",
        "torch.vllm.reduce_scatter",
    }
)
"""Collectives between cards in a traced graph (vLLM's custom ops of its tensor-parallel layers):
the host runs them through the process group of the calling process, between the device's
kernels (docs/vllm-scale.md, "Tensor parallel")."""

DTYPE_CONVERSIONS = frozenset({"torch.aten._to_copy", "torch.aten.to.dtype", "torch.prims.convert_element_type"})
"""Ops that only change a tensor's element type."""

ELEMENTWISE_UNARY: tuple[str, ...] = tuple(
    f"torch.aten.{name}"
    for name in (
        "relu",
        "neg",
        "abs",
        "exp",
        "log",
        "sqrt",
        "rsqrt",
        "tanh",
        "sin",
        "cos",
        "erf",
        "sigmoid",
        "reciprocal",
        "gelu",
    )
)
"""Element-wise ops of one tensor (gelu's other operand is its form, a string): each becomes a
spyre.pointwise of one input (convert-torch-to-spyre's LowerUnary; UNARY there gives the body)."""

ELEMENTWISE_BINARY: tuple[str, ...] = (
    *(f"torch.aten.{kind}.Tensor" for kind in ("add", "sub", "mul", "div")),
    "torch.aten.minimum",
    "torch.aten.maximum",
)
"""Element-wise ops of two tensors (add/sub's third operand is alpha): a spyre.pointwise of two
inputs (convert-torch-to-spyre's LowerBinary)."""

ELEMENTWISE_SCALAR: tuple[str, ...] = tuple(f"torch.aten.{kind}.Scalar" for kind in ("add", "sub", "mul", "div"))
"""Element-wise ops of one tensor and a number (add/sub/mul/div.Scalar): a spyre.pointwise of one
input with the number in its body (convert-torch-to-spyre's LowerBinary)."""

PURE_OPS = frozenset(
    {
        # with a device lowering (convert-torch-to-spyre's DEVICE_OPS without a dedicated class)
        *(
            f"torch.aten.{name}"
            for name in (
                "_log_softmax",
                "_softmax",
                "abs",
                "acos",
                "acosh",
                "addmv",
                "alias",
                "amax",
                "amin",
                "asin",
                "asinh",
                "atan",
                "atan2",
                "atanh",
                "cat",
                "clamp",
                "clamp.Tensor",
                "clamp_max",
                "clamp_max.Tensor",
                "clamp_min",
                "clamp_min.Tensor",
                "copysign.Scalar",
                "copysign.Tensor",
                "cos",
                "cosh",
                "div.Scalar",
                "div.Scalar_mode",
                "div.Tensor",
                "elu",
                "embedding",
                "erf",
                "exp",
                "exp2",
                "expand",
                "expm1",
                "flip",
                "floor_divide",
                "fmax",
                "fmin",
                "fmod.Scalar",
                "fmod.Tensor",
                "frac",
                "hardtanh",
                "hypot",
                "leaky_relu",
                "log",
                "log10",
                "log2",
                "logaddexp",
                "logaddexp2",
                "matmul",
                "max",
                "max.dim",
                "maximum",
                "mean",
                "mean.dim",
                "min",
                "minimum",
                "native_layer_norm",
                "neg",
                "pow.Scalar",
                "pow.Tensor_Scalar",
                "reciprocal",
                "remainder.Scalar",
                "remainder.Tensor",
                "round",
                "round.decimals",
                "rsqrt",
                "select.int",
                "sigmoid",
                "sin",
                "sinh",
                "slice.Tensor",
                "softshrink",
                "sqrt",
                "squeeze.dim",
                "squeeze.dims",
                "sum",
                "sum.dim_IntList",
                "tan",
                "tanh",
                "trunc",
                "unsqueeze",
                "var.correction",
                "var_mean.correction",
                "where.self",
            )
        ),
        # masks and indices (comparisons, logical and bitwise ops), on the host by design
        *(f"torch.aten.{cmp}.{kind}" for cmp in ("eq", "ne", "lt", "le", "gt", "ge") for kind in ("Scalar", "Tensor")),
        *(
            f"torch.aten.{name}"
            for name in (
                "logical_not",
                "logical_and",
                "logical_or",
                "any.dim",
                "bitwise_and.Tensor",
                "bitwise_or.Tensor",
                "bitwise_not",
                "argmax",
                "cumsum",
                "sign",
            )
        ),
        # constants from shapes and numbers (CREATION_OPS without the uninitialised empty*)
        *(CREATION_OPS - {"torch.aten.empty_like", "torch.aten.empty.memory_format"}),
        # other value-semantics ops of the op census (CPU fallback or host)
        *(
            f"torch.aten.{name}"
            for name in (
                "Int.bool",
                "_to_copy",
                "copy",
                "index.Tensor",
                "index_select",
                "index_put",
                "split_with_sizes",
                "gather",
                "repeat",
                "constant_pad_nd",
                "div.Tensor_mode",
                "ceil",
                "floor",
                "log1p",
                "pow.Tensor_Tensor",
                "sort",
                "topk",
                "histc",
                "convolution",
                "_native_batch_norm_legit_no_training",
                "native_group_norm",
                "linalg_vector_norm",
                "max_pool2d_with_indices",
            )
        ),
        "torch.prim.ListUnpack",
        "torch.prims.convert_element_type",
    }
)
"""The torch ops without a dedicated class that are pure functions of their operands: no
in-place or mutated operand, no random numbers (PyTorch's `nondeterministic_seeded` tag), no
uninitialised memory (`empty*`), no external state. Their catch-all classes carry `Pure`, like
the dedicated classes, so `cse` merges two with equal operands, attributes and result types,
and dead ones may be erased. A name not listed keeps unknown effects and is never merged or
erased; test/python/transforms/test_cse.py checks every name against PyTorch's schemas."""
