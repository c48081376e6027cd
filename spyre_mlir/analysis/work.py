"""Iteration spaces of kernels and how they are cut: over cores (spyre-divide-work) and into
sequential chunks per core (spyre-plan-scratchpad). convert-spyre-to-isa reads the same
model, so the three passes agree on what a split or a chunk means.

    matmul       b (batch, bmm), n (output sticks), m (rows), k (contraction sticks; never
                 split over cores)
    pointwise    d0 ... d{r-1}: the output's non-lane device dims (one step = one stick)
    reduce       the output's dims, and r: the reduced sticks (neither split nor chunked)
    gather       n: the rows gathered
    restickify   d0 ... : the result's non-lane device dims; when the stick moves to another
                 host dim (a transpose), the dim of the old stick dim advances in blocks of 64

A split `#spyre.split<m = 4, n = 8>` cuts each named dim into that many near-equal parts
(ceil(size / parts) units each, the last part ragged); cores take the parts in row-major
order of the dims, and cores beyond the product stay idle.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from spyre_mlir.analysis.sticks import LoopDim, loop_dims, loop_strides, operand_strides
from spyre_mlir.dialects import spyre
from spyre_mlir.layout import Layout

Box = dict[str, tuple[int, int]]
"""Half-open range per iteration dim, in units of the dim."""


@dataclass(frozen=True)
class IterDim:
    name: str
    size: int
    """Extent in units."""
    parallel: bool = True
    """May be split over cores."""
    chunkable: bool = True
    """May be cut into sequential chunks on a core."""


def iteration_dims(op: Operation) -> list[IterDim]:
    if isinstance(op, spyre.MatmulOp):
        a, b = spyre.device_layout(op.lhs.type), spyre.device_layout(op.rhs.type)
        m, k = a.shape[-2:]
        n = b.shape[-1]
        batch = [IterDim("b", a.shape[0])] if len(a.shape) == 3 else []
        return [
            *batch,
            IterDim("n", math.ceil(n / 64)),
            IterDim("m", m),
            IterDim("k", math.ceil(k / 64), parallel=False),
        ]
    if isinstance(op, spyre.PointwiseOp):
        return [IterDim(d.name, d.size) for d in pointwise_loops(op)[0]]
    if isinstance(op, spyre.GatherOp):
        return [IterDim("n", spyre.device_layout(op.result.type).shape[0])]
    if isinstance(op, spyre.SliceOp):
        return [IterDim(d.name, d.size) for d in slice_loops(op)]
    if isinstance(op, spyre.ReduceOp):
        src = spyre.device_layout(op.input.type)
        tile = reduce_tile_dim(op)
        return [IterDim(d.name, d.size) for d in loop_dims(src) if d.device_dim != tile] + [
            IterDim("r", src.device_size[tile], parallel=False, chunkable=False)
        ]
    if isinstance(op, spyre.RestickifyOp):
        src, dst = spyre.device_layout(op.input.type), spyre.device_layout(op.result.type)
        row = transpose_row_dim(src, dst)
        return [
            IterDim(d.name, math.ceil(d.size / 64) if d.device_dim == row else d.size)
            for d in restickify_loops(src, dst)
        ]
    raise ValueError(f"'{op.name}' is not a kernel compute op")


def reduce_tile_dim(op: spyre.ReduceOp) -> int:
    """The input device dim holding the reduced (stick) dim's sticks; the input must be in the
    generic layout and the result its splat (spyre-propagate-layouts sees to it)."""
    src = spyre.device_layout(op.input.type)
    d = op.dim.value.data
    if src.stick_dim != d or len(src.digits[d]) > 2:
        raise ValueError(f"spyre.reduce along dim {d} needs its input sticked on that dim")
    if len(src.digits[d]) == 2:
        return src.digits[d][1].device_dim
    # extent <= 64: the tile digit has size 1 (synthetic): where the generic layout places it,
    # else any device dim of size 1 (a loop of one: its stride is never used)
    generic = Layout.generic(src.shape, src.element_bytes)
    at = len(generic.device_size) - 3 if len(src.shape) > 1 else 0
    ones = [j for j in range(len(src.device_size) - 1) if src.device_size[j] == 1]
    if not ones:
        raise ValueError(f"spyre.reduce along dim {d}: its input layout has no device dim for the reduced dim's sticks")
    return at if at in ones else ones[0]


def transpose_row_dim(src: Layout, dst: Layout) -> int | None:
    """For a restickify that moves the stick to another host dim: the result's device dim
    that steps the source's stick dim one element at a time (it advances in 64-blocks).
    None when the sticks hold the same elements (a pure stick permutation)."""
    if dst.is_splat or src.is_splat or operand_strides(dst, src, list(range(len(dst.host_shape)))) is not None:
        return None
    hs = src.stick_dim
    for d in loop_dims(dst):
        if d.host_dim == hs and d.weight == 1:
            return d.device_dim
    return None


def lane_gather_dim(src: Layout, dst: Layout) -> int | None:
    """For a restickify from a sparse or splat layout (one element per stick, in lane 0 or in
    every lane: what a reduction along the stick dim leaves) to one sticked on host dim h: h, when the source
    steps h with a single digit (h's elements sit in evenly spaced sticks); else None. Such a
    relayout gathers lane 0 of up to 64 sticks into one stick: an SFP transpose of a block of
    `rows` sticks that writes one stick."""
    if not (src.is_sparse or src.is_splat) or dst.is_sparse or dst.is_splat or dst.stick_dim is None:
        return None
    h = dst.stick_dim
    return h if len(src.digits[h]) == 1 else None


def view_chain(v: SSAValue) -> tuple[spyre.ToDeviceOp, list[Operation]] | None:
    """to_device and the views (outermost last) that lead to v, if v is such a chain."""
    views: list[Operation] = []
    while isinstance(v.owner, spyre.PermuteOp | spyre.ReshapeOp):
        views.append(v.owner)
        v = v.owner.input
    if not isinstance(v.owner, spyre.ToDeviceOp):
        return None
    return v.owner, list(reversed(views))


def transfer_permutation(v: SSAValue) -> tuple[spyre.ToDeviceOp, list[int]] | None:
    """If v is a host transfer seen through views that one transfer can do (permutes before
    any reshape compose), the transfer and the host permutation; else None."""
    chain = view_chain(v)
    if chain is None:
        return None
    transfer, views = chain
    src = transfer.input.type
    assert isinstance(src, TensorType)
    perm = list(transfer.permutation.as_tuple()) if transfer.permutation else list(range(len(src.get_shape())))
    reshaped = spyre.device_layout(transfer.result.type).shape != tuple(src.get_shape()[p] for p in perm)
    for view in views:
        if isinstance(view, spyre.PermuteOp):
            if reshaped:
                return None  # a permute after a reshape is not one host transpose
            perm = [perm[p] for p in view.permutation.as_tuple()]
        else:
            reshaped = True
    return transfer, perm


def restickify_loops(src: Layout, dst: Layout) -> list[LoopDim]:
    """The result's loops, cut to nest inside the source's digits (the stick dims of a
    transposition excepted: blocks handle them)."""
    identity = list(range(len(dst.host_shape)))
    if transpose_row_dim(src, dst) is None:
        return loop_dims(dst, [(src, identity)])
    keep = frozenset(h for h in (src.stick_dim, dst.stick_dim) if h is not None)
    return loop_dims(dst, [(src, identity)], keep)


def slice_loops(op: spyre.SliceOp) -> list[LoopDim]:
    """The result's loops, cut to nest inside the input's digits."""
    src, dst = spyre.device_layout(op.input.type), spyre.device_layout(op.result.type)
    return loop_dims(dst, [(src, list(range(len(dst.host_shape))))])


def slice_strides(op: spyre.SliceOp, loops: Sequence[LoopDim] | None = None) -> list[int] | None:
    """The input's stick stride per loop of the result (`slice_loops`), a step multiplying it
    (element r[i] is x[start + i * step]); None when the input's sticks do not hold the
    result's elements, the result's padding reaches past the input's from the start, or a
    stepped dim is split over several of the input's digits."""
    src, dst = spyre.device_layout(op.input.type), spyre.device_layout(op.result.type)
    loops = slice_loops(op) if loops is None else loops
    strides = operand_strides(dst, src, list(range(len(dst.host_shape))), loops)
    if strides is None:
        return None
    step = op.steps
    for h, s0 in enumerate(op.start.as_tuple()):
        # the strides nest the loops in the input's digits from index 0; from the start on they
        # do only when the start moves the top digit alone (a multiple of its weight), and stay
        # inside the input when the result's last padded coordinate, from the start on, is
        # within the input's padded extent (else the copy reads sticks past the input)
        if src.digits[h] and s0 % max(d.weight for d in src.digits[h]):
            return None
        if s0 + step[h] * (dst.padded_extent(h) - 1) >= src.padded_extent(h):
            return None
    for j, d in enumerate(loops):
        if d.host_dim is None or step[d.host_dim] == 1:
            continue
        if len(src.digits[d.host_dim]) != 1:  # one digit: the stepped elements are evenly spaced sticks
            return None
        strides[j] *= step[d.host_dim]
    return strides


def pointwise_loops(op: spyre.PointwiseOp) -> tuple[list[LoopDim], list[list[int]]]:
    """The output's loops, cut to nest inside every input's digits, and each input's stick
    stride per loop (0 where it broadcasts)."""
    got = _loops_by_id(op.result.type, *(v.type for v in op.inputs))
    if isinstance(got, str):
        raise ValueError(got)
    loops, strides = got
    return list(loops), [list(s) for s in strides]


@functools.lru_cache(maxsize=1 << 12)
def _pointwise_loops(
    out_type: Attribute, *in_types: Attribute
) -> tuple[tuple[LoopDim, ...], tuple[tuple[int, ...], ...]] | str:
    """pointwise_loops by the op's types (all it depends on; spyre-fuse's row-group search asks
    again for the same ops' loops with every candidate member), or why there are none."""
    from spyre_mlir.analysis.sticks import broadcast_dim_map

    out = spyre.device_layout(out_type)
    ins = [spyre.device_layout(t) for t in in_types]
    maps = [broadcast_dim_map(out.shape, lay.shape) for lay in ins]
    loops = loop_dims(out, list(zip(ins, maps)))
    strides = []
    for i, (lay, m) in enumerate(zip(ins, maps)):
        st = operand_strides(out, lay, m, loops)
        if st is None:
            return (
                f"input {i} {lay.describe()} does not share the sticks of the output {out.describe()}: no stick "
                "stride per loop reads it (a stick along another dim, digits that do not nest in the output's, "
                "or an output padded past the input's extent)"
            )
        strides.append(tuple(st))
    return tuple(loops), tuple(strides)


_loops_by_id = spyre.by_identity(_pointwise_loops, 1 << 14)


def even_split(dims: Sequence[IterDim], cores: int) -> dict[str, int]:
    """Parts per dim: repeatedly double the parallel dim with the most units per part,
    while the product of parts fits the cores; parts are then trimmed so none is empty."""
    counts = {d.name: 1 for d in dims}
    while True:
        best = None
        for d in dims:
            if not d.parallel:
                continue
            c = counts[d.name]
            per = math.ceil(d.size / c)
            nxt = min(d.size, c * 2)
            if per <= 1 or math.prod(counts.values()) // c * nxt > cores:
                continue
            if best is None or per > best[1]:
                best = (d, per, nxt)
        if best is None:
            break
        counts[best[0].name] = best[2]
    return {d.name: math.ceil(d.size / math.ceil(d.size / counts[d.name])) for d in dims}


def parts(size: int, count: int) -> list[tuple[int, int]]:
    """Near-equal consecutive parts of range(size): ceil(size / count) units each."""
    per = math.ceil(size / count)
    return [(lo, min(size, lo + per)) for lo in range(0, size, per)]


def core_boxes(dims: Sequence[IterDim], split: dict[str, int], cores: int) -> list[Box | None]:
    """The box of each core (None: idle)."""
    per_dim = [parts(d.size, split.get(d.name, 1)) for d in dims]
    boxes: list[Box | None] = []
    for combo in itertools.product(*per_dim):
        boxes.append({d.name: r for d, r in zip(dims, combo)})
    if len(boxes) > cores:
        raise ValueError(f"split {split} needs {len(boxes)} cores, the device has {cores}")
    return boxes + [None] * (cores - len(boxes))


def kernel_core_boxes(kernel: spyre.KernelOp, cores: int) -> list[Box | None]:
    """The box of each core of a kernel with a split: core_boxes, placed on the cores its
    `spyre.core_order` names (box i on core order[i]; spyre-resident-chains), if it has one."""
    assert kernel.split is not None
    boxes = core_boxes(kernel_iteration_dims(kernel), kernel.split.as_dict(), cores)
    attr = kernel.attributes.get("spyre.core_order")
    if attr is None:
        return boxes
    order = attr.get_values()  # type: ignore[attr-defined]  (verified by spyre.KernelOp)
    if max(order) >= cores:
        raise ValueError(f"spyre.core_order names core {max(order)}, the device has {cores}")
    placed: list[Box | None] = [None] * cores
    for i, core in enumerate(order):
        placed[core] = boxes[i]
    return placed


def box_count(dims: Sequence[IterDim], split: dict[str, int]) -> int:
    """How many cores a split keeps busy (core_boxes' boxes that are not None)."""
    return math.prod(len(parts(d.size, split.get(d.name, 1))) for d in dims)


def chunk_boxes(box: Box, dims: Sequence[IterDim], chunks: dict[str, int]) -> list[Box]:
    """The sequential chunks of one core's box, in loop order (dims order, last fastest)."""
    per_dim = []
    for d in dims:
        lo, hi = box[d.name]
        per_dim.append([(lo + a, lo + b) for a, b in parts(hi - lo, chunks.get(d.name, 1))])
    return [{d.name: r for d, r in zip(dims, combo)} for combo in itertools.product(*per_dim)]


def max_chunk(dims: Sequence[IterDim], boxes: Sequence[Box | None], chunks: dict[str, int]) -> dict[str, int]:
    """The largest chunk extent per dim over all cores (what LX buffers must hold)."""
    out = {d.name: 0 for d in dims}
    for box in boxes:
        if box is None:
            continue
        for d in dims:
            lo, hi = box[d.name]
            out[d.name] = max(out[d.name], math.ceil((hi - lo) / chunks.get(d.name, 1)))
    return out


# region Buffers


@dataclass(frozen=True)
class SfpStep:
    """One SFP instruction of a pointwise body: dst = fn(srcs...) (an f32 immediate may stand
    for the second source). Locations: ("in", i) input tile, ("t", j) f32 temporary,
    ("out", 0) the f16 output tile."""

    fn: str
    dst: tuple[str, int]
    srcs: tuple[tuple[str, int], ...]
    imm: float | None = None


_COMMUTATIVE = frozenset({"add", "mul", "max", "min"})


def pointwise_program(op: spyre.PointwiseOp) -> tuple[list[SfpStep], int]:
    """The SFP steps of a pointwise body and the number of f32 temporaries they need.

    Constants become immediates; a temporary is reused once its value is dead; the yielded
    value is written straight to the output tile when nothing else reads it."""
    from xdsl.dialects import arith

    block = op.body.block
    loc: dict = {a: ("in", i) for i, a in enumerate(block.args)}
    consts: dict = {}
    yielded = block.last_op.values[0]  # type: ignore[union-attr]
    ops = [o for o in block.ops if not isinstance(o, spyre.YieldOp)]
    last_use: dict = {}
    for idx, o in enumerate(ops):
        for v in o.operands:
            last_use[v] = idx
        if o.name == "arith.select":  # the mask is read by the select, through its cmpf
            last_use[o.operands[0].owner.operands[0]] = idx  # type: ignore[union-attr]
    free: list[int] = []
    n_temps = 0
    steps: list[SfpStep] = []

    def place(result: SSAValue, srcs: list, idx: int) -> tuple[str, int]:
        """Where op `idx`'s result goes: operands dying here free their temporaries (in-place
        reuse); the yielded value read by nothing else goes straight to the output tile."""
        nonlocal n_temps
        for v in srcs:
            if last_use.get(v) == idx and loc[v][0] == "t" and loc[v][1] not in free:
                free.append(loc[v][1])
        if result is yielded and not any(u.operation is not block.last_op for u in result.uses):
            dst = ("out", 0)
        else:
            if free:
                j = free.pop(0)
            else:
                j, n_temps = n_temps, n_temps + 1
            dst = ("t", j)
        loc[result] = dst
        return dst

    for idx, o in enumerate(ops):
        fn = spyre.POINTWISE_BODY_OPS[o.name]
        if fn == "cmp":  # folded into the select that reads it: (mask != 0)
            continue
        if fn == "select":
            mask = o.operands[0].owner.operands[0]  # type: ignore[union-attr]
            srcs3 = [mask, o.operands[1], o.operands[2]]
            if any(v in consts for v in srcs3):
                raise ValueError("a select on constants has no SFP form")
            dst = place(o.results[0], srcs3, idx)
            steps.append(SfpStep("select", dst, tuple(loc[v] for v in srcs3)))
            continue
        if fn == "constant":
            assert isinstance(o, arith.ConstantOp)
            consts[o.result] = float(o.value.value.data)  # type: ignore[union-attr]
            continue
        srcs = list(o.operands)
        imm = None
        if len(srcs) == 2 and srcs[0] in consts and srcs[1] in consts:
            consts[o.results[0]] = _fold(fn, consts[srcs[0]], consts[srcs[1]])
            continue
        pre: SfpStep | None = None
        if len(srcs) == 2 and srcs[0] in consts and fn not in _COMMUTATIVE:
            # c - x = (-x) + c;  c / x = recip(x) * c
            if fn not in ("sub", "div"):
                raise ValueError(f"'{o.name}' with a constant first operand has no SFP form")
            pre_fn, fn = ("neg", "add") if fn == "sub" else ("recip", "mul")
            pre = SfpStep(pre_fn, ("pre", 0), (loc[srcs[1]],))
            c = consts[srcs[0]]
            srcs = [srcs[1]]
            imm = c
        elif len(srcs) == 2 and any(s in consts for s in srcs):
            if srcs[0] in consts:
                srcs = [srcs[1], srcs[0]]
            imm = consts[srcs[1]]
            srcs = srcs[:1]
        dst = place(o.results[0], srcs, idx)
        if pre is not None:  # the one-operand step runs in place in the destination
            steps.append(SfpStep(pre.fn, dst, pre.srcs))
            if imm == 1.0 and fn == "mul":
                continue
            steps.append(SfpStep(fn, dst, (dst,), imm))
            continue
        steps.append(SfpStep(fn, dst, tuple(loc[s] for s in srcs), imm))
    if loc.get(yielded, None) != ("out", 0):
        if yielded in consts:
            raise ValueError("a pointwise body yielding a constant has no SFP form")
        steps.append(SfpStep("copy", ("out", 0), (loc[yielded],)))
    return steps, n_temps


def _fold(fn: str, a: float, b: float) -> float:
    import math

    return {
        "add": a + b,
        "sub": a - b,
        "mul": a * b,
        "div": a / b if b else math.copysign(math.inf, a) if a else math.nan,
        "max": max(a, b),
        "min": min(a, b),
    }[fn]


def matmul_tiles(m: int, n: int, k: int, a_resident: bool = False, epilogue: bool = False) -> dict[str, int]:
    """LX sticks of a matmul chunk's tiles: m rows by k sticks of A, k sticks of 64 rows by n
    sticks of B, the fp32 accumulator (two sticks per 64 lanes) and the rounded output.
    A resident A (`a_resident`: an earlier launch left it in LX) needs no tile; with an
    epilogue the accumulator is read by the epilogue, whose result tile (epilogue_buffers)
    replaces the output tile."""
    bufs = {"lhs": m * k, "rhs": 64 * k * n, "acc": 2 * m * n, "out": m * n}
    if a_resident:
        del bufs["lhs"]
    if epilogue:
        del bufs["out"]
    return bufs


def kernel_buffers(
    op: Operation, ext: dict[str, int], a_resident: bool = False, epilogue: bool = False
) -> dict[str, int]:
    """LX sticks each buffer of a kernel needs for a chunk of extent `ext` (units per dim);
    a matmul's `a_resident` and `epilogue` as in matmul_tiles."""
    if isinstance(op, spyre.MatmulOp):
        return matmul_tiles(ext["m"], ext["n"], ext["k"], a_resident, epilogue)
    if isinstance(op, spyre.PointwiseOp):
        dims, all_strides = pointwise_loops(op)
        vectors = math.prod(ext[d.name] for d in dims)
        bufs = {}
        for i, strides in enumerate(all_strides):
            bufs[f"in{i}"] = math.prod(ext[d.name] for d, s in zip(dims, strides) if s != 0)
        bufs["out"] = vectors
        _, temps = pointwise_program(op)
        for j in range(temps):
            bufs[f"t{j}"] = 2 * vectors
        return bufs
    if isinstance(op, spyre.GatherOp):
        return {"rows": ext["n"] * spyre.device_layout(op.table.type).device_size[0]}
    if isinstance(op, spyre.SliceOp):
        return {"tile": math.prod(ext.values())}
    if isinstance(op, spyre.ReduceOp):
        vectors = math.prod(v for k, v in ext.items() if k != "r")
        bufs = {"in": vectors * ext["r"], "out": vectors}
        if op.kind.data in ("sum", "mean"):
            bufs["acc"] = 2 * vectors
        return bufs
    if isinstance(op, spyre.RestickifyOp):
        src, dst = spyre.device_layout(op.input.type), spyre.device_layout(op.result.type)
        units = math.prod(ext.values())
        if lane_gather_dim(src, dst) is not None:
            return {"src": 64 * units, "dst": units}
        if transpose_row_dim(src, dst) is None:
            return {"tile": units}
        return {"src": 64 * units, "dst": 64 * units}
    raise ValueError(f"'{op.name}' is not a kernel compute op")


# endregion


# region Row groups: reductions and the element-wise ops around them, one kernel


@dataclass(frozen=True)
class RowGroup:
    """Reductions along the stick dim of one `full` layout and the pointwise ops around them
    (softmax, layer norm, RMS norm), computed in one kernel: each core takes whole rows, every
    intermediate stays in its LX, only the group's inputs and its result move through DDR.

        for each chunk of rows:                       (iteration dims: the outer loops, r)
            DMA the inputs' tiles in
            for op in ops: reduce / SFP steps, LX -> LX (each result rounded as if stored)
            DMA the last op's result out

    Values are `full` (the layout of the reduced tensor), `splat` (a reduction's result
    layout: one element per row, in every lane) or inputs read through their own strides."""

    ops: tuple[Operation, ...]
    full: Layout
    tile: int
    """The full layout's device dim of the reduced dim's sticks."""
    outer: tuple[LoopDim, ...]
    """The full layout's other loops, outer first."""
    splat: Layout

    @property
    def r(self) -> int:
        return self.full.device_size[self.tile]

    def dims(self) -> list[IterDim]:
        return [IterDim(d.name, d.size) for d in self.outer] + [IterDim("r", self.r, parallel=False, chunkable=False)]

    def is_full(self, v) -> bool:
        return spyre.device_layout(v.type) == self.full

    def strides(self, v, user: Operation) -> list[int]:
        """DDR stick strides of value `v` (read by `user`) per loop [*outer, r]; 0 = broadcast."""
        lay = spyre.device_layout(v.type)
        if lay == self.full:
            st = self.full.stick_strides
            return [st[d.device_dim] for d in self.outer] + [st[self.tile]]
        if lay == self.splat:  # by the splat's own digits: its device dims may be in another order
            return loop_strides(self.splat, self.outer) + [0]
        assert isinstance(user, spyre.PointwiseOp)
        loops, all_strides = pointwise_loops(user)
        by_dim = {d.device_dim: s for d, s in zip(loops, all_strides[list(user.inputs).index(v)])}
        return [by_dim.get(d.device_dim, 0) for d in self.outer] + [by_dim.get(self.tile, 0)]


def row_group(ops: Sequence[Operation]) -> RowGroup:
    """The row group of `ops` (a kernel's compute ops, in order), or ValueError saying why
    they cannot form one."""
    reduces = [o for o in ops if isinstance(o, spyre.ReduceOp)]
    if not reduces or any(not isinstance(o, spyre.ReduceOp | spyre.PointwiseOp) for o in ops):
        raise ValueError("a kernel of several compute ops holds reductions and pointwise ops only")
    first = reduces[0]
    full = spyre.device_layout(first.input.type)
    splat = spyre.device_layout(first.result.type)
    tile = reduce_tile_dim(first)
    for r in reduces[1:]:
        if (
            spyre.device_layout(r.input.type) != full
            or r.dim.value.data != first.dim.value.data
            or spyre.device_layout(r.result.type) != splat
        ):
            raise ValueError("the reductions of a row group reduce one layout along one dim")
    full_loops = loop_dims(full)
    outer = tuple(d for d in full_loops if d.device_dim != tile)
    if len(full_loops) != len(full.device_size) - 1:
        raise ValueError("a row group's layout has no refined loops")
    for o in ops:
        if not isinstance(o, spyre.PointwiseOp):
            continue
        out = spyre.device_layout(o.result.type)
        if out not in (full, splat):
            raise ValueError(f"a pointwise op of a row group computes the reduced layout or its splat, not {out}")
        loops, _ = pointwise_loops(o)
        if [(d.device_dim, d.size) for d in loops] != [
            (d.device_dim, d.size if out == full or d.device_dim != tile else 1) for d in full_loops
        ]:
            raise ValueError("a pointwise op of a row group must iterate the reduced layout's sticks")
    return RowGroup(tuple(ops), full, tile, outer, splat)


def kernel_ops(kernel: spyre.KernelOp) -> list[Operation]:
    """The compute ops of a kernel, in order (views and the yield excluded)."""
    return [op for op in kernel.body.block.ops if not isinstance(op, spyre.YieldOp | spyre.PermuteOp | spyre.ReshapeOp)]


def single_pointwise(kernel: Operation | None) -> spyre.PointwiseOp | None:
    """The pointwise op of a kernel of one compute op that is one (else None): the only kind
    whose lowering keeps its result in LX (spyre.resident_out) or reads an operand there
    (spyre.resident_in) in spyre-onchip-relayout's bands and boxes."""
    if not isinstance(kernel, spyre.KernelOp):
        return None
    ops = kernel_ops(kernel)
    return ops[0] if len(ops) == 1 and isinstance(ops[0], spyre.PointwiseOp) else None


@dataclass(frozen=True)
class Epilogue:
    """A matmul and the pointwise op applied to its result (bias, activation, residual), in one
    kernel: after the last k chunk of an output tile the fp32 sums are rounded into the tile
    (as a store would), the pointwise steps run on it in LX with the other inputs' tiles, and
    only their result is stored. `strides[i]` is input i's DDR stick stride per (n stick,
    m row) of the output; `operand` the input that is the matmul's result."""

    matmul: spyre.MatmulOp
    pointwise: spyre.PointwiseOp
    operand: int
    strides: tuple[tuple[int, int], ...]


def epilogue(ops: Sequence[Operation]) -> Epilogue:
    """The epilogue form of `ops`, or ValueError saying why they are not one."""
    if len(ops) != 2 or not isinstance(ops[0], spyre.MatmulOp) or not isinstance(ops[1], spyre.PointwiseOp):
        raise ValueError("an epilogue kernel holds a spyre.matmul and then a spyre.pointwise")
    mm, pw = ops
    out = spyre.device_layout(mm.result.type)
    if len(out.shape) != 2 or spyre.device_layout(pw.result.type) != out:
        raise ValueError("an epilogue computes the (2-D) matmul result's layout")
    if mm.result not in pw.inputs or len([v for v in pw.inputs if v is mm.result]) != 1:
        raise ValueError("an epilogue reads the matmul's result once")
    loops, all_strides = pointwise_loops(pw)
    roles = [(d.host_dim, d.weight) for d in loops]
    if sorted(roles, key=str) != sorted([(1, 64), (0, 1)], key=str) or len(loops) != 2:
        raise ValueError("an epilogue iterates the output's sticks and rows")
    n_at, m_at = roles.index((1, 64)), roles.index((0, 1))
    strides = tuple((st[n_at], st[m_at]) for st in all_strides)
    return Epilogue(mm, pw, list(pw.inputs).index(mm.result), strides)


def kernel_iteration_dims(kernel: spyre.KernelOp) -> list[IterDim]:
    ops = kernel_ops(kernel)
    if len(ops) == 1:
        return iteration_dims(ops[0])
    if isinstance(ops[0], spyre.MatmulOp):
        epilogue(ops)
        return iteration_dims(ops[0])
    return row_group(ops).dims()


def epilogue_buffers(ep: Epilogue, m: int, n: int) -> dict[str, int]:
    """LX sticks of an epilogue's buffers for an output tile of m rows x n sticks: `e{i}` the
    other inputs' tiles, `t{k}` f32 temporaries, `res` the result tile."""
    bufs: dict[str, int] = {}
    for i, (sn, sm) in enumerate(ep.strides):
        if i != ep.operand:
            bufs[f"e{i}"] = (n if sn else 1) * (m if sm else 1)
    for k in range(pointwise_program(ep.pointwise)[1]):
        bufs[f"t{k}"] = 2 * m * n
    bufs["res"] = m * n
    return bufs


def epilogue_sticks(ep: Epilogue) -> tuple[int, int, int, int]:
    """LX sticks the epilogue adds per output tile: (per output stick of the tile, per n stick,
    per row, fixed): full-tile inputs, the result tile and the f32 temporaries; inputs that
    vary along n only (a bias) or along rows only; a single broadcast stick."""
    per_mn = 1 + 2 * pointwise_program(ep.pointwise)[1]
    per_n = per_m = fixed = 0
    for i, (sn, sm) in enumerate(ep.strides):
        if i == ep.operand:
            continue
        if sn and sm:
            per_mn += 1
        elif sn:
            per_n += 1
        elif sm:
            per_m += 1
        else:
            fixed += 1
    return per_mn, per_n, per_m, fixed


def row_group_buffers(group: RowGroup, ext: dict[str, int], args: Sequence) -> dict[str, int]:
    """LX sticks per buffer of a row group's chunk: `a{i}` the kernel inputs read (their
    non-broadcast loops), `v{j}` each op's result, `t{k}` the f32 temporaries of the pointwise
    steps (shared by the ops), `acc` a sum's f32 partials."""
    vectors = math.prod(ext[d.name] for d in group.outer)
    r = ext["r"]
    bufs: dict[str, int] = {}
    for i, a in enumerate(args):
        users = [o for o in group.ops if a in o.operands]
        if users:
            st = group.strides(a, users[0])
            sizes = [ext[d.name] for d in group.outer] + [r]
            bufs[f"a{i}"] = math.prod(n for n, s in zip(sizes, st) if s != 0)
    temps = 0
    for j, o in enumerate(group.ops):
        full = group.is_full(o.results[0])
        bufs[f"v{j}"] = vectors * (r if full else 1)
        if isinstance(o, spyre.PointwiseOp):
            temps = max(temps, pointwise_program(o)[1])
    for k in range(temps):
        bufs[f"t{k}"] = 2 * vectors * r
    if any(isinstance(o, spyre.ReduceOp) and o.kind.data in ("sum", "mean") for o in group.ops):
        bufs["acc"] = 2 * vectors
    return bufs


# endregion
