"""A kernel's plan, read once from its `spyre.kernel` and checked: its form, the boxes of its
cores, its chunks, its LX offsets in sticks, its arguments, the values it keeps in or takes
from LX between launches, a matmul's multicast chains. The op families lower from it; it is
frozen, and what they find per core they return (kernel.py, `CoreCode`).

The LX plan is checked against the buffers the kernel's chunks need (analysis/buffers.py,
`KernelBuffers`): every placed buffer lies inside LX and apart from every other (the driver
checks the LX ranges the program keeps for, or takes from, another launch against them). A
hand-written plan that breaks one is refused naming both buffers: two buffers sharing sticks
would compute a wrong answer without a sign. The layouts a matmul, gather, scatter or concat
program cannot address are refused here too, before any core's code.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import PassFailedException

from spyre_mlir.analysis.buffers import KernelBuffers
from spyre_mlir.analysis.sticks import matmul_reads
from spyre_mlir.diagnostics import Unsupported
from spyre_mlir.dialects import spyre
from spyre_mlir.dialects.spyre import kernel_core_boxes, kernel_form, kernel_ops
from spyre_mlir.dialects.spyre.iteration import Box, IterDim, chunk_boxes
from spyre_mlir.layout import Layout
from spyre_mlir.target.constants import STICK_BYTES

GATHERED = 1 << 30
"""The argument index a lowering's loads of the first gathered operand name (`KernelPlan.arg`;
the i-th's GATHERED + i): past every program's arguments, so that one left unrewritten fails
to build."""


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


@dataclass(frozen=True)
class KernelPlan:
    """What the lowering of one kernel reads, for every core (`kernel_plan`)."""

    name: str
    form: type
    """The class the kernel's lowering is registered for (kernel.py, `lowers`): the compute
    op's, or `spyre.RowGroup`, `spyre.Attention`, `spyre.OnchipAttr` (an on-chip relayout)."""
    compute: Operation
    """The op whose lowering the kernel runs (the matmul of an epilogue, the concat of sliced
    parts; a row group's or attention's last op, whose result is the kernel's)."""
    epilogue: spyre.Epilogue | None
    group: spyre.RowGroup | None
    attention: spyre.Attention | None
    sliced_inputs: tuple[int, ...]
    """A pointwise op's inputs that are sliced concats (KernelForm.sliced_inputs)."""
    gathered: tuple[spyre.GatheredOperand, ...]
    """The operands gathers in the kernel make: `arg` names the i-th `GATHERED + i`, and the
    loads of it become gathers (gathered.py, `GatheredLoads`)."""
    dims: tuple[IterDim, ...]
    boxes: tuple[Box | None, ...]
    """Each core's box (None: an idle core)."""
    cores: int
    split: Mapping[str, int]
    chunks: dict[str, int]
    lx: Mapping[str, int]
    """LX offsets in sticks by buffer name (`LxSticks`: a name the plan lacks is refused)."""
    placed: tuple[tuple[int, int, str], ...]
    """The plan's buffers as (first stick, end stick, name), by first stick."""
    args: tuple[SSAValue, ...]
    """The kernel's block arguments: the program's inputs, in order (the output follows them)."""
    arg_index: Mapping[SSAValue, int]
    resident_out: int | None
    """spyre-resident-chains, spyre-onchip-relayout: the LX stick the result stays at."""
    resident_in: tuple[int, int] | None
    """The input taken from LX, and the LX stick it is at."""
    onchip: spyre.OnchipAttr | None
    """The kernel's `onchip` mark (spyre-onchip-relayout), as `onchip_plan` checked it."""
    chain: int | None
    """The cores of a multicast chain (`multicast <chain = g>`), or None."""
    groups: Mapping[int, tuple[int, ...]]
    """A matmul's multicast chains, by core (`multicast_groups`)."""

    def arg(self, v: SSAValue) -> int:
        """Program argument index of a kernel value (inputs, then the output; `GATHERED` for
        a gathered operand, which no program argument holds)."""
        if v in self.arg_index:
            return self.arg_index[v]
        for i, g in enumerate(self.gathered):
            if v is g.value:
                return GATHERED + i
        return len(self.args)  # the kernel's single result

    @property
    def in_place(self) -> int | None:
        """The input whose DDR buffer the program's output is (a scatter's destination), or None."""
        return self.arg(self.compute.dest) if isinstance(self.compute, spyre.ScatterOp) else None

    def buf(self, name: str, count: int) -> int:
        """LX offset (sticks) of buffer `name` for its `count`-th use (1-based): planned copies
        `name_1`, `name_2`, ... (double or deeper buffering) take the uses in turn."""
        copies = self.copies(name)
        return self.lx[copies[(count - 1) % len(copies)]]

    def copies(self, name: str) -> list[str]:
        """The planned copies of buffer `name`: `name`, `name_1`, ..."""
        out = [name]
        while f"{name}_{len(out)}" in self.lx:
            out.append(f"{name}_{len(out)}")
        return out


