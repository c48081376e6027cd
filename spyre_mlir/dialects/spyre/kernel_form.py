"""What a kernel's compute ops may form, and what each form means to the passes: one op, a
matmul and its pointwise epilogue, slices and the concat that reads them, a pointwise op and
the sliced concats it reads, a row group (reductions and the pointwise ops around them), or
attention (a matmul, a row group, a matmul, and maybe the restickify of the context), or a
gather whose rows a matmul or a restickify reads as an operand.

`kernel_form` recognises a form (or raises ValueError saying why the ops form none); the
`spyre.kernel` verifier requires one, and its split and chunks name the form's iteration dims
(`KernelForm.dims`; what a split means is `iteration.py`). Every function here is a pure
function of the ops and their layouts, which the passes and convert-spyre-to-isa read.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.ir import Attribute, Operation, SSAValue

from spyre_mlir.dialects.spyre.attrs import by_identity, device_layout
from spyre_mlir.dialects.spyre.iteration import IterDim, restickify_loops, transpose_row_dim
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
)
from spyre_mlir.layout import (
    Layout,
    LoopDim,
    broadcast_dim_map,
    loop_dims,
    loop_strides,
    matrix_strides,
    operand_strides,
)
from spyre_mlir.target.constants import F16_LANES, TRANSPOSE_BLOCK


@dataclass(frozen=True)
class KernelForm:
    """What a kernel's compute ops are: one op, a matmul and its epilogue, slices and the
    concat that reads them, a row group, or attention (`kernel_form`)."""

    compute: Operation | None
    """The op whose iteration dims the kernel takes and whose lowering it runs (the matmul
    of an epilogue, the concat of sliced parts); None for a row group and for attention."""
    epilogue: Epilogue | None = None
    group: RowGroup | None = None
    attention: Attention | None = None
    sliced_inputs: tuple[int, ...] = ()
    """Of a pointwise compute op, the inputs that are concats of slices in the kernel, each
    read part by part from its slices' inputs (`pointwise_sliced_inputs`)."""
    gathered: tuple[GatheredOperand, ...] = ()
    """Of a matmul, a restickify or attention, the operands gathers in the kernel make
    (`gathered_operand`)."""

    def dims(self) -> list[IterDim]:
        if self.group is not None:
            return self.group.dims()
        if self.attention is not None:
            return self.attention.dims()
        assert self.compute is not None
        return iteration_dims(self.compute)


def kernel_form(ops: Sequence[Operation]) -> KernelForm:
    """The form of a kernel's compute ops (`kernel_ops`), or ValueError saying why they form
    none."""
    if len(ops) == 1:
        return KernelForm(ops[0])
    if isinstance(ops[0], GatherOp):
        return _with_gathered(ops)
    matmul_last = isinstance(ops[-1], MatmulOp) or isinstance(ops[-1], RestickifyOp) and isinstance(ops[-2], MatmulOp)
    if isinstance(ops[0], MatmulOp) and matmul_last and len(ops) > 2:
        return KernelForm(None, attention=attention(ops))
    if isinstance(ops[0], MatmulOp):
        return KernelForm(ops[0], epilogue=epilogue(ops))
    if isinstance(ops[-1], ConcatOp):
        return KernelForm(sliced_concat(ops))
    if isinstance(ops[-1], PointwiseOp) and any(isinstance(o, ConcatOp) for o in ops):
        return KernelForm(ops[-1], sliced_inputs=pointwise_sliced_inputs(ops))
    return KernelForm(None, group=row_group(ops))


@dataclass(frozen=True)
class GatheredOperand:
    """A gather whose result one matmul, restickify or attention product reads, through views,
    as one operand and nothing else reads: the gather's rows are the operand's sticks (the
    views reinterpret the gather's result, stick for stick), so each load of the operand the op's lowering issues is
    a gather of those rows' sticks from the table instead, and the gather's result is never
    stored. A page of a KV cache is then read once, by the product or the relayout that needs
    it, where a gather kernel would write it to DDR for them to read again."""

    gather: GatherOp
    value: SSAValue
    """The compute op's operand: the gather's result, or the last view of it (or of the
    transpose's result)."""
    transposed: RestickifyOp | None = None
    """A block transpose between the gather and a matmul's B (a page's keys as K^T): each
    64 x 64 block of a B tile is gathered as 64 rows' stick and transposed in LX."""


