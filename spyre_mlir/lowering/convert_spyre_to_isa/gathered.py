"""A kernel's gathered operand (spyre.GatheredOperand): the loads of it that the compute op's
lowering issues, rewritten as gathers of the same sticks from the gather's table.

The lowering of a matmul or a restickify loads its operand's sticks by stick strides from a
base (`load`); for a gathered operand `KernelPlan.arg` names the argument `GATHERED`, and
`lower_kernel` hands each core's instructions here. Stick s of the operand is stick t of row r
of the gather's result (its layout: s = r * s_row + t * s_t, as a gather kernel would store
it), so a load's sticks are (row, stick) pairs, which `_gather_box` covers with gathers of
rows r0.. by sticks t0.. (`dma_gather` from stick t0 of each row): one per load where they
form such a box at LX places stepping by one stride per row and one per stick (a B tile of
a page's values, a 64 x 64 block of a page's keys), else one per part.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.utils.exceptions import PassFailedException

from spyre_mlir.dialects import spyre
from spyre_mlir.layout import digit_stride
from spyre_mlir.lowering.convert_spyre_to_isa.instructions import Ins, gather_rows
from spyre_mlir.lowering.convert_spyre_to_isa.plan import GATHERED, KernelPlan
from spyre_mlir.target.constants import F16_LANES


def gathered_loads(plan: KernelPlan, code: Sequence[Ins]) -> list[Ins]:
    """A core's instructions with each load of the kernel's gathered operand (`plan.gathered`,
    named `GATHERED`) replaced by gathers of the same sticks from the gather's table into the
    same LX places: the operand's stick s is stick t of the gather's row r (the gather's result
    layout: s = r * s_row + t * s_t), so a load's sticks are rows of the indices from r on,
    sticks t.. of each (`_gather_box`)."""
    g = plan.gathered
    assert g is not None
    op = g.gather
    res = spyre.device_layout(op.result.type)
    rows, sticks = res.shape[0], op.row_sticks
    s_row, s_t = digit_stride(res, 0, 1), digit_stride(res, 1, F16_LANES)
    at = (np.arange(rows)[:, None] * s_row + np.arange(sticks)[None, :] * s_t).reshape(-1)
    of = np.full(int(at.max()) + 1, -1, dtype=np.int64)
    of[at] = np.arange(rows * sticks)
    table, indices = plan.arg(op.table), plan.arg(op.indices)
    out: list[Ins] = []
    for ins in code:
        if ins.key[0] != "load" or ins.key[1] != GATHERED:
            out.append(ins)
            continue
        _, _, ddr_s, lx_s, sizes = ins.key
        ddr_base, lx_base = ins.bases
        grid = np.indices(sizes).reshape(len(sizes), -1)
        ddr = ddr_base + np.asarray(ddr_s, dtype=np.int64) @ grid
        lx = lx_base + np.asarray(lx_s, dtype=np.int64) @ grid
        if ddr.min() < 0 or ddr.max() >= len(of) or (of[ddr] < 0).any():
            raise PassFailedException(
                f"kernel {plan.name}: a load of the gathered operand reads sticks that no gathered row holds"
            )
        r, t = np.divmod(of[ddr], sticks)
        out += _gather_box(table, indices, r, t, lx)
    return out


def _gather_box(table: int, indices: int, r: np.ndarray, t: np.ndarray, lx: np.ndarray) -> list[Ins]:
    """Gathers of the sticks (row r[i], stick t[i]) into LX stick lx[i]: one where they are rows
    r0.. by sticks t0.. at LX places r * p + t * q from a base, else those of each half."""
    r0, t0 = int(r.min()), int(t.min())
    count, width = int(r.max()) - r0 + 1, int(t.max()) - t0 + 1
    if count * width == len(r) and np.unique((r - r0) * width + (t - t0)).size == len(r):  # every pair once
        base = int(lx[(r == r0) & (t == t0)][0])
        p = int(lx[(r == r0 + 1) & (t == t0)][0]) - base if count > 1 else 1
        q = int(lx[(r == r0) & (t == t0 + 1)][0]) - base if width > 1 else 1
        if (lx == base + (r - r0) * p + (t - t0) * q).all():
            return [gather_rows(table, indices, r0, count, width, base, [p, q], t0)]
    if len(r) == 1:  # unreachable: one stick is one row's
        raise AssertionError("a single stick always gathers as one")
    half = len(r) // 2
    return _gather_box(table, indices, r[:half], t[:half], lx[:half]) + _gather_box(
        table, indices, r[half:], t[half:], lx[half:]
    )
