"""LX buffers of a kernel's chunk: the sticks each of its tiles, temporaries and accumulators
needs for a chunk of a given extent (spyre-plan-scratchpad places them; analysis/cost.py and
spyre-divide-work size chunks by them)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.ir import Operation

from spyre_mlir.analysis.sfp import pointwise_program
from spyre_mlir.dialects import spyre
from spyre_mlir.dialects.spyre import Epilogue, RowGroup, pointwise_loops
from spyre_mlir.dialects.spyre_iteration import lane_gather_dim, transpose_row_dim
from spyre_mlir.target.constants import F16_LANES, TRANSPOSE_BLOCK


def matmul_tiles(m: int, n: int, k: int, a_resident: bool = False, epilogue: bool = False) -> dict[str, int]:
    """LX sticks of a matmul chunk's tiles: m rows by k sticks of A, k sticks of 64 rows by n
    sticks of B, the fp32 accumulator (two sticks per 64 lanes) and the rounded output.
    A resident A (`a_resident`: an earlier launch left it in LX) needs no tile; with an
    epilogue the accumulator is read by the epilogue, whose result tile (epilogue_buffers)
    replaces the output tile."""
    bufs = {"lhs": m * k, "rhs": F16_LANES * k * n, "acc": 2 * m * n, "out": m * n}
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
            return {"src": TRANSPOSE_BLOCK * units, "dst": units}
        if transpose_row_dim(src, dst) is None:
            return {"tile": units}
        return {"src": TRANSPOSE_BLOCK * units, "dst": TRANSPOSE_BLOCK * units}
    raise ValueError(f"'{op.name}' is not a kernel compute op")


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
