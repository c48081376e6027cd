"""A kernel's gathered operand (spyre.GatheredOperand): the loads of it that the compute op's
lowering issues, rewritten as gathers of the same sticks from the gather's table.

The lowering of a matmul or a restickify loads its operand's sticks by stick strides from a
base (`load`); for the i-th gathered operand `KernelPlan.arg` names the argument
`GATHERED + i`, and `lower_kernel` hands each core's instructions to its `GatheredLoads`.
Stick s of the gather's result is stick t of its row r (its layout: s = r * s_row + t * s_t,
as a gather kernel would store it), and the views between it and the operand keep every stick
where it is, so a load's sticks are (row, stick) pairs, which `_gather_box` covers with gathers
of rows r0.. by sticks t0.. (`dma_gather` from stick t0 of each row): one per load where they
form such a box at LX places stepping by one stride per row and one per stick (a B tile of a
page's values), else one per part.

Through a block transpose (`GatheredOperand.transposed`: a matmul's B that is K^T of gathered
keys), a B tile is 64 x 64 blocks, each of 64 sticks of the transpose's result whose lane l
is lane d of row r0 + l's stick t (d: the stick's place in the block): 64 rows' stick t are
gathered into the `gathered` buffer and `sfp_transpose`d into the tile, blocks of one stick t
whose rows follow on gathered and transposed at once.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.utils.exceptions import PassFailedException

from spyre_mlir.dialects import spyre
from spyre_mlir.layout import digit_stride
from spyre_mlir.lowering.convert_spyre_to_isa.instructions import Ins, gather_rows, transpose
from spyre_mlir.lowering.convert_spyre_to_isa.plan import GATHERED, KernelPlan
from spyre_mlir.target.constants import F16_LANES, TRANSPOSE_BLOCK


class GatheredLoads:
    """What a kernel's loads of its gathered operand read, worked out once for every core."""

    def __init__(self, plan: KernelPlan, which: int):
        g = plan.gathered[which]
        self.plan, self.arg = plan, GATHERED + which
        op = g.gather
        res = spyre.device_layout(op.result.type)
        rows, self.sticks = res.shape[0], op.row_sticks
        s_row, s_t = digit_stride(res, 0, 1), digit_stride(res, 1, F16_LANES)
        at = (np.arange(rows)[:, None] * s_row + np.arange(self.sticks)[None, :] * s_t).reshape(-1)
        self.of = np.full(int(at.max()) + 1, -1, dtype=np.int64)
        """Stick of the gather's result -> row * sticks + t (-1: no row's)."""
        self.of[at] = np.arange(rows * self.sticks)
        self.table, self.indices = plan.arg(op.table), plan.arg(op.indices)
        self.lanes: np.ndarray | None = None
        """Through a transpose: per stick of its result and lane, the gather's row * sticks * 64
        + t * 64 + the lane of the row's stick t it holds (-1: padding)."""
        if g.transposed is not None:
            self.lanes = _transposed_lanes(g.transposed, self.of, self.sticks)
            lo, hi = next((lo, hi) for lo, hi, name in plan.placed if name == "gathered")
            size = (hi - lo) // TRANSPOSE_BLOCK  # blocks the buffer holds: two halves where it holds two
            self.halves = 2 if size >= 2 else 1
            self.run_blocks = max(1, size // self.halves)
            """The most blocks one gather and transpose take: a half of the buffer."""
            self.scratch = lo

    def rewrite(self, code: Sequence[Ins]) -> list[Ins]:
        """A core's instructions with each load of the gathered operand replaced."""
        out: list[Ins] = []
        for ins in code:
            if ins.key[0] != "load" or ins.key[1] != self.arg:
                out.append(ins)
                continue
            _, _, ddr_s, lx_s, sizes = ins.key
            ddr_base, lx_base = ins.bases
            if self.lanes is not None:
                out += self._transposed(ddr_s, lx_s, sizes, ddr_base, lx_base)
                continue
            grid = np.indices(sizes).reshape(len(sizes), -1)
            ddr = ddr_base + np.asarray(ddr_s, dtype=np.int64) @ grid
            lx = lx_base + np.asarray(lx_s, dtype=np.int64) @ grid
            if ddr.min() < 0 or ddr.max() >= len(self.of) or (self.of[ddr] < 0).any():
                raise PassFailedException(
                    f"kernel {self.plan.name}: a load of the gathered operand reads sticks that no gathered row holds"
                )
            r, t = np.divmod(self.of[ddr], self.sticks)
            out += _gather_box(self.table, self.indices, r, t, lx)
        return out

    def _transposed(
        self, ddr_s: Sequence[int], lx_s: Sequence[int], sizes: Sequence[int], ddr_base: int, lx_base: int
    ) -> list[Ins]:
        """A B tile ([n stick][k row], sizes (n sticks, k rows)) of the transpose's result:
        per 64 x 64 block, 64 gathered rows' stick t into `gathered`, transposed into the tile."""
        assert self.lanes is not None
        err = PassFailedException(
            f"kernel {self.plan.name}: a B tile of the gathered keys' transpose is not whole 64 x 64 blocks of "
            "gathered rows (spyre-fuse takes only those)"
        )
        if len(sizes) != 2 or sizes[1] % TRANSPOSE_BLOCK or lx_s[1] != 1:
            raise err
        d = np.arange(TRANSPOSE_BLOCK)
        blocks: list[tuple[int, int, int]] = []  # (first row, stick t, LX stick of the block's first)
        for j in range(sizes[0]):
            for q in range(0, sizes[1], TRANSPOSE_BLOCK):
                sticks = ddr_base + j * ddr_s[0] + (q + d) * ddr_s[1]
                if sticks.min() < 0 or sticks.max() >= len(self.lanes):
                    raise err
                src = self.lanes[sticks]  # (64 sticks of the block, 64 lanes)
                row, rest = np.divmod(src, self.sticks * F16_LANES)
                t, lane = np.divmod(rest, F16_LANES)
                r0 = int(row[0, 0])
                if (
                    (src < 0).any()
                    or (t != t[0, 0]).any()
                    or (row != r0 + d[None, :]).any()
                    or (lane != d[:, None]).any()
                ):
                    raise err
                blocks.append((r0, int(t[0, 0]), lx_base + j * lx_s[0] + q * lx_s[1]))
        out: list[Ins] = []
        i = 0
        while i < len(blocks):  # runs of blocks of one stick whose rows follow on, at one LX step
            n = 1
            step = blocks[i + 1][2] - blocks[i][2] if i + 1 < len(blocks) else TRANSPOSE_BLOCK
            while (
                n < self.run_blocks
                and i + n < len(blocks)
                and blocks[i + n][1] == blocks[i][1]
                and blocks[i + n][0] == blocks[i][0] + n * TRANSPOSE_BLOCK
                and blocks[i + n][2] == blocks[i][2] + n * step
            ):
                n += 1
            r0, t0, dst = blocks[i]
            scratch = self.scratch + (len(out) // 2 % self.halves) * self.run_blocks * TRANSPOSE_BLOCK
            out.append(gather_rows(self.table, self.indices, r0, n * TRANSPOSE_BLOCK, 1, scratch, [1, 1], t0))
            out.append(
                transpose((scratch, [TRANSPOSE_BLOCK, 1]), (dst, [step, 1]), n, TRANSPOSE_BLOCK, TRANSPOSE_BLOCK)
            )
            i += n
        return out


def _transposed_lanes(restick: spyre.RestickifyOp, of: np.ndarray, sticks: int) -> np.ndarray:
    """Per stick of the transpose's result and lane: row * sticks * 64 + t * 64 + lane of the
    gathered stick holding that element (its input's sticks are the gather's, through views)."""
    dst, src = spyre.device_layout(restick.result.type), spyre.device_layout(restick.input.type)
    host_dst, valid_dst = (a.reshape(-1, F16_LANES) for a in dst.index_arrays())
    host_src, valid_src = (a.reshape(-1) for a in src.index_arrays())
    position = np.full(int(np.prod(src.host_shape)), -1, dtype=np.int64)  # host element -> src stick * 64 + lane
    position[host_src[valid_src]] = np.flatnonzero(valid_src)
    at = np.where(valid_dst, position[np.where(valid_dst, host_dst, 0)], -1)
    stick, lane = np.divmod(at, F16_LANES)
    inside = (at >= 0) & (stick < len(of))
    pair = np.where(inside, of[np.where(inside, stick, 0)], -1)
    return np.where(pair >= 0, pair * F16_LANES + lane, -1)


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