def read_through_views(v: SSAValue) -> tuple[SSAValue, list[Operation], Operation | None]:
    """`v` followed through the views (reshapes, permutes) that alone read it: the last of them
    (or `v`), those views in order, and the one op that reads it (None: several, or none)."""
    views: list[Operation] = []
    while len(uses := list(v.uses)) == 1 and isinstance(uses[0].operation, ReshapeOp | PermuteOp):
        views.append(uses[0].operation)
        v = uses[0].operation.results[0]
    return v, views, uses[0].operation if len(uses) == 1 else None


def _with_gathered(ops: Sequence[Operation]) -> KernelForm:
    """The form of a kernel whose ops start with gathers (and the block transposes of their
    rows): the rest's form, a matmul, a restickify or attention, with the operands they make."""
    gathers: list[GatherOp] = []
    while len(gathers) < len(ops) and isinstance(ops[len(gathers)], GatherOp):
        gathers.append(ops[len(gathers)])  # type: ignore[arg-type]
    users = {g: read_through_views(g.result)[2] for g in gathers}
    rest = [
        o for o in ops[len(gathers) :] if not (isinstance(o, RestickifyOp) and o in users.values() and o is not ops[-1])
    ]
    if not rest:
        raise ValueError("a gathered-operand kernel holds gathers and the op that reads them")
    form = kernel_form(rest)
    if form.attention is not None:
        consumers: list[Operation] = [form.attention.scores, form.attention.context]
    elif isinstance(form.compute, MatmulOp | RestickifyOp) and len(rest) == 1:
        consumers = [form.compute]
    else:
        raise ValueError(
            "a gathered-operand kernel's gathers are read by a spyre.matmul, a spyre.restickify or attention"
        )
    gathered = []
    for g in gathers:
        user = users[g]
        transposed = user if isinstance(user, RestickifyOp) and user not in rest else None
        gathered.append(gathered_operand(g, transposed, consumers))
    if len({id(x.value) for x in gathered}) != len(gathered):
        raise ValueError("a gathered-operand kernel's gathers make different operands")
    return dataclasses.replace(form, gathered=tuple(gathered))


def gathered_operand(
    gather: GatherOp, transposed: RestickifyOp | None, consumers: Sequence[Operation]
) -> GatheredOperand:
    """The operand of one of `consumers` that a gather makes, read through views (or through
    `transposed`, a block transpose read by a matmul alone as its B), or ValueError saying why
    it is not one."""
    v, _, user = read_through_views(gather.result)
    if transposed is not None:
        if user is not transposed:
            raise ValueError("a gathered-operand kernel's transposed gather is read by its restickify alone")
        src, dst = device_layout(transposed.input.type), device_layout(transposed.result.type)
        if (
            transpose_row_dim(src, dst) is None
            or src.stick_dim is None
            or dst.stick_dim is None
            or src.host_shape[src.stick_dim] % TRANSPOSE_BLOCK
            or dst.host_shape[dst.stick_dim] % TRANSPOSE_BLOCK
        ):
            raise ValueError("a gathered-operand kernel's restickify before its matmul transposes whole 64 x 64 blocks")
        v, _, user = read_through_views(transposed.result)
        if not isinstance(user, MatmulOp) or user not in consumers or user.rhs is not v or user.lhs is v:
            raise ValueError("a gathered-operand kernel's transposed rows are a matmul's B alone")
        return GatheredOperand(gather, v, transposed)
    if user is None or user not in consumers:
        raise ValueError(
            "a gathered-operand kernel's gather is read by its matmul, restickify or attention alone, through views"
        )
    if isinstance(user, MatmulOp) and user.lhs is user.rhs:
        raise ValueError("a gathered-operand kernel's matmul reads the gather's rows as one operand, not both")
    return GatheredOperand(gather, v)


