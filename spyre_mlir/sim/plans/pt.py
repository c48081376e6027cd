"""The PT plan (pt_matmul) and the products of tiles it and the regrouped steps share."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from spyre_mlir.dialects import spyre_isa
from spyre_mlir.sim.machine import Machine
from spyre_mlir.sim.numerics import Numerics
from spyre_mlir.sim.plans.base import Labels, Plan, executes
from spyre_mlir.sim.plans.positions import F32_STICKS, bases, flat_rows
from spyre_mlir.target import cycles
from spyre_mlir.target.config import DeviceConfig
from spyre_mlir.target.constants import F16_LANES, F32_LANES, STICK_BYTES


def operand_matrix(num: Numerics, sticks: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """The first `cols` lanes of `rows` rows of 16-bit sticks as a contiguous f32 matrix."""
    x = num.decode(sticks.view(np.uint16)).reshape(rows, -1)
    if x.shape[1] == cols:
        return x
    return np.ascontiguousarray(x[:, :cols])


def tile_products(a: np.ndarray, b: np.ndarray, accumulation: str) -> np.ndarray:
    """The PT's products of tiles: a (..., m, k) @ b (..., k, n), broadcast over the leading
    dims, as fp32 sums (..., m, n). Every (m, k) @ (k, n) tile is one product of that shape on
    its own, whatever else is stacked beside it: numpy's matmul runs one BLAS call per tile, and
    BLAS's sums for an element depend on the shapes of the call (OpenBLAS and MKL pick kernels,
    blockings and threads by them), so a tile's bits follow from the instruction alone, never
    from how an executor groups cores or tiles (docs/numerics.md).

        fp32   the sums in fp32, in the order BLAS takes for a product of the tile's shape
        f64    the reference mode: the exact products summed in float64, rounded once to fp32
    """
    if accumulation == "f64":
        return np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(np.float32)
    return np.matmul(_blas_operand(a), _blas_operand(b))


def _blas_operand(x: np.ndarray) -> np.ndarray:
    """x as float32 whose every matrix BLAS takes as it is (unit lane stride, rows at least a
    row apart): a strided view of a decoded copy is not copied (the bits are those of the
    contiguous matrix: BLAS packs its operands); anything else is made contiguous, since numpy
    multiplies matrices BLAS cannot take by a loop of its own (other sums)."""
    if x.dtype == np.float32 and x.strides[-1] == 4 and x.strides[-2] >= 4 * x.shape[-1]:
        return x
    return np.ascontiguousarray(x, dtype=np.float32)


@executes(spyre_isa.PtMatmulOp)
class PtPlan(Plan):
    engine = "pt"
    PER_CORE = ("a_pos", "b_pos", "c_pos", "a_idx", "b_idx", "c_idx")
    shared: str | None = None
    """"rhs" ("lhs"): every core of the stream holds the same B (A) bytes at the same LX
    sticks whenever this instruction runs (`mark_shared_operands`), so the stream's
    products are one matrix product: A of all cores stacked on one B (one A on all B)."""
    b_groups: list[np.ndarray] | None = None
    """Rows (cores) that hold the same B bytes, group by group: one matrix product per group,
    B read from its first row."""

    def __init__(self, op: spyre_isa.PtMatmulOp, kernel: str, index: int, n: int, config: DeviceConfig):
        super().__init__(op, kernel, index, n, config)
        m, nn, k = op.m.value.data, op.n.value.data, op.k.value.data
        self.m, self.n, self.k = m, nn, k
        self.accumulate = op.accumulate is not None
        kt, nt = -(-k // F16_LANES), -(-nn // F16_LANES)

        def grid(acc: spyre_isa.AccessAttr, rows: int, cols: int) -> np.ndarray:
            s0, s1 = acc.strides.as_tuple()
            return (
                bases(acc, n)[:, None, None]
                + (np.arange(rows) * s0)[None, :, None]
                + (np.arange(cols) * s1)[None, None, :]
            )

        self.a_pos = grid(op.lhs, m, kt)
        self.b_pos = grid(op.rhs, k, nt)
        self.c_pos = (grid(op.acc, m, nt)[..., None] + np.arange(F32_STICKS)).reshape(n, m, F32_STICKS * nt)
        self.macs = n * m * nn * k
        reads = [self.a_pos, self.b_pos] + ([self.c_pos] if self.accumulate else [])
        self._works(n, compute=cycles.pt_passes(config, m, nn, k), reads=reads, writes=[self.c_pos])

    def bind(self, cores: np.ndarray, lx_sticks: int) -> None:
        self.a_idx = flat_rows(cores, self.a_pos, lx_sticks)
        self.b_idx = flat_rows(cores, self.b_pos, lx_sticks)
        self.c_idx = flat_rows(cores, self.c_pos, lx_sticks)

    def checks(self, model: Machine, args: Sequence[Any], cores: np.ndarray) -> None:
        self._read(model, cores, self.a_pos, "PT lhs")
        self._read(model, cores, self.b_pos, "PT rhs")
        if self.accumulate:
            self._read(model, cores, self.c_pos, "PT acc")
        self._write(model, cores, self.c_pos, "PT acc")

    def run(self, model: Machine, args: Sequence[Any], cores: np.ndarray, check: bool = True) -> None:
        if check:
            self.checks(model, args, cores)
        lx, num, acc = model.memory.lx_rows, model.memory.numerics, model.config.accumulation
        nc, m, k, n = len(cores), self.m, self.k, self.n
        # one product per core's tile (tile_products): the bits do not depend on which cores
        # share an operand, only the decoding does (a shared operand is decoded once)
        if self.shared == "rhs":  # (nc, m, k) @ (k, n)
            a = operand_matrix(num, lx[self.a_idx], nc * m, k).reshape(nc, m, k)
            prod = tile_products(a, operand_matrix(num, lx[self.b_idx[0]], k, n), acc)
        elif self.b_groups is not None:  # per group: (rows, m, k) @ (k, n)
            a = operand_matrix(num, lx[self.a_idx], nc * m, k).reshape(nc, m, k)
            prod = np.empty((nc, m, n), dtype=np.float32)
            for rows in self.b_groups:
                prod[rows] = tile_products(a[rows], operand_matrix(num, lx[self.b_idx[rows[0]]], k, n), acc)
        elif self.shared == "lhs":  # (m, k) @ (nc, k, n)
            a = operand_matrix(num, lx[self.a_idx[0]], m, k)
            prod = tile_products(a, operand_matrix(num, lx[self.b_idx], nc * k, n).reshape(nc, k, n), acc)
        else:
            a = operand_matrix(num, lx[self.a_idx], nc * m, k).reshape(nc, m, k)
            prod = tile_products(a, operand_matrix(num, lx[self.b_idx], nc * k, n).reshape(nc, k, n), acc)
        width = self.c_pos.shape[2] * F32_LANES
        if self.accumulate:
            old = lx[self.c_idx].view(np.float32).reshape(nc, m, -1)
            prod += old[:, :, :n] if width != n else old
        if width != n:
            out = np.zeros((nc, m, width), dtype=np.float32)
            out[:, :, :n] = prod
            prod = out
        lx[self.c_idx] = prod.view(np.uint8).reshape(nc, m, -1, STICK_BYTES)

    def accesses(self) -> tuple[list[np.ndarray], np.ndarray | None]:
        return [self.a_idx, self.b_idx] + ([self.c_idx] if self.accumulate else []), self.c_idx

    def decoding_reads(self) -> list[bool]:
        return [True, False] + ([False] if self.accumulate else [])  # (B: read as decoded copies, or bits)

    def with_rows(self, reads: list[np.ndarray], write: np.ndarray | None, ddr_pos: np.ndarray | None) -> PtPlan:
        step = self._copy()
        assert isinstance(step, PtPlan) and write is not None
        step.a_idx, step.b_idx, step.c_idx = reads[0], reads[1], write
        return step

    def signature(self) -> tuple | None:
        if self.shared is not None:
            return None
        return self.product_signature()

    def product_signature(self) -> tuple:
        """`signature` whether or not an operand is shared."""
        return (
            "pt",
            self.m,
            self.n,
            self.k,
            self.accumulate,
            self.a_idx.shape[1:],
            self.b_idx.shape[1:],
            self.c_idx.shape[1:],
        )

    def label(self, labels: Labels, when: Any) -> None:
        """Mark the operands its cores hold alike (`shared`, `b_groups`), then its write."""
        a = labels.labels[self.a_idx.reshape(len(self.a_idx), -1)]
        if not self._share_b(labels) and (a == a[:1]).all():
            self.shared = "lhs"
        labels.write_fresh(self.c_idx)

    def _share_b(self, labels: Labels) -> bool:
        """Mark cores that hold equal B bytes (equal labels at their B sticks): all of them
        alike, `shared = "rhs"`; in groups, `b_groups` (the rows of each group). False if every
        core's B differs (nothing marked)."""
        keys: dict[bytes, list[int]] = {}
        lab = labels.labels[self.b_idx.reshape(len(self.b_idx), -1)]
        for row in range(len(lab)):
            keys.setdefault(lab[row].tobytes(), []).append(row)
        if len(keys) == len(lab):
            return False
        if len(keys) == 1:
            self.shared = "rhs"
        else:
            self.b_groups = [np.asarray(rows, dtype=np.int64) for rows in keys.values()]
        return True

    def unshare(self) -> None:
        self.shared, self.b_groups = None, None
