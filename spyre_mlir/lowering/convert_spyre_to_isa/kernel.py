"""One kernel's code generation: its plan read once (boxes per core, chunks, LX offsets in
sticks, resident values), then each core's instructions from the lowering of its compute op.

The LX plan is checked against the buffers the kernel's chunks need (analysis/buffers.py,
`KernelBuffers`): every placed buffer lies inside LX and apart from every other, and the LX
ranges the program keeps for, or takes from, another launch (resident values) apart from all of
them. A hand-written plan that breaks one is refused naming both buffers: two buffers sharing
sticks would compute a wrong answer without a sign.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import PassFailedException

from spyre_mlir.analysis.buffers import KernelBuffers
from spyre_mlir.analysis.sticks import matmul_reads
from spyre_mlir.diagnostics import Unsupported
from spyre_mlir.dialects import spyre
from spyre_mlir.dialects.spyre import (
    kernel_core_boxes,
    kernel_form,
    kernel_ops,
)
from spyre_mlir.dialects.spyre.iteration import Box
from spyre_mlir.layout import Layout
from spyre_mlir.lowering.convert_spyre_to_isa.attention import lower_attention
from spyre_mlir.lowering.convert_spyre_to_isa.instructions import Ins
from spyre_mlir.lowering.convert_spyre_to_isa.matmul import lower_matmul, multicast_groups
from spyre_mlir.lowering.convert_spyre_to_isa.movement import (
    lower_concat,
    lower_gather,
    lower_restickify,
    lower_scatter,
    lower_slice,
)
from spyre_mlir.lowering.convert_spyre_to_isa.onchip import lower_onchip_transpose
from spyre_mlir.lowering.convert_spyre_to_isa.pointwise import lower_pointwise, lower_reduce, lower_row_group
from spyre_mlir.target.constants import STICK_BYTES


class LxSticks(dict[str, int]):
    """A kernel's LX plan in sticks, by buffer name. A buffer the code needs and the plan does
    not place (a hand-written plan for another split or layout) is a refusal naming both."""

    def __init__(self, kernel: str, sticks: dict[str, int]):
        super().__init__(sticks)
        self.kernel = kernel

    def __missing__(self, name: str) -> int:
        raise PassFailedException(
            f"kernel {self.kernel}: its lx plan places no buffer '{name}', which its split and layouts need "
            f"(spyre-plan-scratchpad places every buffer; it has {', '.join(self) or 'none'})"
        )


class KernelCodegen:
    """Instructions of one kernel for each core."""

    def __init__(self, kernel: spyre.KernelOp, cores: int, lx_bytes: int, onchip: spyre.OnchipAttr | None = None):
        self.kernel = kernel
        self.name = kernel.sym_name.data
        if kernel.split is None or kernel.chunks is None or kernel.lx is None:
            raise PassFailedException(
                f"kernel {self.name}: run spyre-divide-work and spyre-plan-scratchpad first (split, chunks and lx are needed)"
            )
        if len(kernel.outputs) != 1:
            raise Unsupported(
                f"kernel {self.name}: {len(kernel.outputs)} results; programs with several outputs are not supported yet"
            )
        ops = kernel_ops(kernel)
        form = kernel_form(ops)
        self.epilogue, self.group, self.attention = form.epilogue, form.group, form.attention
        self.sliced_inputs = form.sliced_inputs
        """A pointwise op's inputs that are sliced concats (KernelForm.sliced_inputs)."""
        self.compute = form.compute or ops[-1]  # a row group's result is its last op's
        self.dims = form.dims()
        try:
            self.boxes = kernel_core_boxes(kernel, cores)
        except ValueError as e:
            raise PassFailedException(f"kernel {self.name}: {e}") from None
        self.cores = cores
        self.chunks = kernel.chunks.as_dict()
        self.lx = LxSticks(self.name, {k: v // STICK_BYTES for k, v in kernel.lx.as_dict().items()})
        self.lx_sticks = lx_bytes // STICK_BYTES
        self.placed = self._placed_buffers()
        """The plan's buffers as (first stick, end stick, name), by first stick."""
        args = list(kernel.body.block.args)
        self.arg_index: dict[SSAValue, int] = {a: i for i, a in enumerate(args)}
        self.n_inputs = len(args)
        # spyre-resident-chains, spyre-onchip-relayout: values kept in LX between launches
        # (offsets in sticks)
        out, into = kernel.resident_out, kernel.resident_in
        self.resident_out = out.offset.data // STICK_BYTES if out is not None else None
        self.resident_in = (into.input.data, into.offset.data // STICK_BYTES) if into is not None else None
        assert (onchip is None) == (kernel.onchip is None), "an onchip mark is lowered as onchip_plan checked it"
        self.onchip = onchip
        """The kernel's `onchip` mark (spyre-onchip-relayout), as `onchip_plan` checked it."""
        self.resident_ranges: dict[str, list[int]] = {}
        """The program's `spyre.resident_in` / `spyre.resident_out`: [lo, hi) LX sticks."""
        self.core = 0
        """The core whose instructions are being generated."""
        self.groups: dict[int, list[int]] = {}
        """A matmul's multicast chains, by core (`multicast_groups`)."""

    def arg(self, v: SSAValue) -> int:
        """Program argument index of a kernel value (inputs, then the output)."""
        if v in self.arg_index:
            return self.arg_index[v]
        return self.n_inputs  # the kernel's single result

    @property
    def in_place(self) -> int | None:
        """The input whose DDR buffer the program's output is (a scatter's destination), or None."""
        return self.arg(self.compute.dest) if isinstance(self.compute, spyre.ScatterOp) else None

    def buf(self, name: str, count: int) -> int:
        """LX offset (sticks) of buffer `name` for its `count`-th use (1-based): planned copies
        `name_1`, `name_2`, ... (double or deeper buffering) take the uses in turn."""
        return self.lx[self.copies(name)[(count - 1) % len(self.copies(name))]]

    def copies(self, name: str) -> list[str]:
        """The planned copies of buffer `name`: `name`, `name_1`, ..."""
        out = [name]
        while f"{name}_{len(out)}" in self.lx:
            out.append(f"{name}_{len(out)}")
        return out

    def per_core(self) -> list[list[Ins] | None]:
        """Each core's instructions (None: an idle core)."""
        lower: Callable[[KernelCodegen, Box], list[Ins]]
        if self.group is not None:
            lower = lower_row_group
        elif self.attention is not None:
            lower = lower_attention
        else:
            lower = LOWERINGS[type(self.compute)]
        self._check_layouts()
        self.groups = multicast_groups(self) if lower is lower_matmul else {}
        out: list[list[Ins] | None] = []
        for core, box in enumerate(self.boxes):
            self.core = core
            if self.onchip is not None:  # the bands of its producer and consumer decide the work
                out.append(lower_onchip_transpose(self) or None)
                continue
            try:
                out.append(None if box is None else lower(self, box))
            except ValueError as e:  # a layout the generator cannot address (analysis.sticks)
                raise PassFailedException(f"kernel {self.name}: {e}") from None
        self._check_resident_ranges()
        return out

    def _check_layouts(self) -> None:
        """Refuse, once per kernel, the layouts a matmul, gather, scatter or concat program cannot address
        (docs/layouts.md, "What the lowering assumes")."""
        op = self.compute
        if self.attention is not None:  # the operands its products read from DDR (it stores by out_stick)
            att = self.attention
            operands = [("q", att.scores.lhs), ("k^T", att.scores.rhs), ("v", att.context.rhs)]
        elif isinstance(op, spyre.MatmulOp):
            operands = [("lhs", op.lhs), ("rhs", op.rhs), ("result", op.result)]
        else:
            operands = []
        if operands:
            for role, v in operands:
                lay = spyre.device_layout(v.type)
                if not matmul_reads(lay):
                    raise PassFailedException(
                        f"kernel {self.name}: 'spyre.matmul' {role} {lay.describe()}: the matmul steps each dim by one stick "
                        "stride, so its sticks must hold the generic layout's (run spyre-propagate-layouts first)"
                    )
        elif isinstance(op, spyre.GatherOp):
            table, res = spyre.device_layout(op.table.type), spyre.device_layout(op.result.type)
            if table.canonical() != Layout.generic(table.shape, table.element_bytes).canonical():
                raise PassFailedException(
                    f"kernel {self.name}: 'spyre.gather' table {table.describe()}: the gather reads whole rows of the generic "
                    "layout (run spyre-propagate-layouts first)"
                )
            if not matmul_reads(res):  # each row's sticks stored by one stride per dim, as a matmul operand is read
                raise PassFailedException(
                    f"kernel {self.name}: 'spyre.gather' result {res.describe()}: the gather stores a row's sticks by one "
                    "stride, so its sticks must hold the generic layout's"
                )
        elif isinstance(op, spyre.ScatterOp):
            for role, v in (("destination", op.dest), ("values", op.values)):
                lay = spyre.device_layout(v.type)
                if not spyre.rows_by_strides(lay):
                    raise PassFailedException(
                        f"kernel {self.name}: 'spyre.scatter' {role} {lay.describe()}: the scatter moves rows by "
                        "one stick stride per dim (run spyre-propagate-layouts first)"
                    )
        elif isinstance(op, spyre.ConcatOp):
            for i, v in enumerate(op.inputs):
                src = spyre.device_layout(v.type)
                if src.canonical() != Layout.generic(src.shape, src.element_bytes).canonical():
                    raise PassFailedException(
                        f"kernel {self.name}: 'spyre.concat' input {i} {src.describe()}: the concat copies whole sticks "
                        "of the generic layout (run spyre-propagate-layouts first)"
                    )

    def _placed_buffers(self) -> list[tuple[int, int, str]]:
        """The plan's buffers with the sticks `KernelBuffers` gives them (a name it does not
        know is not read by the code: no extent), each checked inside LX and apart from the rest."""
        sizes = KernelBuffers(self.kernel, self.boxes).sizes(self.chunks, double=True, stationary="a_block" in self.lx)
        placed = sorted((lo, lo + sizes[name], name) for name, lo in self.lx.items() if sizes.get(name, 0) > 0)
        for lo, hi, name in placed:
            if hi > self.lx_sticks:
                raise PassFailedException(
                    f"kernel {self.name}: its lx plan places '{name}' at {lo * STICK_BYTES} for {(hi - lo) * STICK_BYTES} "
                    f"bytes, past the end of LX ({self.lx_sticks * STICK_BYTES} bytes per core)"
                )
        self._check_apart(
            placed,
            "its lx plan",
            "each buffer needs sticks of its own (spyre-plan-scratchpad places them one after another)",
        )
        return placed

    def _check_apart(self, ranges: Iterable[tuple[int, int, str]], what: str, why: str) -> None:
        """Refuse two of `ranges` (first stick, end stick, name) that share a stick."""
        widest: tuple[int, int, str] | None = None  # of the ranges so far, the one reaching furthest
        for lo, hi, name in sorted(ranges):
            if widest is not None and lo < widest[1]:
                raise PassFailedException(
                    f"kernel {self.name}: {what} overlaps '{widest[2]}' (LX bytes {widest[0] * STICK_BYTES} to "
                    f"{widest[1] * STICK_BYTES}) and '{name}' ({lo * STICK_BYTES} to {hi * STICK_BYTES}): {why}"
                )
            if widest is None or hi > widest[1]:
                widest = (lo, hi, name)

    def _check_resident_ranges(self) -> None:
        """Refuse a resident value (`resident_in`, `resident_out`) whose LX range shares a
        stick with a buffer of the plan."""
        for which, (lo, hi) in self.resident_ranges.items():
            if hi > lo:
                self._check_apart(
                    [*self.placed, (lo, hi, which)],
                    f"the LX range of its {which}",
                    "a value kept in LX between launches lies apart from the kernel's buffers (above its lx_budget)",
                )

    def resident(self, which: str, lo: int, sticks: int) -> None:
        """Record an LX range the program keeps for, or takes from, another launch."""
        old = self.resident_ranges.get(which, [lo, lo])
        self.resident_ranges[which] = [lo, max(old[1], lo + sticks)]


LOWERINGS: dict[type[Operation], Callable[[KernelCodegen, Box], list[Ins]]] = {
    spyre.MatmulOp: lower_matmul,
    spyre.PointwiseOp: lower_pointwise,
    spyre.ReduceOp: lower_reduce,
    spyre.GatherOp: lower_gather,
    spyre.ScatterOp: lower_scatter,
    spyre.SliceOp: lower_slice,
    spyre.ConcatOp: lower_concat,
    spyre.RestickifyOp: lower_restickify,
}
"""The instructions of a kernel of one compute op (a matmul with its epilogue), by its class."""