def sliced_concat(ops: Sequence[Operation]) -> ConcatOp:
    """The concat of a kernel of slices and the concat that reads them (`ops` in order), or
    ValueError saying why they are not one. Each slice is read by the concat alone: its
    part is DMAed from the slice's input, from the slice's start, and never stored (the
    lowering refuses a slice whose input's sticks do not hold the part by one stride per
    loop)."""
    *slices, cat = ops
    if not isinstance(cat, ConcatOp) or not slices:
        raise ValueError("a sliced concat kernel holds slices and then the spyre.concat that reads them")
    for sl in slices:
        if not isinstance(sl, SliceOp) or sl.result not in cat.inputs:
            raise ValueError("a sliced concat kernel's ops before its concat are slices that the concat reads")
        if any(u.operation is not cat for u in sl.result.uses):
            raise ValueError("a sliced concat kernel's slices are read by its concat alone")
    return cat


def pointwise_sliced_inputs(ops: Sequence[Operation]) -> tuple[int, ...]:
    """The inputs of a kernel's pointwise op that are concats of slices in the kernel (`ops`
    in order: the slices, the concats that read them, the pointwise op last), or ValueError
    saying why the ops are not such a kernel. Each concat is placed as the pointwise op's
    result and read by it alone, each of its parts is a slice it alone reads, and the lowering
    DMAs each part of a tile from the slice's input (one stride per loop: it refuses a slice
    whose input's sticks do not hold the part so)."""
    *rest, pw = ops
    if not isinstance(pw, PointwiseOp):
        raise ValueError("a kernel of sliced concats read by a pointwise op ends with the spyre.pointwise")
    out = device_layout(pw.result.type).canonical()
    cats = [o for o in rest if isinstance(o, ConcatOp)]
    parts: list[Operation] = []
    for cat in cats:
        slices = [o for o in rest if isinstance(o, SliceOp) and o.result in cat.inputs]
        if any(not isinstance(v.owner, SliceOp) or v.owner not in slices for v in cat.inputs):
            raise ValueError("a concat a pointwise op reads in its kernel has slices in the kernel for parts")
        sliced_concat([*slices, cat])
        if any(u.operation is not pw for u in cat.result.uses) or device_layout(cat.result.type).canonical() != out:
            raise ValueError("a concat a pointwise op reads in its kernel is read by it alone, placed as its result")
        parts += slices
    if len(parts) + len(cats) != len(rest):
        raise ValueError("a kernel of sliced concats read by a pointwise op holds only those slices and concats")
    return tuple(i for i, v in enumerate(pw.inputs) if v.owner in cats)


def iteration_dims(op: Operation) -> list[IterDim]:
    """The iteration dims of a kernel compute op, outer first (iteration.py says what each
    dim's unit is)."""
    if isinstance(op, MatmulOp):
        a, b = device_layout(op.lhs.type), device_layout(op.rhs.type)
        m, k = a.shape[-2:]
        n = b.shape[-1]
        batch = [IterDim("b", a.shape[0])] if len(a.shape) == 3 else []
        return [
            *batch,
            IterDim("n", math.ceil(n / F16_LANES)),
            IterDim("m", m),
            IterDim("k", math.ceil(k / F16_LANES), parallel=False),
        ]
    if isinstance(op, PointwiseOp):
        return [IterDim(d.name, d.size) for d in pointwise_loops(op)[0]]
    if isinstance(op, GatherOp):
        return [IterDim("n", device_layout(op.result.type).shape[0])]
    if isinstance(op, ScatterOp):
        o, n, _ = device_layout(op.values.type).shape
        return [IterDim("o", o), IterDim("n", n)]
    if isinstance(op, SliceOp):
        return [IterDim(d.name, d.size) for d in slice_loops(op)]
    if isinstance(op, ConcatOp):
        return [IterDim(d.name, d.size) for d in loop_dims(device_layout(op.result.type))]
    if isinstance(op, ReduceOp):
        src = device_layout(op.input.type)
        tile = reduce_tile_dim(op)
        return [IterDim(d.name, d.size) for d in loop_dims(src) if d.device_dim != tile] + [
            IterDim("r", src.device_size[tile], parallel=False, chunkable=False)
        ]
    if isinstance(op, RestickifyOp):
        src, dst = device_layout(op.input.type), device_layout(op.result.type)
        row = transpose_row_dim(src, dst)
        return [
            IterDim(d.name, math.ceil(d.size / TRANSPOSE_BLOCK) if d.device_dim == row else d.size)
            for d in restickify_loops(src, dst)
        ]
    raise ValueError(f"'{op.name}' is not a kernel compute op")


