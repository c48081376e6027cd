"""Kernel queries the passes and convert-spyre-to-isa share: host transfers seen through
views, a slice's strides, the SFP program of a pointwise body and the LX buffers of a kernel's
chunk. What a split or a chunk means is the dialect's (`spyre_mlir.dialects.spyre_iteration`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from spyre_mlir.dialects import spyre
from spyre_mlir.dialects.spyre import Epilogue, RowGroup, pointwise_loops, slice_loops
from spyre_mlir.dialects.spyre_iteration import lane_gather_dim, transpose_row_dim
from spyre_mlir.layout import LoopDim, operand_strides


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
