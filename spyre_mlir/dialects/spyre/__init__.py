"""The `spyre` dialect: value-semantics tensor programs on the Spyre device.

A device tensor is a builtin tensor whose encoding is a `#spyre.layout`: where each logical
element sits in the device's 128-byte sticks (see `spyre_mlir.layout` for the exact
meaning of `device_size` and `stride_map`). Host tensors carry no encoding. Device tensors
hold 16-bit floats, typed `f16`; the runtime's numerics mode decides their bits (DL16 by
default, IEEE fp16 on request).

    %d = spyre.to_device %x : tensor<100x256xf32> -> tensor<100x256xf16, #spyre.layout<...>>
    %c = spyre.matmul %a, %b : (...) -> tensor<100x512xf16, #spyre.layout<...>>
    %y = spyre.from_device %c : tensor<100x512xf16, #spyre.layout<...>> -> tensor<100x512xf32>

Views (`spyre.permute`, `spyre.reshape`) are free by construction: their result layout
describes the very same device bytes, and their verifiers insist on it. Data moves only in
`spyre.restickify` (same logical tensor, another layout) and in compute ops. After kernel
formation, `spyre.kernel` groups ops into one device program launch and carries its core
split and scratchpad plan.

    attrs        the layout, lists, split and LX plan, the kernel marks, device tensor types
    ops          transfers, compute, views and relayouts, spyre.yield
    kernel_form  what a kernel's compute ops may form (epilogue, row group, attention, ...)
    iteration    what a kernel's split and chunks mean: iteration dims, core and chunk boxes
    target       the device a module is compiled for: `#spyre.target`, the module's `spyre.target`
    kernel       spyre.kernel, its verifier, and a kernel's ops, dims and core boxes
    origin       #spyre.origin: which torch ops a device op computes, and the passes' contract

The package defines; lowering lives in `spyre_mlir.lowering`. Every public name is importable
from the package: `from spyre_mlir.dialects import spyre; spyre.MatmulOp`.
"""

from xdsl.ir import Dialect

from spyre_mlir.dialects.spyre.attrs import (
    ALIASING_OUTPUT,
    DEVICE_ELEMENT_TYPES,
    HOST_CONSTANT_ATTR,
    MARKS,
    NUMERICS_ATTR,
    REFUSED,
    CoreOrderAttr,
    IntListAttr,
    LayoutAttr,
    LxBudgetAttr,
    LxPlanAttr,
    MulticastAttr,
    OnchipAttr,
    ResidentInAttr,
    ResidentOutAttr,
    SplitAttr,
    aliased_arguments,
    by_identity,
    check_kernel_operand,
    device_layout,
    device_tensor_type,
    element_bytes,
    int_list,
    is_device_tensor,
    is_index_tensor,
)
from spyre_mlir.dialects.spyre.kernel import (
    KernelOp,
    kernel_core_boxes,
    kernel_iteration_dims,
    kernel_ops,
    single_pointwise,
)
from spyre_mlir.dialects.spyre.kernel_form import (
    Attention,
    Epilogue,
    GatheredOperand,
    KernelForm,
    RowGroup,
    attention,
    epilogue,
    gathered_operand,
    iteration_dims,
    kernel_form,
    last_lane,
    pointwise_loops,
    pointwise_sliced_inputs,
    read_through_views,
    reduce_tile_dim,
    row_group,
    slice_loops,
    sliced_concat,
)
from spyre_mlir.dialects.spyre.ops import (
    POINTWISE_BODY_OPS,
    REDUCE_KINDS,
    ConcatOp,
    FromDeviceOp,
    GatherOp,
    GatherTableReader,
    MatmulOp,
    PermuteOp,
    PointwiseOp,
    ReduceOp,
    ReshapeOp,
    RestickifyOp,
    ScatterOp,
    SliceOp,
    ToDeviceOp,
    YieldOp,
    only_gathered,
    rows_by_strides,
    table_rows,
)
from spyre_mlir.dialects.spyre.origin import (
    ORIGIN_ATTR,
    ORIGINS_ATTR,
    OriginAttr,
    is_torch_compute,
    kernel_body_origin,
    numbered,
    origin_of,
    set_origin,
    value_of,
    verify_origins,
)
from spyre_mlir.dialects.spyre.target import TARGET_ATTR, TargetAttr, module_target, set_module_target

Spyre = Dialect(
    "spyre",
    [
        ToDeviceOp,
        FromDeviceOp,
        MatmulOp,
        PointwiseOp,
        ReduceOp,
        GatherOp,
        ScatterOp,
        SliceOp,
        ConcatOp,
        YieldOp,
        PermuteOp,
        ReshapeOp,
        RestickifyOp,
        KernelOp,
    ],
    [IntListAttr, LayoutAttr, SplitAttr, LxPlanAttr, TargetAttr, *MARKS, OriginAttr],
)

__all__ = [
    "Spyre",
    # attributes and marks
    "IntListAttr",
    "LayoutAttr",
    "SplitAttr",
    "LxPlanAttr",
    "MulticastAttr",
    "CoreOrderAttr",
    "ResidentInAttr",
    "ResidentOutAttr",
    "OnchipAttr",
    "LxBudgetAttr",
    "MARKS",
    "int_list",
    # the target
    "TargetAttr",
    "TARGET_ATTR",
    "module_target",
    "set_module_target",
    # device tensor types and attribute names
    "DEVICE_ELEMENT_TYPES",
    "NUMERICS_ATTR",
    "HOST_CONSTANT_ATTR",
    "ALIASING_OUTPUT",
    "REFUSED",
    "aliased_arguments",
    "by_identity",
    "check_kernel_operand",
    "device_layout",
    "device_tensor_type",
    "element_bytes",
    "is_device_tensor",
    "is_index_tensor",
    # ops
    "ToDeviceOp",
    "FromDeviceOp",
    "MatmulOp",
    "PointwiseOp",
    "ReduceOp",
    "GatherOp",
    "GatherTableReader",
    "ScatterOp",
    "SliceOp",
    "ConcatOp",
    "YieldOp",
    "PermuteOp",
    "ReshapeOp",
    "RestickifyOp",
    "KernelOp",
    "POINTWISE_BODY_OPS",
    "REDUCE_KINDS",
    "rows_by_strides",
    "only_gathered",
    "table_rows",
    # kernels and their forms
    "kernel_ops",
    "single_pointwise",
    "kernel_iteration_dims",
    "kernel_core_boxes",
    "KernelForm",
    "GatheredOperand",
    "gathered_operand",
    "read_through_views",
    "kernel_form",
    "iteration_dims",
    "reduce_tile_dim",
    "slice_loops",
    "pointwise_loops",
    "pointwise_sliced_inputs",
    "sliced_concat",
    "RowGroup",
    "row_group",
    "Epilogue",
    "epilogue",
    "Attention",
    "attention",
    "last_lane",
    # origins
    "ORIGIN_ATTR",
    "ORIGINS_ATTR",
    "OriginAttr",
    "is_torch_compute",
    "kernel_body_origin",
    "numbered",
    "origin_of",
    "set_origin",
    "value_of",
    "verify_origins",
]