def reduce_tile_dim(op: ReduceOp) -> int:
    """The input device dim holding the reduced (stick) dim's sticks; the input must be in the
    generic layout and the result its splat (spyre-propagate-layouts sees to it)."""
    src = device_layout(op.input.type)
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


def slice_loops(op: SliceOp) -> list[LoopDim]:
    """The result's loops, cut to nest inside the input's digits."""
    src, dst = device_layout(op.input.type), device_layout(op.result.type)
    return loop_dims(dst, [(src, list(range(len(dst.host_shape))))])


def pointwise_loops(op: PointwiseOp) -> tuple[list[LoopDim], list[list[int]]]:
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
    out = device_layout(out_type)
    ins = [device_layout(t) for t in in_types]
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


_loops_by_id = by_identity(_pointwise_loops, 1 << 14)


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
        return device_layout(v.type) == self.full

    def strides(self, v, user: Operation) -> list[int]:
        """DDR stick strides of value `v` (read by `user`) per loop [*outer, r]; 0 = broadcast."""
        lay = device_layout(v.type)
        if lay == self.full:
            st = self.full.stick_strides
            return [st[d.device_dim] for d in self.outer] + [st[self.tile]]
        if lay == self.splat:  # by the splat's own digits: its device dims may be in another order
            return loop_strides(self.splat, self.outer) + [0]
        assert isinstance(user, PointwiseOp)
        loops, all_strides = pointwise_loops(user)
        by_dim = {d.device_dim: s for d, s in zip(loops, all_strides[list(user.inputs).index(v)])}
        return [by_dim.get(d.device_dim, 0) for d in self.outer] + [by_dim.get(self.tile, 0)]


def row_group(ops: Sequence[Operation]) -> RowGroup:
    """The row group of `ops` (a kernel's compute ops, in order), or ValueError saying why
    they cannot form one."""
    reduces = [o for o in ops if isinstance(o, ReduceOp)]
    if not reduces or any(not isinstance(o, ReduceOp | PointwiseOp) for o in ops):
        raise ValueError("a kernel of several compute ops holds reductions and pointwise ops only")
    first = reduces[0]
    full = device_layout(first.input.type)
    splat = device_layout(first.result.type)
    tile = reduce_tile_dim(first)
    for r in reduces[1:]:
        if (
            device_layout(r.input.type) != full
            or r.dim.value.data != first.dim.value.data
            or device_layout(r.result.type) != splat
        ):
            raise ValueError("the reductions of a row group reduce one layout along one dim")
    full_loops = loop_dims(full)
    outer = tuple(d for d in full_loops if d.device_dim != tile)
    if len(full_loops) != len(full.device_size) - 1:
        raise ValueError("a row group's layout has no refined loops")
    for o in ops:
        if not isinstance(o, PointwiseOp):
            continue
        out = device_layout(o.result.type)
        if out not in (full, splat):
            raise ValueError(f"a pointwise op of a row group computes the reduced layout or its splat, not {out}")
        loops, _ = pointwise_loops(o)
        if [(d.device_dim, d.size) for d in loops] != [
            (d.device_dim, d.size if out == full or d.device_dim != tile else 1) for d in full_loops
        ]:
            raise ValueError("a pointwise op of a row group must iterate the reduced layout's sticks")
    return RowGroup(tuple(ops), full, tile, outer, splat)


