"""`spyre.kernel`: one device program launch, its verifier, and what the passes ask of a kernel
(its compute ops, its iteration dims, each core's box). What its compute ops may form is
`kernel_form.py`; what its split and chunks mean, `iteration.py`; its marks, `attrs.py`.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import StringAttr, TensorType
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import IsolatedFromAbove
from xdsl.utils.exceptions import VerifyException

from spyre_mlir.dialects.spyre.attrs import (
    CoreOrderAttr,
    LxBudgetAttr,
    LxPlanAttr,
    MulticastAttr,
    OnchipAttr,
    ResidentInAttr,
    ResidentOutAttr,
    SplitAttr,
    check_kernel_operand,
    device_layout,
)
from spyre_mlir.dialects.spyre.iteration import Box, IterDim, box_count, core_boxes
from spyre_mlir.dialects.spyre.kernel_form import KernelForm, kernel_form
from spyre_mlir.dialects.spyre.ops import (
    ConcatOp,
    GatherOp,
    MatmulOp,
    PermuteOp,
    PointwiseOp,
    ReduceOp,
    ReshapeOp,
    RestickifyOp,
    ScatterOp,
    SliceOp,
    YieldOp,
)
from spyre_mlir.dialects.spyre.origin import OriginAttr
from spyre_mlir.layout import Layout
from spyre_mlir.target.constants import TRANSPOSE_BLOCK


@irdl_op_definition
class KernelOp(IRDLOperation):
    """One device program launch: the region's ops run on the cores, reading inputs from
    and writing results to DDR.

        split:  parts per iteration dim over the cores       (spyre-divide-work)
        chunks: sequential chunks per core per dim           (spyre-plan-scratchpad)
        lx:     LX byte offset of each buffer, on every core (spyre-plan-scratchpad)

    Marks (attrs.py; each verifies itself, and is verified here against the kernel):

        multicast <chain = g>        B tiles passed down chains of g cores (a matmul; an
                                     attention kernel's K^T and V)
                                     (spyre-divide-work, spyre-resident-chains)
        core_order [c0, ...]         box j of the split (core_boxes order) on core c_j: as many
                                     cores as the split has boxes (spyre-resident-chains)
        resident_in <input = i, offset = off>
                                     input i (a matmul's A, or a pointwise kernel's input) read
                                     from LX at byte `off`, where an earlier launch left it
        resident_out <offset = off>  the result (a matmul's or a pointwise kernel's) kept in LX
                                     at byte `off` for a later launch; not stored to DDR
        onchip <...>                 the kernel's one restickify, a 2-D transpose of the generic
                                     layout, done in LX and over the ring; its bands hold every
                                     source row once, its boxes every result stick once
                                     (spyre-onchip-relayout)
        lx_budget <bytes = b>        LX the planner may use; the values resident while the
                                     kernel runs (its own resident_in, resident_out and onchip
                                     areas among them) lie above

    In a module whose torch ops are numbered, `origin <[ops] -> [values]>` says which torch ops
    the kernel computes and whose values it returns: its body's (origin.py).
    """

    name = "spyre.kernel"
    sym_name = prop_def(StringAttr)
    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    body = region_def("single_block")
    split = opt_prop_def(SplitAttr)
    chunks = opt_prop_def(SplitAttr)
    lx = opt_prop_def(LxPlanAttr)
    multicast = opt_prop_def(MulticastAttr)
    core_order = opt_prop_def(CoreOrderAttr)
    resident_in = opt_prop_def(ResidentInAttr)
    resident_out = opt_prop_def(ResidentOutAttr)
    onchip = opt_prop_def(OnchipAttr)
    lx_budget = opt_prop_def(LxBudgetAttr)
    origin = opt_prop_def(OriginAttr)
    traits = traits_def(IsolatedFromAbove())
    assembly_format = (
        "$sym_name `(` $inputs `)` (`split` $split^)? (`chunks` $chunks^)? (`lx` $lx^)? "
        "(`multicast` $multicast^)? (`core_order` $core_order^)? (`resident_in` $resident_in^)? "
        "(`resident_out` $resident_out^)? (`onchip` $onchip^)? (`lx_budget` $lx_budget^)? (`origin` $origin^)? attr-dict "
        "`:` functional-type($inputs, $outputs) $body"
    )

    def __init__(self, name: str, inputs: Sequence[SSAValue], output_types: Sequence[Attribute], body: Region):
        super().__init__(
            operands=[inputs],
            result_types=[output_types],
            regions=[body],
            properties={"sym_name": StringAttr(name)},
        )

    @property
    def compute_op(self) -> Operation:
        """The kernel's single compute op (a row group has several: kernel_ops)."""
        ops = [op for op in self.body.block.ops if not isinstance(op, YieldOp | PermuteOp | ReshapeOp)]
        assert len(ops) == 1, f"kernel {self.sym_name.data} holds {len(ops)} compute ops"
        return ops[0]

    def verify_(self) -> None:
        block: Block = self.body.block
        if [a.type for a in block.args] != [v.type for v in self.inputs]:
            raise VerifyException(f"'spyre.kernel' @{self.sym_name.data}: block arguments must match the inputs' types")
        for i, v in enumerate(self.inputs):
            check_kernel_operand(v.type, f"'spyre.kernel' @{self.sym_name.data}: input {i}")
        for i, v in enumerate(self.outputs):
            device_layout(v.type, f"'spyre.kernel' @{self.sym_name.data}: result {i}")
        term = block.last_op
        if not isinstance(term, YieldOp) or [v.type for v in term.values] != [r.type for r in self.outputs]:
            raise VerifyException(
                f"'spyre.kernel' @{self.sym_name.data}: must end with spyre.yield of the result types"
            )
        compute = [
            op
            for op in block.ops
            if isinstance(
                op, MatmulOp | PointwiseOp | ReduceOp | GatherOp | ScatterOp | SliceOp | ConcatOp | RestickifyOp
            )
        ]
        other = [
            op.name
            for op in block.ops
            if not isinstance(
                op,
                MatmulOp
                | PointwiseOp
                | ReduceOp
                | GatherOp
                | ScatterOp
                | SliceOp
                | ConcatOp
                | RestickifyOp
                | PermuteOp
                | ReshapeOp
                | YieldOp,
            )
        ]
        if other or not compute:
            raise VerifyException(
                f"'spyre.kernel' @{self.sym_name.data}: holds one compute op (spyre.matmul, spyre.pointwise, "
                f"spyre.reduce, spyre.gather, spyre.scatter, spyre.slice, spyre.concat or spyre.restickify), a matmul and its pointwise "
                f"epilogue, a concat and slices it reads, a pointwise op and the sliced concats it reads, a row group "
                f"of reductions and pointwise ops, attention (a matmul, a row group, a matmul), or a gather and the "
                f"matmul or restickify that reads its rows, and views; "
                f"found {len(compute)} compute op(s)" + (f" and {', '.join(other)}" if other else "")
            )
        try:
            form = kernel_form(kernel_ops(self))
            dims = form.dims()
        except ValueError as e:  # compute ops the kernel form cannot hold (layouts not established)
            raise VerifyException(f"'spyre.kernel' @{self.sym_name.data}: {e}") from None
        names = [d.name for d in dims]
        owner = form.compute.name if form.compute is not None else "attention" if form.attention else "row group"
        for what, attr in (("split", self.split), ("chunks", self.chunks)):
            if attr is not None and list(attr.as_dict()) != names:
                raise VerifyException(
                    f"'spyre.kernel' @{self.sym_name.data}: {what} names {list(attr.as_dict())} are not the "
                    f"iteration dims {names} of its {owner}"
                )
        self._verify_marks(compute, dims, form)

    def _verify_marks(self, compute: Sequence[Operation], dims: Sequence[IterDim], form: KernelForm) -> None:
        """The marks against the kernel: what each says alone its own verify() checks."""
        where = f"'spyre.kernel' @{self.sym_name.data}"
        for key in self.attributes:
            if key.startswith("spyre."):  # a mark spelled as a discardable attribute would be ignored
                raise VerifyException(
                    f"{where}: {key} is not an attribute of spyre.kernel (its marks are the properties multicast, "
                    "core_order, resident_in, resident_out, onchip and lx_budget)"
                )
        matmul = form.compute if isinstance(form.compute, MatmulOp) and form.attention is None else None
        pointwise = compute[0] if len(compute) == 1 and isinstance(compute[0], PointwiseOp) else None
        if self.multicast is not None and matmul is None and form.attention is None:
            raise VerifyException(
                f"{where}: multicast passes a matmul's B tiles down the ring, and the kernel has no matmul"
            )
        if self.core_order is not None:
            if self.split is None:
                raise VerifyException(f"{where}: core_order places the boxes of a split, and the kernel has none")
            boxes = box_count(dims, self.split.as_dict())
            if len(self.core_order.cores) != boxes:
                raise VerifyException(
                    f"{where}: core_order names {len(self.core_order.cores)} cores, its split has {boxes} boxes"
                )
        if self.resident_in is not None:
            index = self.resident_in.input.data
            if index >= len(self.inputs):
                raise VerifyException(
                    f"{where}: resident_in names input {index}, the kernel has {len(self.inputs)} inputs"
                )
            if not (pointwise is not None or matmul is not None and self.body.block.args[index] is matmul.lhs):
                raise VerifyException(
                    f"{where}: resident_in: only a matmul's A operand or a pointwise kernel's input is read from LX"
                )
        if self.resident_out is not None:
            if matmul is None and pointwise is None:
                raise VerifyException(
                    f"{where}: resident_out: only a matmul's or a pointwise kernel's result stays in LX"
                )
            if matmul is not None and self.split is not None and self.split.as_dict().get("k", 1) > 1:
                raise VerifyException(f"{where}: resident_out: a matmul split along k cannot keep its result in LX")
        if self.onchip is not None:
            self._verify_onchip(compute)
        if self.lx_budget is not None:
            budget = self.lx_budget.bytes.data
            held = [(key, lo) for key, lo, _ in self.onchip.areas()] if self.onchip is not None else []
            if self.resident_in is not None:
                held.append(("resident_in", self.resident_in.offset.data))
            if self.resident_out is not None:
                held.append(("resident_out", self.resident_out.offset.data))
            for what, at in held:
                if at < budget:
                    raise VerifyException(
                        f"{where}: {what} at LX byte {at} lies below lx_budget {budget}, where the planner places "
                        "the kernel's buffers"
                    )

    def _verify_onchip(self, compute: Sequence[Operation]) -> None:
        """The onchip mark against the kernel's restickify: a 2-D f16 transpose from the generic
        layout's transposed view to the generic layout, whose bands hold every source row once
        and whose boxes hold every result stick once."""
        where = f"'spyre.kernel' @{self.sym_name.data}: onchip"
        mark = self.onchip
        assert mark is not None
        op = compute[0]
        if len(compute) != 1 or not isinstance(op, RestickifyOp):
            raise VerifyException(
                f"{where}: marks a kernel of one restickify, this one has {[o.name for o in compute]}"
            )
        src, dst = device_layout(op.input.type), device_layout(op.result.type)
        if len(dst.shape) != 2 or dst.element_bytes != 2:
            raise VerifyException(f"{where}: the result {dst.describe()} is not a rank-2 f16 tensor")
        cols, rows = dst.shape
        if (
            dst.canonical() != Layout.generic(dst.shape, 2).canonical()
            or src.canonical() != Layout.generic((rows, cols), 2).permuted((1, 0)).canonical()
        ):
            raise VerifyException(
                f"{where}: {src.describe()} to {dst.describe()} is not the generic layout's transposed view to the "
                "generic layout"
            )
        if rows % TRANSPOSE_BLOCK:
            raise VerifyException(f"{where}: the transposed dim ({rows}) is not a multiple of {TRANSPOSE_BLOCK}")
        bands = [list(b) for b in mark.bands]
        for core, (r0, r1) in enumerate(mark.bands):
            if r1 > rows:
                raise VerifyException(
                    f"{where}: src_rows of core {core}, [{r0}, {r1}), runs past the {rows} source rows"
                )
        at = 0
        for r0, r1 in sorted(b for b in mark.bands if b != (0, 0)):
            if r0 != at:
                break
            at = r1
        if at != rows or sum(r1 - r0 for r0, r1 in mark.bands) != rows:
            raise VerifyException(f"{where}: src_rows {bands} do not hold each of the {rows} source rows once")
        sticks = rows // TRANSPOSE_BLOCK
        boxes = [b for b in mark.boxes if b != (0, 0, 0, 0)]
        for core, (s0, s1, c0, c1) in enumerate(mark.boxes):
            if s1 > sticks or c1 > cols:
                raise VerifyException(
                    f"{where}: dst_boxes of core {core}, sticks [{s0}, {s1}) x rows [{c0}, {c1}), is not a box of "
                    f"the result's {sticks} x {cols}"
                )
        overlap = any(
            a[0] < b[1] and b[0] < a[1] and a[2] < b[3] and b[2] < a[3]
            for i, a in enumerate(boxes)
            for b in boxes[i + 1 :]
        )
        if overlap or sum((s1 - s0) * (c1 - c0) for s0, s1, c0, c1 in boxes) != sticks * cols:
            raise VerifyException(
                f"{where}: dst_boxes {[list(b) for b in mark.boxes]} do not hold each of the result's {sticks} x "
                f"{cols} sticks once"
            )


def kernel_ops(kernel: KernelOp) -> list[Operation]:
    """The compute ops of a kernel, in order (views and the yield excluded)."""
    return [op for op in kernel.body.block.ops if not isinstance(op, YieldOp | PermuteOp | ReshapeOp)]


def single_pointwise(kernel: Operation | None) -> PointwiseOp | None:
    """The pointwise op of a kernel of one compute op that is one (else None): the only kind
    whose lowering keeps its result in LX (resident_out) or reads an operand there
    (resident_in) in spyre-onchip-relayout's bands and boxes."""
    if not isinstance(kernel, KernelOp):
        return None
    ops = kernel_ops(kernel)
    return ops[0] if len(ops) == 1 and isinstance(ops[0], PointwiseOp) else None


def kernel_iteration_dims(kernel: KernelOp) -> list[IterDim]:
    """The iteration dims a kernel's split and chunks name (iteration.py): its compute op's,
    its matmul's (an epilogue), its concat's (slices it reads) or its row group's; ValueError
    when its compute ops form none of these."""
    return kernel_form(kernel_ops(kernel)).dims()


def kernel_core_boxes(kernel: KernelOp, cores: int) -> list[Box | None]:
    """The box of each core of a kernel with a split: core_boxes, placed on the cores its
    `core_order` names (box i on core order[i]; spyre-resident-chains), if it has one."""
    assert kernel.split is not None
    boxes = core_boxes(kernel_iteration_dims(kernel), kernel.split.as_dict(), cores)
    if kernel.core_order is None:
        return boxes
    order = kernel.core_order.as_tuple()
    if max(order) >= cores:
        raise ValueError(f"core_order names core {max(order)}, the device has {cores}")
    placed: list[Box | None] = [None] * cores
    for i, core in enumerate(order):
        placed[core] = boxes[i]
    return placed
