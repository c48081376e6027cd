"""The reference device model: executes `spyre_isa` programs on byte-array memories.

Every instruction executes on numpy views of whole sticks, and an SPMD instruction executes
for all cores of its stream as one numpy operation (per-core bases become an index axis).
16-bit values are decoded from / encoded to the numerics mode's bit patterns on every read
and write, so every store rounds exactly as the device does; PT products accumulate in fp32.

Streams of one program run cooperatively: each runs until it blocks on a `wait` without
enough tokens or reaches a `barrier`; a barrier releases when every stream has reached it;
if no stream can move, the program is deadlocked and the model says where each core stands.

The host side of a compiled module (a `func.func` of transfers and launches) runs through
xDSL's interpreter with the implementations in `HostFunctions`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, DenseResourceAttr, ModuleOp, TensorType
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls
from xdsl.interpreters.func import FuncFunctions
from xdsl.ir import BlockArgument, Operation

from spyre_mlir.dialects import spyre, spyre_isa
from spyre_mlir.layout import STICK_BYTES
from spyre_mlir.runtime import timing
from spyre_mlir.runtime.config import DEFAULT_CONFIG, DeviceConfig
from spyre_mlir.runtime.memory import DdrTensor, DeviceError, DeviceMemory
from spyre_mlir.runtime.profile import KernelRecord, Profile

# region Instruction plans


def loop_offsets(sizes: Sequence[int], strides: Sequence[int]) -> np.ndarray:
    """Stick offsets of a loop nest, outer dim first (row-major over `sizes`)."""
    off = np.zeros(1, dtype=np.int64)
    for n, s in zip(sizes, strides):
        off = (off[:, None] + np.arange(n, dtype=np.int64) * s).reshape(-1)
    return off


def _bases(acc: spyre_isa.AccessAttr, n: int) -> np.ndarray:
    return np.asarray(acc.base.table(n), dtype=np.int64)


class _Plan:
    """An instruction prepared for execution on the cores of one stream."""

    engine = "sync"
    cycles = 0.0
    ddr_read = 0
    ddr_write = 0
    macs = 0

    def __init__(self, op: Operation, kernel: str, index: int):
        self.op = op
        self.where = f"kernel {kernel}, instruction #{index} ({op.name})"

    def run(self, model: DeviceModel, args: Sequence[DdrTensor], cores: np.ndarray) -> None:
        pass

    def _check_lx(self, model: DeviceModel, cores: np.ndarray, pos: np.ndarray, what: str) -> None:
        lim = model.config.lx_sticks
        if pos.size and pos.max() >= lim:
            row = int(np.argmax(pos.reshape(len(cores), -1).max(axis=1)))
            raise DeviceError(
                f"{self.where}, core {cores[row]}: {what} reaches LX bytes up to "
                f"{(int(pos.max()) + 1) * STICK_BYTES} beyond the {lim * STICK_BYTES}-byte scratchpad"
            )


class _DmaPlan(_Plan):
    engine = "dma"

    def __init__(self, op: spyre_isa.DmaOp, kernel: str, index: int, n: int, config: DeviceConfig, cores_moving: int):
        super().__init__(op, kernel, index)
        sizes = op.sizes.as_tuple()
        assert isinstance(op.ddr, BlockArgument)
        self.arg = op.ddr.index
        self.load = isinstance(op, spyre_isa.DmaLoadOp)
        self.ddr_pos = _bases(op.ddr_access, n)[:, None] + loop_offsets(sizes, op.ddr_access.strides.as_tuple())[None]
        self.lx_pos = _bases(op.lx_access, n)[:, None] + loop_offsets(sizes, op.lx_access.strides.as_tuple())[None]
        sticks = self.ddr_pos.shape[1]
        self.cycles = timing.dma_cycles(config, sticks, cores_moving)
        nbytes = n * sticks * STICK_BYTES
        self.ddr_read, self.ddr_write = (nbytes, 0) if self.load else (0, nbytes)

    def run(self, model: DeviceModel, args: Sequence[DdrTensor], cores: np.ndarray) -> None:
        t = args[self.arg]
        if self.ddr_pos.max() >= t.data.shape[0]:
            row = int(np.argmax(self.ddr_pos.max(axis=1)))
            raise DeviceError(
                f"{self.where}, core {cores[row]}: DMA reaches DDR bytes up to "
                f"{(int(self.ddr_pos.max()) + 1) * STICK_BYTES} of a {t.nbytes}-byte tensor"
            )
        self._check_lx(model, cores, self.lx_pos, "DMA")
        lx = model.memory.lx
        if self.load:
            lx[cores[:, None], self.lx_pos] = t.data[self.ddr_pos]
        else:
            t.data[self.ddr_pos] = lx[cores[:, None], self.lx_pos]


class _PtPlan(_Plan):
    engine = "pt"

    def __init__(self, op: spyre_isa.PtMatmulOp, kernel: str, index: int, n: int, config: DeviceConfig):
        super().__init__(op, kernel, index)
        m, nn, k = op.m.value.data, op.n.value.data, op.k.value.data
        self.m, self.n, self.k = m, nn, k
        self.accumulate = op.accumulate is not None
        kt, nt = -(-k // 64), -(-nn // 64)

        def grid(acc: spyre_isa.AccessAttr, rows: int, cols: int) -> np.ndarray:
            s0, s1 = acc.strides.as_tuple()
            return (
                _bases(acc, n)[:, None, None]
                + (np.arange(rows) * s0)[None, :, None]
                + (np.arange(cols) * s1)[None, None, :]
            )

        self.a_pos = grid(op.lhs, m, kt)
        self.b_pos = grid(op.rhs, k, nt)
        self.c_pos = (grid(op.acc, m, nt)[..., None] + np.arange(2)).reshape(n, m, 2 * nt)
        lx_sticks = m * kt + k * nt + m * 2 * nt * (2 if self.accumulate else 1)
        self.cycles = timing.pt_cycles(config, m, nn, k, lx_sticks)
        self.macs = n * m * nn * k

    def run(self, model: DeviceModel, args: Sequence[DdrTensor], cores: np.ndarray) -> None:
        for pos, what in ((self.a_pos, "PT lhs"), (self.b_pos, "PT rhs"), (self.c_pos, "PT acc")):
            self._check_lx(model, cores, pos, what)
        lx, num = model.memory.lx, model.memory.numerics
        c = cores[:, None, None]
        nc = len(cores)
        a = num.decode(lx[c, self.a_pos].view(np.uint16)).reshape(nc, self.m, -1)[:, :, : self.k]
        b = num.decode(lx[c, self.b_pos].view(np.uint16)).reshape(nc, self.k, -1)[:, :, : self.n]
        prod = np.matmul(a, b)  # fp32 products and sums
        if self.accumulate:
            old = lx[c, self.c_pos].view(np.float32).reshape(nc, self.m, -1)[:, :, : self.n]
            prod = prod + old
        out = np.zeros((nc, self.m, self.c_pos.shape[2] * 32), dtype=np.float32)
        out[:, :, : self.n] = prod
        lx[c, self.c_pos] = out.view(np.uint8).reshape(nc, self.m, -1, STICK_BYTES)


def _erf(x: np.ndarray) -> np.ndarray:
    return torch.special.erf(torch.from_numpy(np.ascontiguousarray(x))).numpy()


_SFP_FUNCTIONS: dict[str, Any] = {
    "copy": lambda x: x,
    "neg": np.negative,
    "exp": np.exp,
    "erf": _erf,
    "tanh": np.tanh,
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "max": np.maximum,
    "min": np.minimum,
}


class _SfpPlan(_Plan):
    """Unary and binary SFP functions over 64-lane vectors."""

    engine = "sfp"

    def __init__(self, op: spyre_isa.SfpUnaryOp | spyre_isa.SfpBinaryOp, kernel: str, index: int, n: int, config: DeviceConfig):
        super().__init__(op, kernel, index)
        self.fn = _SFP_FUNCTIONS[op.FUNCTION]
        sizes = op.sizes.as_tuple()
        if isinstance(op, spyre_isa.SfpUnaryOp):
            srcs = [op.src]
            self.imm = None
        else:
            srcs = [op.lhs] + ([op.rhs] if op.rhs is not None else [])
            self.imm = None if op.imm is None else np.float32(op.imm.value.data)
        self.srcs = [(a.is_f32, self._pos(a, sizes, n)) for a in srcs]
        self.dst = (op.dst.is_f32, self._pos(op.dst, sizes, n))
        vectors = int(np.prod(sizes))
        sticks = sum(p.shape[1] * (2 if f else 1) for f, p in (*self.srcs, self.dst))
        self.cycles = timing.sfp_cycles(config, vectors, sticks, op.FUNCTION in spyre_isa.SFP_TRANSCENDENTAL)

    @staticmethod
    def _pos(acc: spyre_isa.AccessAttr, sizes: Sequence[int], n: int) -> np.ndarray:
        pos = _bases(acc, n)[:, None] + loop_offsets(sizes, acc.strides.as_tuple())[None]
        if acc.is_f32:  # one 64-lane vector = two consecutive f32 sticks
            pos = np.stack([pos, pos + 1], axis=-1)
        return pos

    def run(self, model: DeviceModel, args: Sequence[DdrTensor], cores: np.ndarray) -> None:
        lx, num = model.memory.lx, model.memory.numerics
        c = cores[:, None, None] if self.dst[1].ndim == 3 else cores[:, None]
        vals = []
        for is_f32, pos in self.srcs:
            self._check_lx(model, cores, pos, "SFP source")
            cc = cores[:, None, None] if pos.ndim == 3 else cores[:, None]
            raw = lx[cc, pos]
            vals.append(raw.view(np.float32).reshape(len(cores), -1, 64) if is_f32 else num.decode(raw.view(np.uint16)).reshape(len(cores), -1, 64))
        if self.imm is not None:
            vals.append(self.imm)
        with np.errstate(all="ignore"):
            out = np.asarray(self.fn(*vals), dtype=np.float32)
        is_f32, pos = self.dst
        self._check_lx(model, cores, pos, "SFP destination")
        if is_f32:
            lx[c, pos] = out.view(np.uint8).reshape(*pos.shape, STICK_BYTES)
        else:
            lx[c, pos] = num.encode(out).view(np.uint8).reshape(*pos.shape, STICK_BYTES)


class _TransposePlan(_Plan):
    engine = "sfp"

    def __init__(self, op: spyre_isa.SfpTransposeOp, kernel: str, index: int, n: int, config: DeviceConfig):
        super().__init__(op, kernel, index)
        blocks, self.rows, self.cols = op.blocks.value.data, op.rows.value.data, op.cols.value.data

        def grid(acc: spyre_isa.AccessAttr, inner: int) -> np.ndarray:
            s0, s1 = acc.strides.as_tuple()
            return (
                _bases(acc, n)[:, None, None]
                + (np.arange(blocks) * s0)[None, :, None]
                + (np.arange(inner) * s1)[None, None, :]
            )

        self.src = grid(op.src, self.rows)
        self.dst = grid(op.dst, self.cols)
        self.cycles = timing.sfp_cycles(config, blocks * 64, blocks * (self.rows + self.cols), False)

    def run(self, model: DeviceModel, args: Sequence[DdrTensor], cores: np.ndarray) -> None:
        self._check_lx(model, cores, self.src, "transpose source")
        self._check_lx(model, cores, self.dst, "transpose destination")
        lx = model.memory.lx
        c = cores[:, None, None]
        src = lx[c, self.src].view(np.uint16)  # (n, blocks, rows, 64)
        block = np.zeros((*src.shape[:2], 64, 64), dtype=np.uint16)
        block[:, :, : self.rows, :] = src
        out = np.ascontiguousarray(block.transpose(0, 1, 3, 2)[:, :, : self.cols, :])
        lx[c, self.dst] = out.view(np.uint8)


def _plan_instruction(op: Operation, kernel: str, index: int, n: int, config: DeviceConfig, cores_moving: int) -> _Plan:
    if isinstance(op, spyre_isa.DmaOp):
        return _DmaPlan(op, kernel, index, n, config, cores_moving)
    if isinstance(op, spyre_isa.PtMatmulOp):
        return _PtPlan(op, kernel, index, n, config)
    if isinstance(op, spyre_isa.SfpUnaryOp | spyre_isa.SfpBinaryOp):
        return _SfpPlan(op, kernel, index, n, config)
    if isinstance(op, spyre_isa.SfpTransposeOp):
        return _TransposePlan(op, kernel, index, n, config)
    if isinstance(op, spyre_isa.BarrierOp | spyre_isa.SignalOp | spyre_isa.WaitOp):
        return _Plan(op, kernel, index)
    raise DeviceError(f"kernel {kernel}: the device model cannot execute '{op.name}'")


class _StreamPlan:
    def __init__(self, stream: spyre_isa.StreamOp, kernel: str, config: DeviceConfig, cores_moving: int):
        self.cores = np.asarray(stream.core_list, dtype=np.int64)
        bad = [c for c in stream.core_list if c >= config.cores]
        if bad:
            raise DeviceError(f"kernel {kernel}: stream uses core {bad[0]} but the device has {config.cores} cores")
        n = len(self.cores)
        self.instrs = [
            _plan_instruction(op, kernel, i, n, config, cores_moving) for i, op in enumerate(stream.body.block.ops)
        ]


class ProgramPlan:
    """A `spyre_isa.program` prepared for repeated execution."""

    def __init__(self, prog: spyre_isa.ProgramOp, config: DeviceConfig):
        self.name = prog.sym_name.data
        self.num_inputs = prog.num_inputs.data
        self.arg_layouts = [spyre.device_layout(a.type) for a in prog.args]
        moving = sum(len(s.core_list) for s in prog.streams)
        self.streams = [_StreamPlan(s, self.name, config, moving) for s in prog.streams]
        self.config = config

    def run(self, model: DeviceModel, args: Sequence[DdrTensor]) -> KernelRecord:
        streams = self.streams
        pcs = [0] * len(streams)
        clocks = [0.0] * len(streams)
        tokens: dict[int, list[float]] = defaultdict(list)
        at_barrier: set[int] = set()
        engine_cycles: dict[str, float] = defaultdict(float)
        instructions = reads = writes = macs = 0
        while True:
            progress = False
            for si, s in enumerate(streams):
                while pcs[si] < len(s.instrs) and si not in at_barrier:
                    ins = s.instrs[pcs[si]]
                    op = ins.op
                    if isinstance(op, spyre_isa.BarrierOp):
                        at_barrier.add(si)
                        break
                    if isinstance(op, spyre_isa.WaitOp):
                        need = op.count.value.data
                        got = tokens[op.token.value.data]
                        if len(got) < need:
                            break
                        clocks[si] = max(clocks[si], *got[:need])
                        del got[:need]
                    elif isinstance(op, spyre_isa.SignalOp):
                        tokens[op.token.value.data].append(clocks[si])
                    ins.run(model, args, s.cores)
                    clocks[si] += ins.cycles
                    n = len(s.cores)
                    engine_cycles[ins.engine] += ins.cycles * n
                    instructions += n
                    reads += ins.ddr_read
                    writes += ins.ddr_write
                    macs += ins.macs
                    pcs[si] += 1
                    progress = True
            unfinished = [si for si in range(len(streams)) if pcs[si] < len(streams[si].instrs)]
            if not unfinished:
                break
            if at_barrier and at_barrier == set(range(len(streams))):
                release = max(clocks)
                for si in at_barrier:
                    clocks[si] = release
                    pcs[si] += 1
                at_barrier.clear()
                continue
            if not progress:
                where = "; ".join(
                    f"cores {list(streams[si].cores)} at instruction #{pcs[si]} ({streams[si].instrs[pcs[si]].op.name})"
                    for si in unfinished
                )
                raise DeviceError(f"kernel {self.name}: deadlock, every unfinished core is blocked: {where}")
        cycles = max(clocks, default=0.0)
        return KernelRecord(
            name=self.name,
            time_s=self.config.launch_overhead_s + cycles / self.config.clock_hz,
            cycles=cycles,
            cores=sum(len(s.cores) for s in streams if s.instrs),
            instructions=instructions,
            ddr_read_bytes=reads,
            ddr_write_bytes=writes,
            macs=macs,
            engine_cycles=dict(engine_cycles),
        )


# endregion
# region The model


class DeviceModel:
    """One simulated Spyre card: memories, prepared programs, and the profile of its runs."""

    def __init__(self, config: DeviceConfig = DEFAULT_CONFIG):
        self.config = config
        self.memory = DeviceMemory(config)
        self.profile = Profile()
        self._plans: dict[spyre_isa.ProgramOp, ProgramPlan] = {}

    def plan(self, prog: spyre_isa.ProgramOp) -> ProgramPlan:
        plan = self._plans.get(prog)
        if plan is None:
            plan = self._plans[prog] = ProgramPlan(prog, self.config)
        return plan

    def launch(self, prog: spyre_isa.ProgramOp, inputs: Sequence[DdrTensor]) -> list[DdrTensor]:
        plan = self.plan(prog)
        if len(inputs) != plan.num_inputs:
            raise DeviceError(f"kernel {plan.name} takes {plan.num_inputs} inputs, got {len(inputs)}")
        for i, (t, want) in enumerate(zip(inputs, plan.arg_layouts)):
            if t.layout != want:
                raise DeviceError(f"kernel {plan.name}: input {i} has layout {t.layout}, the program expects {want}")
        outputs = [self.memory.allocate(lay, f"{plan.name}.out{i}") for i, lay in enumerate(plan.arg_layouts[plan.num_inputs :])]
        record = plan.run(self, [*inputs, *outputs])
        self.profile.kernels.append(record)
        return outputs


# endregion
# region Host side


_NP_DTYPES = {"f32": np.float32, "f16": np.float16, "f64": np.float64, "bf16": np.float32}


def host_dtype(t: TensorType) -> Any:
    return _NP_DTYPES.get(str(t.element_type), np.float32)


@register_impls
class HostFunctions(InterpreterFunctions):
    """Host-side ops of a compiled module: constants, transfers, views and launches.

    `resident` caches device copies of values that do not change between calls (constants,
    and arguments the caller marks with a residency key, e.g. model parameters)."""

    def __init__(self, model: DeviceModel, ctx: Any, arg_keys: Sequence[Any] | None = None):
        self.model = model
        self.ctx = ctx
        self.arg_keys = list(arg_keys or [])
        self.resident: dict[Any, DdrTensor] = {}
        self.transient: list[DdrTensor] = []

    @impl(arith.ConstantOp)
    def run_constant(self, interpreter: Interpreter, op: arith.ConstantOp, args: tuple[Any, ...]):
        value = op.value
        if isinstance(value, DenseResourceAttr):
            from spyre_mlir.dialects.torch import resource_to_numpy

            return (resource_to_numpy(self.ctx, value),)
        if isinstance(value, DenseIntOrFPElementsAttr):
            t = value.get_type()
            return (np.asarray(value.get_values(), dtype=np.float32).reshape(t.get_shape()),)
        return (value.value.data,)  # type: ignore[union-attr]

    def _residency_key(self, op: spyre.ToDeviceOp) -> Any:
        src = op.input
        if isinstance(src, BlockArgument) and src.index < len(self.arg_keys):
            key = self.arg_keys[src.index]
            return None if key is None else (op, key)
        if isinstance(src.owner, arith.ConstantOp):
            return (op, "constant")
        return None

    @impl(spyre.ToDeviceOp)
    def run_to_device(self, interpreter: Interpreter, op: spyre.ToDeviceOp, args: tuple[Any, ...]):
        key = self._residency_key(op)
        if key is not None and key in self.resident:
            return (self.resident[key],)
        layout = spyre.device_layout(op.result.type)
        perm = op.permutation.as_tuple() if op.permutation is not None else None
        t = self.model.memory.to_device(np.asarray(args[0]), layout, perm)
        self.model.profile.transfers_bytes += t.nbytes
        if key is not None:
            self.resident[key] = t
        else:
            self.transient.append(t)
        return (t,)

    @impl(spyre.FromDeviceOp)
    def run_from_device(self, interpreter: Interpreter, op: spyre.FromDeviceOp, args: tuple[Any, ...]):
        t: DdrTensor = args[0]
        self.model.profile.transfers_bytes += t.nbytes
        res = op.result.type
        assert isinstance(res, TensorType)
        return (self.model.memory.from_device(t).astype(host_dtype(res)),)

    @impl(spyre.PermuteOp)
    def run_permute(self, interpreter: Interpreter, op: spyre.PermuteOp, args: tuple[Any, ...]):
        return (args[0].view_as(spyre.device_layout(op.result.type)),)

    @impl(spyre.ReshapeOp)
    def run_reshape(self, interpreter: Interpreter, op: spyre.ReshapeOp, args: tuple[Any, ...]):
        return (args[0].view_as(spyre.device_layout(op.result.type)),)

    @impl(spyre_isa.LaunchOp)
    def run_launch(self, interpreter: Interpreter, op: spyre_isa.LaunchOp, args: tuple[Any, ...]):
        prog = interpreter.get_op_for_symbol(op.program)
        assert isinstance(prog, spyre_isa.ProgramOp)
        outs = self.model.launch(prog, list(args))
        self.transient.extend(outs)
        return tuple(outs)

    def release_transients(self) -> None:
        for t in self.transient:
            self.model.memory.free(t)
        self.transient.clear()


class Executable:
    """A compiled module bound to a device model: call it with host arrays."""

    def __init__(self, module: ModuleOp, ctx: Any, model: DeviceModel | None = None, entry: str = "main"):
        self.module = module
        self.model = model or DeviceModel()
        self.entry = entry
        self.host = HostFunctions(self.model, ctx)
        self.interpreter = Interpreter(module)
        self.interpreter.register_implementations(FuncFunctions())
        self.interpreter.register_implementations(self.host)
        fn = next((op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == entry), None)
        if fn is None:
            raise DeviceError(f"the module has no function @{entry} to run")
        self.function = fn
        for op in module.walk():
            if not isinstance(op, ModuleOp | func.FuncOp | func.ReturnOp) and op.dialect_name() not in ("spyre", "spyre_isa", "arith"):
                raise DeviceError(f"'{op.name}' is not executable on the device model: run the spyre-pipeline first")

    def __call__(self, *inputs: np.ndarray, arg_keys: Sequence[Any] | None = None) -> tuple[np.ndarray, ...]:
        self.host.arg_keys = list(arg_keys or [])
        try:
            return tuple(self.interpreter.call_op(self.entry, tuple(inputs)))
        finally:
            self.host.release_transients()


# endregion