@dataclass(frozen=True)
class Epilogue:
    """A matmul and the pointwise op applied to its result (bias, activation, residual), in one
    kernel: after the last k chunk of an output tile the fp32 sums are rounded into the tile
    (as a store would), the pointwise steps run on it in LX with the other inputs' tiles, and
    only their result is stored. `strides[i]` is input i's DDR stick stride per (n stick,
    m row) of the output; `operand` the input that is the matmul's result."""

    matmul: MatmulOp
    pointwise: PointwiseOp
    operand: int
    strides: tuple[tuple[int, int], ...]


def epilogue(ops: Sequence[Operation]) -> Epilogue:
    """The epilogue form of `ops`, or ValueError saying why they are not one."""
    mm, pw = ops if len(ops) == 2 else (None, None)
    if not isinstance(mm, MatmulOp) or not isinstance(pw, PointwiseOp):
        raise ValueError("an epilogue kernel holds a spyre.matmul and then a spyre.pointwise")
    out = device_layout(mm.result.type)
    if len(out.shape) != 2 or device_layout(pw.result.type) != out:
        raise ValueError("an epilogue computes the (2-D) matmul result's layout")
    if mm.result not in pw.inputs or len([v for v in pw.inputs if v is mm.result]) != 1:
        raise ValueError("an epilogue reads the matmul's result once")
    loops, all_strides = pointwise_loops(pw)
    roles = [(1, F16_LANES), (0, 1)]  # the output's sticks, its rows
    at: dict[tuple[int, int], int] = {}
    for i, d in enumerate(loops):
        if d.host_dim is None and d.size == 1:
            continue  # a unit loop (one stick, or one row): its strides are never stepped
        role = (d.host_dim, d.weight)
        if role not in roles or role in at:
            raise ValueError("an epilogue iterates the output's sticks and rows")
        at[role] = i
    strides = tuple(
        (st[at[roles[0]]] if roles[0] in at else 0, st[at[roles[1]]] if roles[1] in at else 0) for st in all_strides
    )
    return Epilogue(mm, pw, list(pw.inputs).index(mm.result), strides)