def kernel_plan(
    kernel: spyre.KernelOp, cores: int, lx_bytes: int, onchip: spyre.OnchipAttr | None = None
) -> KernelPlan:
    """The plan of a kernel planned by spyre-divide-work and spyre-plan-scratchpad, checked
    (its LX plan, its layouts); PassFailedException naming the kernel otherwise, Unsupported for
    a kernel of several results."""
    name = kernel.sym_name.data
    if kernel.split is None or kernel.chunks is None or kernel.lx is None:
        raise PassFailedException(
            f"kernel {name}: run spyre-divide-work and spyre-plan-scratchpad first (split, chunks and lx are needed)"
        )
    if len(kernel.outputs) != 1:
        raise Unsupported(
            f"kernel {name}: {len(kernel.outputs)} results; programs with several outputs are not supported yet"
        )
    assert (onchip is None) == (kernel.onchip is None), "an onchip mark is lowered as onchip_plan checked it"
    ops = kernel_ops(kernel)
    form = kernel_form(ops)
    compute = form.compute or ops[-1]  # a row group's result is its last op's
    try:
        boxes = kernel_core_boxes(kernel, cores)
    except ValueError as e:
        raise PassFailedException(f"kernel {name}: {e}") from None
    chunks = kernel.chunks.as_dict()
    lx = LxSticks(name, {k: v // STICK_BYTES for k, v in kernel.lx.as_dict().items()})
    sizes = KernelBuffers(kernel, boxes).sizes(chunks, double=True, stationary="a_block" in lx)
    placed = _placed_buffers(name, lx, sizes, lx_bytes // STICK_BYTES)
    _check_layouts(name, compute, form.attention)
    for g in form.gathered:
        _check_layouts(name, g.gather, None)
    if onchip is not None:
        lowered: type = spyre.OnchipAttr
    elif form.group is not None:
        lowered = spyre.RowGroup
    elif form.attention is not None:
        lowered = spyre.Attention
    else:
        lowered = type(compute)
    dims = tuple(form.dims())
    chain = kernel.multicast.chain.data if kernel.multicast is not None else None
    args = kernel.body.block.args
    # spyre-resident-chains, spyre-onchip-relayout: values kept in LX between launches
    out, into = kernel.resident_out, kernel.resident_in
    return KernelPlan(
        name=name,
        form=lowered,
        compute=compute,
        epilogue=form.epilogue,
        group=form.group,
        attention=form.attention,
        sliced_inputs=form.sliced_inputs,
        gathered=form.gathered,
        dims=dims,
        boxes=tuple(boxes),
        cores=cores,
        split=kernel.split.as_dict(),
        chunks=chunks,
        lx=lx,
        placed=placed,
        args=tuple(args),
        arg_index={a: i for i, a in enumerate(args)},
        resident_out=out.offset.data // STICK_BYTES if out is not None else None,
        resident_in=(into.input.data, into.offset.data // STICK_BYTES) if into is not None else None,
        onchip=onchip,
        chain=chain,
        groups=multicast_groups(chain, boxes, dims, chunks) if lowered is spyre.MatmulOp else {},
    )


def _placed_buffers(
    name: str, lx: Mapping[str, int], sizes: Mapping[str, int], lx_sticks: int
) -> tuple[tuple[int, int, str], ...]:
    """The plan's buffers with the sticks `KernelBuffers` gives them (a name it does not
    know is not read by the code: no extent), each checked inside LX and apart from the rest."""
    placed = sorted((lo, lo + sizes[buf], buf) for buf, lo in lx.items() if sizes.get(buf, 0) > 0)
    for lo, hi, buf in placed:
        if hi > lx_sticks:
            raise PassFailedException(
                f"kernel {name}: its lx plan places '{buf}' at {lo * STICK_BYTES} for {(hi - lo) * STICK_BYTES} "
                f"bytes, past the end of LX ({lx_sticks * STICK_BYTES} bytes per core)"
            )
    check_apart(
        name,
        placed,
        "its lx plan",
        "each buffer needs sticks of its own (spyre-plan-scratchpad places them one after another)",
    )
    return tuple(placed)


def check_apart(kernel: str, ranges: Iterable[tuple[int, int, str]], what: str, why: str) -> None:
    """Refuse two of `ranges` (first stick, end stick, name) that share a stick."""
    widest: tuple[int, int, str] | None = None  # of the ranges so far, the one reaching furthest
    for lo, hi, name in sorted(ranges):
        if widest is not None and lo < widest[1]:
            raise PassFailedException(
                f"kernel {kernel}: {what} overlaps '{widest[2]}' (LX bytes {widest[0] * STICK_BYTES} to "
                f"{widest[1] * STICK_BYTES}) and '{name}' ({lo * STICK_BYTES} to {hi * STICK_BYTES}): {why}"
            )
        if widest is None or hi > widest[1]:
            widest = (lo, hi, name)


def _check_layouts(name: str, op: Operation, att: spyre.Attention | None) -> None:
    """Refuse, once per kernel, the layouts a matmul, gather, scatter or concat program cannot address
    (docs/layouts.md, "What the lowering assumes")."""
    if att is not None:  # the operands its products read from DDR (it stores by out_stick)
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
                    f"kernel {name}: 'spyre.matmul' {role} {lay.describe()}: the matmul steps each dim by one stick "
                    "stride, so its sticks must hold the generic layout's (run spyre-propagate-layouts first)"
                )
    elif isinstance(op, spyre.GatherOp):
        table, res = spyre.device_layout(op.table.type), spyre.device_layout(op.result.type)
        if (
            table.canonical() != Layout.generic(table.shape, table.element_bytes).canonical()
            and spyre.table_rows(table) is None
        ):
            raise PassFailedException(
                f"kernel {name}: 'spyre.gather' table {table.describe()}: the gather reads whole rows, each dim by "
                "one stick stride (run spyre-propagate-layouts first)"
            )
        if not matmul_reads(res):  # each row's sticks stored by one stride per dim, as a matmul operand is read
            raise PassFailedException(
                f"kernel {name}: 'spyre.gather' result {res.describe()}: the gather stores a row's sticks by one "
                "stride, so its sticks must hold the generic layout's"
            )
    elif isinstance(op, spyre.ScatterOp):
        for role, v in (("destination", op.dest), ("values", op.values)):
            lay = spyre.device_layout(v.type)
            if not spyre.rows_by_strides(lay):
                raise PassFailedException(
                    f"kernel {name}: 'spyre.scatter' {role} {lay.describe()}: the scatter moves rows by "
                    "one stick stride per dim (run spyre-propagate-layouts first)"
                )
    elif isinstance(op, spyre.ConcatOp):
        for i, v in enumerate(op.inputs):
            src = spyre.device_layout(v.type)
            if src.canonical() != Layout.generic(src.shape, src.element_bytes).canonical():
                raise PassFailedException(
                    f"kernel {name}: 'spyre.concat' input {i} {src.describe()}: the concat copies whole sticks "
                    "of the generic layout (run spyre-propagate-layouts first)"
                )


def multicast_groups(
    chain: int | None, boxes: Sequence[Box | None], dims: Sequence[IterDim], chunks: dict[str, int]
) -> dict[int, tuple[int, ...]]:
    """With `multicast <chain = g>` on a matmul kernel: chains of g cores that read the same B
    tiles (same b, n and k ranges; only m differs), in ring order, by core: consecutive cores,
    or every p-th with a k split in p parts (the k parts of one block are adjacent)."""
    if chain is None:
        return {}
    sharing: dict[tuple, list[int]] = {}
    live: dict[int, Box] = {}
    for core, box in enumerate(boxes):
        if box is not None:
            key = tuple(r for name, r in box.items() if name != "m")
            sharing.setdefault(key, []).append(core)
            live[core] = box
    by_core: dict[int, tuple[int, ...]] = {}
    for members in sharing.values():
        for start in range(0, len(members), chain):
            group = members[start : start + chain]
            events = {len(b_events(live[c], dims, chunks)) for c in group}
            stride = group[1] - group[0] if len(group) > 1 else 1
            if (
                len(group) > 1
                and len(events) == 1
                and group == list(range(group[0], group[0] + stride * len(group), stride))
            ):
                for c in group:
                    by_core[c] = tuple(group)
    return by_core


def b_events(box: Box, dims: Sequence[IterDim], chunks: dict[str, int]) -> list[tuple]:
    """The B tiles a matmul core's box loads, in order: (matrix, n range, k range) per change."""
    keys: list[tuple] = []
    for ch in chunk_boxes(box, dims, chunks):
        for b in range(*ch.get("b", (0, 1))):
            key = (b, ch["n"], ch["k"])
            if not keys or keys[-1] != key:
                keys.append(key)
    return keys
