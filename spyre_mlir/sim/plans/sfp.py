"""SFP plans: element-wise functions, reductions and transposes over 64-lane vectors in LX."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from xdsl.ir import Operation

from spyre_mlir.dialects import spyre_isa
from spyre_mlir.sim.machine import Machine
from spyre_mlir.sim.plans.base import Plan, SrcDstPlan, executes
from spyre_mlir.sim.plans.positions import bases, flat_rows, vector_positions
from spyre_mlir.target import cycles
from spyre_mlir.target.config import DeviceConfig
from spyre_mlir.target.constants import F16_LANES, STICK_BYTES, TRANSPOSE_BLOCK


def _load_vectors(model: Machine, idx: np.ndarray, is_f32: bool, kept: np.ndarray | None = None) -> np.ndarray:
    """(n, vectors, 64) float32 values at the LX rows `idx` (`flat_rows` of an SFP access); with
    `kept`, the rows of `DeviceMemory.scratch_values` that hold them decoded (`Plan.kept_reads`)."""
    if kept is not None:
        return model.memory.scratch_values[kept].reshape(len(idx), -1, F16_LANES)
    raw = model.memory.lx_rows[idx]
    if is_f32:
        return raw.view(np.float32).reshape(len(idx), -1, F16_LANES)
    return model.memory.numerics.decode(raw.view(np.uint16)).reshape(len(idx), -1, F16_LANES)


def _store_vectors(
    model: Machine,
    idx: np.ndarray,
    is_f32: bool,
    values: np.ndarray,
    kept: np.ndarray | None = None,
    bits: bool = True,
) -> None:
    """Store fp32 values at the LX rows `idx`, rounded to the 16-bit format unless `is_f32`;
    with `kept` (`Plan.kept_write`), the stored values also go to those rows of
    `DeviceMemory.scratch_values`, and without `bits` only there."""
    values = np.ascontiguousarray(values, dtype=np.float32)
    if kept is not None:
        stored, decoded = model.memory.numerics.store(values, bits)
        model.memory.scratch_values[kept] = decoded.reshape(*kept.shape, F16_LANES)
        if stored is not None:
            model.memory.lx_rows[idx] = stored.view(np.uint8).reshape(*idx.shape, STICK_BYTES)
        return
    out = values if is_f32 else model.memory.numerics.encode(values)
    model.memory.lx_rows[idx] = out.view(np.uint8).reshape(*idx.shape, STICK_BYTES)


def _erf(x: np.ndarray) -> np.ndarray:
    return torch.special.erf(torch.from_numpy(np.ascontiguousarray(x))).numpy()


SFP_FUNCTIONS: dict[type[Operation], Callable[..., Any]] = {
    spyre_isa.SfpCopyOp: lambda x: x,
    spyre_isa.SfpNegOp: np.negative,
    spyre_isa.SfpExpOp: np.exp,
    spyre_isa.SfpErfOp: _erf,
    spyre_isa.SfpTanhOp: np.tanh,
    spyre_isa.SfpLogOp: np.log,
    spyre_isa.SfpSqrtOp: np.sqrt,
    spyre_isa.SfpRsqrtOp: lambda x: np.float32(1.0) / np.sqrt(x),
    spyre_isa.SfpSinOp: np.sin,
    spyre_isa.SfpCosOp: np.cos,
    spyre_isa.SfpAbsOp: np.abs,
    spyre_isa.SfpRecipOp: lambda x: np.float32(1.0) / x,
    spyre_isa.SfpAddOp: np.add,
    spyre_isa.SfpSubOp: np.subtract,
    spyre_isa.SfpMulOp: np.multiply,
    spyre_isa.SfpDivOp: np.divide,
    spyre_isa.SfpMaxOp: np.maximum,
    spyre_isa.SfpMinOp: np.minimum,
    spyre_isa.SfpSelectOp: lambda m, a, b: np.where(m != 0, a, b),
}
"""The numpy function of each SFP element-wise instruction, on float32 vectors."""


@executes(spyre_isa.SfpUnaryOp, spyre_isa.SfpBinaryOp, spyre_isa.SfpSelectOp)
class SfpPlan(Plan):
    """Unary and binary SFP functions over 64-lane vectors."""

    engine = "sfp"
    PER_CORE = ("srcs", "dst", "src_idx", "dst_idx")
    POSITIONS = ("srcs", "dst")

    def __init__(
        self,
        op: spyre_isa.SfpUnaryOp | spyre_isa.SfpBinaryOp | spyre_isa.SfpSelectOp,
        kernel: str,
        index: int,
        n: int,
        config: DeviceConfig,
    ):
        super().__init__(op, kernel, index, n, config)
        self.function = "select" if isinstance(op, spyre_isa.SfpSelectOp) else op.FUNCTION
        self.fn = SFP_FUNCTIONS[type(op)]
        sizes = op.sizes.as_tuple()
        self.imm: np.float32 | None = None
        if isinstance(op, spyre_isa.SfpUnaryOp):
            srcs = [op.src]
        elif isinstance(op, spyre_isa.SfpSelectOp):
            srcs = [op.mask, op.lhs, op.rhs]
        else:
            srcs = [op.lhs] + ([op.rhs] if op.rhs is not None else [])
            self.imm = None if op.imm is None else np.float32(op.imm.value.data)
        self.srcs = [(a.is_f32, vector_positions(a, sizes, n)) for a in srcs]
        self.dst = (op.dst.is_f32, vector_positions(op.dst, sizes, n))
        self.moves_bits = self.function == "copy" and not srcs[0].is_f32 and not op.dst.is_f32
        """A copy within the 16-bit format: the sticks' bits move as they are (their decoded
        values, stored again, would round to the same bits; a NaN keeps its sign)."""
        vectors = int(np.prod(sizes))
        self._works(
            n,
            compute=cycles.sfp_cycles(config, vectors, self.function in spyre_isa.SFP_TRANSCENDENTAL),
            reads=[p.reshape(n, -1) for _, p in self.srcs],
            writes=[self.dst[1].reshape(n, -1)],
        )

    def bind(self, cores: np.ndarray, lx_sticks: int) -> None:
        self.src_idx = [flat_rows(cores, pos, lx_sticks) for _, pos in self.srcs]
        self.dst_idx = flat_rows(cores, self.dst[1], lx_sticks)

    def checks(self, model: Machine, args: Sequence[Any], cores: np.ndarray) -> None:
        for _, pos in self.srcs:
            self._read(model, cores, pos, "SFP source")
        self._write(model, cores, self.dst[1], "SFP destination")

    def run(self, model: Machine, args: Sequence[Any], cores: np.ndarray, check: bool = True) -> None:
        if check:
            self.checks(model, args, cores)
        if self.moves_bits:
            lx = model.memory.lx_rows
            lx[self.dst_idx] = lx[self.src_idx[0]]
            return
        kept = self.kept_reads or (None,) * len(self.srcs)
        vals: list[Any] = [
            _load_vectors(model, idx, is_f32, k) for (is_f32, _), idx, k in zip(self.srcs, self.src_idx, kept)
        ]
        if self.imm is not None:
            vals.append(self.imm)
        out = np.asarray(self.fn(*vals), dtype=np.float32)  # (numpy's warnings off: ProgramPlan.execute)
        _store_vectors(model, self.dst_idx, self.dst[0], out, self.kept_write, self.writes_bits)

    def decoding_reads(self) -> list[bool]:
        return [not is_f32 and not self.moves_bits for is_f32, _ in self.srcs]

    def stores_values(self) -> bool:
        return not self.dst[0] and not self.moves_bits

    def accesses(self) -> tuple[list[np.ndarray], np.ndarray | None]:
        return list(self.src_idx), self.dst_idx

    def with_rows(self, reads: list[np.ndarray], write: np.ndarray | None, ddr_pos: np.ndarray | None) -> SfpPlan:
        step = self._copy()
        assert isinstance(step, SfpPlan) and write is not None
        step.src_idx, step.dst_idx = reads, write
        return step

    def signature(self) -> tuple | None:
        imm = None if self.imm is None else float(self.imm)
        if imm is not None and imm != imm:  # NaN: never equal to itself
            return None
        srcs = tuple((f32, idx.shape[1:]) for (f32, _), idx in zip(self.srcs, self.src_idx))
        return ("sfp", self.function, imm, srcs, self.dst[0], self.dst_idx.shape[1:])


REDUCTIONS: dict[type[Operation], tuple[float, Callable[[np.ndarray], np.ndarray]]] = {
    spyre_isa.SfpReduceMaxOp: (-np.inf, lambda x: x.max(axis=(2, 3))),
    spyre_isa.SfpReduceMinOp: (np.inf, lambda x: x.min(axis=(2, 3))),
    spyre_isa.SfpReduceSumOp: (0.0, lambda x: x.sum(axis=(2, 3), dtype=np.float32)),
}
"""Each SFP reduction: the value its masked padding lanes hold, and the reduction of
(cores, outer, inner, lanes) vectors over the innermost loop dim and the lanes."""


@executes(spyre_isa.SfpReduceOp)
class ReducePlan(SrcDstPlan):
    engine = "sfp"
    PER_CORE = ("src", "dst", "src_idx", "dst_idx")
    POSITIONS = ("src", "dst")

    def __init__(self, op: spyre_isa.SfpReduceOp, kernel: str, index: int, n: int, config: DeviceConfig):
        super().__init__(op, kernel, index, n, config)
        sizes = op.sizes.as_tuple()
        self.function = op.FUNCTION
        self.fill, self.reduce = REDUCTIONS[type(op)]
        self.outer = int(np.prod(sizes[:-1]))
        self.inner = sizes[-1]
        self.tail = op.tail.value.data
        self.src = (op.src.is_f32, vector_positions(op.src, sizes, n))
        dst_strides = list(op.dst.strides.as_tuple())
        dst_strides[-1] = 0
        dst = spyre_isa.AccessAttr(op.dst.base, dst_strides, op.dst.element_type)
        self.dst = (op.dst.is_f32, vector_positions(dst, [*sizes[:-1], 1], n))
        self._works(
            n,
            compute=cycles.sfp_cycles(config, self.outer * self.inner, False),
            reads=[self.src[1].reshape(n, -1)],
            writes=[self.dst[1].reshape(n, -1)],
        )

    def bind(self, cores: np.ndarray, lx_sticks: int) -> None:
        self.src_idx = flat_rows(cores, self.src[1], lx_sticks)
        self.dst_idx = flat_rows(cores, self.dst[1], lx_sticks)

    def checks(self, model: Machine, args: Sequence[Any], cores: np.ndarray) -> None:
        self._read(model, cores, self.src[1], "reduce source")
        self._write(model, cores, self.dst[1], "reduce destination")

    def run(self, model: Machine, args: Sequence[Any], cores: np.ndarray, check: bool = True) -> None:
        if check:
            self.checks(model, args, cores)
        kept = self.kept_reads[0] if self.kept_reads else None
        x = _load_vectors(model, self.src_idx, self.src[0], kept).reshape(len(cores), self.outer, self.inner, F16_LANES)
        if self.tail < F16_LANES:
            x = x.copy()
            x[:, :, -1, self.tail :] = self.fill
        r = self.reduce(x)  # (numpy's warnings off: ProgramPlan.execute)
        out = np.repeat(r[:, :, None], F16_LANES, axis=2)
        _store_vectors(model, self.dst_idx, self.dst[0], out, self.kept_write, self.writes_bits)

    def decoding_reads(self) -> list[bool]:
        return [not self.src[0]]

    def stores_values(self) -> bool:
        return not self.dst[0]

    def signature(self) -> tuple:
        return (
            "reduce",
            self.function,
            self.outer,
            self.inner,
            self.tail,
            self.src[0],
            self.dst[0],
            self.src_idx.shape[1:],
            self.dst_idx.shape[1:],
        )


@executes(spyre_isa.SfpTransposeOp)
class TransposePlan(SrcDstPlan):
    engine = "sfp"
    PER_CORE = ("src", "dst", "src_idx", "dst_idx")
    POSITIONS = ("src", "dst")

    def __init__(self, op: spyre_isa.SfpTransposeOp, kernel: str, index: int, n: int, config: DeviceConfig):
        super().__init__(op, kernel, index, n, config)
        blocks, self.rows, self.cols = op.blocks.value.data, op.rows.value.data, op.cols.value.data

        def grid(acc: spyre_isa.AccessAttr, inner: int) -> np.ndarray:
            s0, s1 = acc.strides.as_tuple()
            return (
                bases(acc, n)[:, None, None]
                + (np.arange(blocks) * s0)[None, :, None]
                + (np.arange(inner) * s1)[None, None, :]
            )

        self.src = grid(op.src, self.rows)
        self.dst = grid(op.dst, self.cols)
        self._works(
            n,
            compute=cycles.sfp_cycles(config, blocks * TRANSPOSE_BLOCK, False),
            reads=[self.src.reshape(n, -1)],
            writes=[self.dst.reshape(n, -1)],
        )

    def bind(self, cores: np.ndarray, lx_sticks: int) -> None:
        self.src_idx = flat_rows(cores, self.src, lx_sticks)
        self.dst_idx = flat_rows(cores, self.dst, lx_sticks)

    def checks(self, model: Machine, args: Sequence[Any], cores: np.ndarray) -> None:
        self._read(model, cores, self.src, "transpose source")
        self._write(model, cores, self.dst, "transpose destination")

    def run(self, model: Machine, args: Sequence[Any], cores: np.ndarray, check: bool = True) -> None:
        if check:
            self.checks(model, args, cores)
        lx = model.memory.lx_rows
        src = lx[self.src_idx].view(np.uint16)  # (n, blocks, rows, 64)
        block = np.zeros((*src.shape[:2], TRANSPOSE_BLOCK, TRANSPOSE_BLOCK), dtype=np.uint16)
        block[:, :, : self.rows, :] = src
        out = np.ascontiguousarray(block.transpose(0, 1, 3, 2)[:, :, : self.cols, :])
        lx[self.dst_idx] = out.view(np.uint8)

    def signature(self) -> tuple:
        return ("transpose", self.rows, self.cols, self.src_idx.shape[1:], self.dst_idx.shape[1:])