@dataclass(frozen=True)
class Attention:
    """Attention in one kernel: a batched product (the scores, q @ k^T), a row group over its
    rows (the softmax, with a mask's add or a soft cap), and a batched product reading the
    group's result as its A (the context, p @ v), the two views between them looked through.
    Each core takes rows of one or more matrices: per chunk of rows it computes the scores'
    fp32 sums, rounds them as a store would, runs the group's steps and the second product on
    them in LX; only q's rows, each matrix's K^T and V once, the group's other inputs (the
    mask's rows) and the context move through DDR.

    `rows` is the group's outer loop that steps one row of the products (a matrix's rows may
    span several of its other loops: a query head's rows after another's); `row_stride` and
    `matrix_stride` are the scores' stick strides per row and per matrix, by which a row's
    first stick is decoded into the group's outer loops (`group_index`).

    Iteration dims: b (the matrices), p (a row's position along `rows`) and h (which run of
    `positions` rows: a query head of a GQA group), row m = h * positions + p. A core's box
    takes positions of every head of its matrices, so that the rows of a mask broadcast over
    the heads are read once for all of them; the lowering takes each matrix's chunks of
    positions in turn and, inside a chunk, each head (b and h are never chunked)."""

    scores: MatmulOp
    group: RowGroup
    context: MatmulOp
    rows: int
    """Index into group.outer of the loop that steps the products' rows."""
    row_stride: int
    matrix_stride: int
    relayout: RestickifyOp | None = None
    """A restickify that alone reads the context (through views) and moves whole sticks (the
    heads' contexts side by side for the output projection): the kernel stores each context
    stick where the restickify would put it (`relayout_coords`), and its result is the kernel's."""
    views: tuple[Operation, ...] = ()
    """The reshapes and permutes from the context to the relayout's input, in order."""

    @property
    def result(self) -> SSAValue:
        """The kernel's result: the relayout's, else the context's."""
        return self.relayout.result if self.relayout is not None else self.context.result

    def relayout_coords(self, b: int, m: int, e: int) -> tuple[int, ...]:
        """The relayout's coordinates of the context's element (b, m, e), through the views."""
        shape = device_layout(self.context.result.type).shape
        coords: tuple[int, ...] = (b, m, e) if len(shape) == 3 else (m, e)
        for view in self.views:
            if isinstance(view, PermuteOp):
                coords = tuple(coords[p] for p in view.permutation.as_tuple())
            else:
                assert isinstance(view, ReshapeOp)
                new = device_layout(view.result.type).shape
                flat = 0
                for x, n in zip(coords, shape):
                    flat = flat * n + x
                coords = tuple(int(x) for x in _unravel(flat, new))
            shape = device_layout(view.result.type).shape
        return coords

    @property
    def positions(self) -> int:
        """Rows per head: the row loop's extent where a matrix's rows are whole runs of it,
        else all its rows."""
        m = device_layout(self.scores.lhs.type).shape[-2]
        size = self.group.outer[self.rows].size
        return size if size <= m and m % size == 0 else m

    def dims(self) -> list[IterDim]:
        shape = device_layout(self.scores.lhs.type).shape
        b = shape[0] if len(shape) == 3 else 1
        return [
            IterDim("b", b, chunkable=False),
            IterDim("p", self.positions),
            IterDim("h", shape[-2] // self.positions, chunkable=False),
        ]

    def scores_value(self) -> SSAValue:
        """The value the group reads for the scores (the product's result or its view)."""
        uses = list(self.scores.result.uses)
        op = uses[0].operation
        return op.results[0] if isinstance(op, ReshapeOp) else self.scores.result

    def inputs(self) -> list[tuple[SSAValue, list[int]]]:
        """The values the row group reads from outside other than the scores (a mask, a bias),
        in order, with their DDR stick strides per [*group.outer, r] (0: broadcast)."""
        made, scores = {o.results[0] for o in self.group.ops}, self.scores_value()
        found: dict[SSAValue, list[int]] = {}
        for o in self.group.ops:
            for v in o.operands:
                if v not in made and v is not scores and v not in found:
                    found[v] = self.group.strides(v, o)
        return list(found.items())

    def same_for_every_head(self, strides: Sequence[int]) -> bool:
        """Whether an input with these strides (`inputs`) steps no loop of the group but the
        rows: the same for every matrix and head (a causal mask), read once per chunk of rows."""
        return not any(s for j, s in enumerate(strides[: len(self.group.outer)]) if j != self.rows)

    def group_index(self, b: int, m: int) -> list[int]:
        """The group's outer loop indices of row m of matrix b (ValueError: no row of the
        group's layout starts there; attention() checks the corners)."""
        at = b * self.matrix_stride + m * self.row_stride
        order = sorted(range(len(self.group.outer)), key=lambda j: -self.group.outer[j].stick_stride)
        idx = [0] * len(self.group.outer)
        for j in order:
            d = self.group.outer[j]
            if d.stick_stride > 0 and d.size > 1:
                idx[j], at = divmod(at, d.stick_stride)
        if at != 0:
            raise ValueError(f"row {m} of matrix {b} of the scores does not start a row of the row group's layout")
        return idx


def _unravel(flat: int, shape: Sequence[int]) -> list[int]:
    out = []
    for n in reversed(shape):
        flat, x = divmod(flat, n)
        out.append(x)
    return out[::-1]


def attention(ops: Sequence[Operation]) -> Attention:
    """The attention form of `ops` (a kernel's compute ops: two batched products and a row
    group between them, and maybe a restickify that moves the context's sticks), or
    ValueError saying why they are not one."""
    relayout = ops[-1] if isinstance(ops[-1], RestickifyOp) else None
    if relayout is not None:
        ops = ops[:-1]
    scores, context = ops[0], ops[-1]
    if not isinstance(scores, MatmulOp) or not isinstance(context, MatmulOp) or len(ops) < 3:
        raise ValueError("an attention kernel holds a spyre.matmul, a row group and a spyre.matmul")
    group = row_group(ops[1:-1])
    sa, sr, ca = (device_layout(v.type) for v in (scores.lhs, scores.result, context.lhs))
    if len(sa.shape) != len(ca.shape):
        raise ValueError("an attention kernel's products are both batched (3-d) or both not (2-d)")
    if sr.shape != ca.shape:
        raise ValueError("an attention kernel's second product reads the scores' shape as its A")

    def through_view(v: SSAValue) -> Operation | None:
        uses = list(v.uses)
        if len(uses) != 1:
            return None
        op = uses[0].operation
        if isinstance(op, ReshapeOp):
            uses = list(op.result.uses)
            return uses[0].operation if len(uses) == 1 else None
        return op

    inside = set(group.ops)
    seen = scores.result
    if len(list(seen.uses)) == 1 and isinstance(next(iter(seen.uses)).operation, ReshapeOp):
        seen = next(iter(seen.uses)).operation.results[0]
    if not device_layout(seen.type).places_like(group.full) or any(u.operation not in inside for u in seen.uses):
        raise ValueError("an attention kernel's row group alone reads the scores, in its reduced layout")
    last = group.ops[-1].results[0]
    if not group.is_full(last) or through_view(last) is not context:
        raise ValueError("an attention kernel's second product alone reads the row group's result")
    if context.lhs is not last and (
        not isinstance(context.lhs.owner, ReshapeOp) or context.lhs.owner.input is not last
    ):
        raise ValueError("an attention kernel's second product reads the row group's result as its A")
    strides = [matrix_strides(lay) for lay in (sr, ca)]
    if strides[0] != strides[1]:
        raise ValueError("an attention kernel's scores and the second product's A hold their rows alike")
    sb, sm, sn = strides[0]
    if group.r != math.ceil(sr.shape[-1] / F16_LANES) or group.r > 1 and group.full.stick_strides[group.tile] != sn:
        raise ValueError("an attention kernel's row group reduces along the scores' columns")
    rows = [j for j, d in enumerate(group.outer) if d.stick_stride == sm and d.size > 1]
    if len(rows) != 1:
        raise ValueError("an attention kernel's row group steps the scores' rows with one loop")
    views: list[Operation] = []
    if relayout is not None:
        _, views, reader = read_through_views(context.result)
        if reader is not relayout:
            raise ValueError("an attention kernel's restickify alone reads the context, through views")
    att = Attention(scores, group, context, rows[0], sm, sb, relayout, tuple(views))
    if relayout is not None:
        _check_stick_moves(att)
    b, m = (sr.shape[0] if len(sr.shape) == 3 else 1), sr.shape[-2]
    for corner in ((b - 1, m - 1), (b - 1, 0), (0, m - 1)):
        idx = att.group_index(*corner)  # every row decodes into the group's loops (else ValueError)
        if any(i >= d.size for i, d in zip(idx, group.outer)):
            raise ValueError("an attention kernel's scores rows lie outside its row group's loops")
    for i, (_, st) in enumerate(att.inputs()):
        if st[att.rows] == 0 and not att.same_for_every_head(st):
            raise ValueError(f"an attention kernel's row group input {i} varies along its loops but not along the rows")
    return att


def _check_stick_moves(att: Attention) -> None:
    """ValueError unless the relayout moves the context's sticks whole: each stick's lanes
    land in one stick of the result, in order (checked at the first and last rows, whose
    lanes and strides every other row shares in a layout)."""
    out = device_layout(att.relayout.result.type) if att.relayout is not None else None
    assert out is not None
    shape = device_layout(att.context.result.type).shape
    b, m, n = (shape[0] if len(shape) == 3 else 1), shape[-2], shape[-1]
    h = out.stick_dim
    for row in ((0, 0), (b - 1, m - 1)):
        for stick in range(math.ceil(n / F16_LANES)):
            first = att.relayout_coords(*row, stick * F16_LANES)
            last = att.relayout_coords(*row, min(n, (stick + 1) * F16_LANES) - 1)
            moved = [i for i, (x, y) in enumerate(zip(first, last)) if x != y]
            if h is None or first[h] % F16_LANES or moved not in ([h], []) or last[h] - first[h] != last_lane(n, stick):
                raise ValueError("an attention kernel's restickify moves whole sticks of the context")


def last_lane(n: int, stick: int) -> int:
    """The last lane of stick `stick` of a dim of n elements."""
    return min(n, (stick + 1) * F16_LANES) - 1 - stick * F16_LANES
