"""The host side of a compiled module: a straight-line executor of its `func.func`.

A compiled function holds host ops and device ops in program order:

    arith.constant, torch.constant.*, torch.prim.ListConstruct    host values
    spyre.to_device / spyre.from_device                             transfers (DL16 rounding)
    spyre.permute / spyre.reshape                                   free views of DDR tensors
    spyre_isa.launch                                                a program on the device model
    torch.aten.* (left on the host by convert-torch-to-spyre)       PyTorch eager on the CPU
    builtin.unrealized_conversion_cast                              host tensor <-> !torch.vtensor

What the executor knows of the function before it runs it (lifetimes, launches in place, the
copies of mutated arguments) is worked out once at load (host_program.py, `HostProgram`).

Host torch ops run through `torch.ops.aten` (aten.py, `HostOp`), with their operands rebuilt
from the schema (dtype, layout and memory-format ints back to torch objects), so a graph split
between the device and the CPU computes exactly what PyTorch would on the CPU part.

`resident` (resident.py) keeps device copies of values that do not change between calls: constants, and
arguments the caller marks with a residency key (model parameters, a KV cache). One copy per
`spyre.to_device`: a call whose key differs from the held copy's (another tensor, or the same
one updated in place) frees that copy and uploads anew, so stale copies neither answer nor
accumulate. An argument's copy is the device model's, not the executable's, when its key names
the host tensor (`SharedKey`): every executable on the device model that wants that tensor in
that layout uses the one copy (`ResidentArguments`), as the card holds a model's weights and
KV cache once for all its programs (the length buckets of one model, a served model's step
buckets). A resident copy that no launch writes is frozen (read-only bytes), and the device
model may keep its values decoded beside it (memory.DeviceMemory.decoded). A table that only gathers
read (an embedding; `spyre.to_device ... gather_table`, spyre-mark-gather-tables) is uploaded row
by row as the gathers first read its rows (memory.LazyRowsTensor): the device holds the same bits, and a forward that reads 128 rows of
a 30522-row table does not read the rest of it from the host.

Launches between two points where the host waits for the card — the call's start, a
`spyre.from_device` whose value the host reads, the call's end — form one launch sequence: the
host starts its first kernel (`launch_overhead_s`), the card each later one
(`dispatch_overhead_s`; DeviceModel.record).

Each call is recorded as its steps (launches, transfers, CPU ops: DeviceModel.begin_call),
from which the host runtime's work follows in each runtime mode (sim/host_timeline.py). A
launch's program must be patched again when an address it names changed since its last call
(`Launch.patch`): a native device tensor's address is its storage's; every other value has the
graph's own place (the runtime gives a graph's inputs, weights, KV cache and intermediates fixed
buffers, a changed weight written into its place), so only a graph's first call and native
tensors at new places patch.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, cast

import numpy as np
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    ModuleOp,
    ShapedType,
    StringAttr,
    TensorType,
    UnrealizedConversionCastOp,
)
from xdsl.ir import Operation, SSAValue

from spyre_mlir.dialects import spyre, spyre_isa
from spyre_mlir.dialects import torch as t
from spyre_mlir.gc_pause import gc_paused
from spyre_mlir.layout import Layout
from spyre_mlir.runtime.aten import HostOp
from spyre_mlir.runtime.host_program import HostProgram, argument_of, returned, view_root
from spyre_mlir.runtime.resident import Resident
from spyre_mlir.sim.interpreter import DeviceModel, host_threads
from spyre_mlir.sim.memory import DdrTensor, DeviceError
from spyre_mlir.sim.profile import KernelRecord, record_round_trip, record_transfer


class _View(NamedTuple):
    """A spyre.permute or spyre.reshape, prepared: its result's layout (the same bytes)."""

    layout: Layout


class _Transfer(NamedTuple):
    """A spyre.to_device, prepared: the function argument it uploads (None: another value),
    its result's layout, and the permutation applied first."""

    argument: int | None
    layout: Layout
    permutation: tuple[int, ...] | None


@dataclass(eq=False)
class DeviceInput:
    """An argument that is already on the device (a tensor of the native device): its bytes,
    when they are in a layout some program may read as they are (else None), and its values.
    A transfer of it is a copy within DDR, not a host transfer: in place when the transfer's
    layout is the tensor's own and no launch writes the copy, else a relayout on the card."""

    tensor: DdrTensor | None
    values: Callable[[], np.ndarray]
    """The logical values (float32 for floating point), read when a relayout or a host op needs them."""


class Executable:
    """A compiled module bound to a device model: call it with host arrays (or `DeviceInput`s)."""

    def __init__(self, module: ModuleOp, ctx: Any, model: DeviceModel | None = None, entry: str = "main"):
        self.module = module
        self.ctx = ctx
        self.model = model or DeviceModel()
        self._called = False
        self._device_outputs = False
        self._round_trip = False
        """Whether the host is between a round trip's wait for a device value and the next launch."""
        fn = next((op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == entry), None)
        if fn is None:
            raise DeviceError(f"the module has no function @{entry} to run")
        if len(fn.body.blocks) != 1:
            raise DeviceError(
                f"@{entry} has {len(fn.body.blocks)} blocks; the host runs straight-line functions (one block)"
            )
        assumed = module.attributes.get(spyre.NUMERICS_ATTR)
        if isinstance(assumed, StringAttr) and assumed.data != self.model.config.numerics:
            raise DeviceError(
                f"the module was compiled for numerics {assumed.data!r} ({spyre.NUMERICS_ATTR}: spyre-fold-infinity-tests "
                f"answered tests that only hold there), but the device model runs {self.model.config.numerics!r}: "
                f"compile it for {self.model.config.numerics!r}"
            )
        self.function = fn
        self.programs = {op.sym_name.data: op for op in module.ops if isinstance(op, spyre_isa.ProgramOp)}
        # a device model outlives its executables (the backend's is the process's): their
        # programs' plans go with them, or every compiled graph would stay in memory
        weakref.finalize(self, self.model.forget, tuple(self.programs.values()))
        self.steps = [self._prepare(op) for op in fn.body.block.ops]
        facts = self.facts = HostProgram.of(fn, self.programs)
        """What the executor knows of the function's ops before it runs them (host_program.py)."""
        self.in_place, self.copy_first, self.folded = facts.in_place, facts.copy_first, facts.folded
        self.gather_tables, self.written_transfers = facts.gather_tables, facts.written_transfers
        self._new_copies: dict[int, tuple[spyre.ToDeviceOp, DdrTensor]] = {}
        """This call's buffers of mutated arguments' new contents (`HostProgram.adopted`), by
        argument: each the argument's copy once the caller writes the contents back."""
        self._placements: dict[Operation, tuple[Any, ...]] = {}
        self.resident = Resident(self.model, self._placement)
        """Device copies kept between calls, by `spyre.to_device`: (residency key, copy)."""
        self.constants: dict[Operation, Any] = {}
        self.folded_values: dict[Operation, tuple[Any, ...]] = {}
        self.bound: dict[Any, tuple] = {}
        """Per launch site (a launch, or a copy the host issues): what its arguments were bound
        to at its last launch (`_binding`)."""
        self._foreign: set[int] = set()
        """The call's native device tensors used in place (by id): they are where they are."""

    def _prepare(self, op: Operation) -> tuple[Operation, Any]:
        if isinstance(op, spyre_isa.LaunchOp):
            name = op.program.root_reference.data
            if name not in self.programs:
                raise DeviceError(f"'spyre_isa.launch' of a missing program @{name}")
            return op, (
                self.programs[name],
                tuple(op.inputs),
                tuple(op.outputs),
                op.kernel_name,
            )  # read once: xDSL properties cost
        if op.name == "torch.prim.ListUnpack":
            return op, None
        if op.name.startswith("torch.") and not isinstance(op, t.VALUE_OPS):
            return op, HostOp(op)
        if isinstance(op, (func.ReturnOp, arith.ConstantOp, UnrealizedConversionCastOp, *t.VALUE_OPS)):
            return op, None
        if isinstance(op, spyre.PermuteOp | spyre.ReshapeOp):
            return op, _View(spyre.device_layout(op.result.type))
        if isinstance(op, spyre.ToDeviceOp):
            perm = op.permutation.as_tuple() if op.permutation is not None else None
            return op, _Transfer(argument_of(op), spyre.device_layout(op.result.type), perm)
        if isinstance(op, spyre.FromDeviceOp):
            return op, None
        raise DeviceError(
            f"'{op.name}' is not executable on the host or the device model: run the spyre-pipeline first"
        )

    def _copy_destination(
        self, op: spyre_isa.LaunchOp, env: dict[SSAValue, Any], owned: dict[SSAValue, DdrTensor]
    ) -> DdrTensor:
        """A copy of a launch in place's destination for it to write into, charged as a DDR
        copy (read and write at `ddr_bytes_per_s`; an assumption: the runtime's copy kernel)."""
        src = env[op.inputs[self.in_place[op]]]
        root = src.owner or src
        name = op.kernel_name
        new = self.model.memory.allocate(root.layout, f"{name}.copy")
        new.data[...] = root.data
        owned[op.results[0]] = new  # (the launch's output, once it wrote into it: a graph buffer)
        patch = self._patch(("copy", op), self._binding([src]))
        self.model.record(KernelRecord.copy(f"{name}.copy", root.nbytes, root.nbytes, self.model.config), patch)
        return new if src is root else new.view_as(src.layout)

    def written_back(self, arg: int, key: Any) -> None:
        """The caller has written this call's new contents of argument `arg` (the result its
        `spyre.aliasing_output` names) into its tensor, which `key` now names. The device copy
        this call wrote in place (`written_in_place`) holds those contents: it stays, under
        `key`; any other copy of the argument is stale and goes (as that one does with no key:
        a tensor that cannot be named between calls, such as an inference tensor)."""
        kept = self.facts.written_in_place.get(arg)
        new = self._new_copies.pop(arg, None)  # (the transfer, this call's buffer of the contents)
        for op in self.facts.transfers_of.get(arg, ()):
            held = self.resident.get(op)
            if held is None:
                continue
            if op is kept and key is not None:
                self.resident[op] = (key, held[1])
            else:
                del self.resident[op]
                self.model.memory.free(held[1])
        if new is not None:
            if key is None:
                self.model.memory.free(new[1])
            else:
                self.resident[new[0]] = (key, new[1])

    def _placement(self, op: Operation) -> tuple[Any, ...]:
        """What tells a transfer's copies of one tensor apart: its layout, permutation, and
        whether it is uploaded row by row (a gather table's: only the rows read are there)."""
        found = self._placements.get(op)
        if found is None:
            prepared = next(cast(_Transfer, p) for o, p in self.steps if o is op)
            found = self._placements[op] = (prepared.layout, prepared.permutation, op in self.gather_tables)
        return found

    # ------------------------------------------------------------------ values
    def _constant(self, op: Operation) -> Any:
        if op in self.constants:
            return self.constants[op]
        v: Any
        if isinstance(op, arith.ConstantOp | t.ValueTensorLiteralOp):
            value = op.value
            if isinstance(value, DenseResourceAttr):
                v = t.resource_to_numpy(self.ctx, value)
            elif isinstance(value, DenseIntOrFPElementsAttr):
                shaped = op.results[0].type
                assert isinstance(shaped, ShapedType | t.ValueTensorType)  # a dense value's result is a tensor
                v = np.asarray(value.get_values()).reshape(shaped.get_shape())
            else:
                v = value.value.data
        elif isinstance(op, t.ConstantIntOp):
            v = op.int_value
        elif isinstance(op, t.ConstantFloatOp):
            v = op.float_value
        elif isinstance(op, t.ConstantBoolOp):
            v = bool(op.value.value.data)
        elif isinstance(op, t.ConstantStrOp):
            v = op.value.data
        elif isinstance(op, t.ConstantDeviceOp):
            v = op.value.data
        else:  # torch.constant.none
            v = None
        self.constants[op] = v
        return v

    def _residency_key(self, op: spyre.ToDeviceOp, prepared: _Transfer, arg_keys: Sequence[Any]) -> Any:
        """What names the uploaded value between calls (compared with ==), or None: not kept.
        An argument's key is the caller's (`arg_keys`: it must tell apart values that share an
        id, such as a new tensor where a freed one was); a constant's, a literal's or a folded
        op's result's, is "constant" (the value never changes)."""
        j = prepared.argument
        if j is not None:
            return arg_keys[j] if j < len(arg_keys) else None
        src = view_root(op.input)
        if isinstance(src.owner, arith.ConstantOp | t.ValueTensorLiteralOp) or src.owner in self.folded:
            return "constant"
        return None

    # ------------------------------------------------------------------ run
    def __call__(
        self, *inputs: np.ndarray | DeviceInput, arg_keys: Sequence[Any] | None = None, device_outputs: bool = False
    ) -> tuple[np.ndarray, ...]:
        """Run the function. `device_outputs`: the results stay on the device (the caller keeps
        them as device tensors), so returning them is no host transfer."""
        # the first call prepares the programs (plans, timelines, batched steps): IR-sized
        # allocations, with the garbage collector held off as while compiling
        first, self._called = not self._called, True
        self._device_outputs = device_outputs
        with host_threads(), gc_paused() if first else contextlib.nullcontext():
            return self._call(inputs, arg_keys)

    def _call(
        self, inputs: Sequence[np.ndarray | DeviceInput], arg_keys: Sequence[Any] | None
    ) -> tuple[np.ndarray, ...]:
        keys = list(arg_keys or [])
        args = self.function.body.block.args
        if len(inputs) != len(args):
            raise DeviceError(f"@{self.function.sym_name.data} takes {len(args)} inputs, {len(inputs)} given")
        owned: dict[SSAValue, DdrTensor] = {}
        """DDR tensors this call allocated for a value: freed once no later step reads it, the
        rest when the call ends."""
        memory = self.model.memory
        env: dict[SSAValue, Any] = {}
        for _, stale in self._new_copies.values():  # (a call whose caller took no new contents)
            memory.free(stale)
        self._new_copies.clear()
        self.model.end_sequence()  # a call's first launch is the host's
        self._round_trip = False
        self._foreign.clear()
        self.model.begin_call(self.function.sym_name.data)
        try:
            for a, x in zip(args, inputs):
                if spyre.is_device_tensor(a.type) and not isinstance(x, DdrTensor):  # a device-level function
                    env[a] = owned[a] = memory.to_device(np.asarray(x), spyre.device_layout(a.type))
                else:
                    env[a] = x
            for (op, prepared), (dead_values, dead_roots) in zip(self.steps, self.facts.dead_after):
                returned = self._step(op, prepared, env, keys, owned)
                for v in dead_values:
                    env.pop(v, None)
                for r in dead_roots:
                    dev = owned.pop(r, None)
                    if dev is not None:
                        memory.free(dev)
                if returned is not None:
                    return returned
        finally:
            self.model.end_sequence()
            self.model.end_call()
            for dev in owned.values():
                memory.free(dev)
        raise DeviceError(f"@{self.function.sym_name.data} has no func.return")

    def _transferred(self, nbytes: int, kind: str, to_device: bool) -> None:
        """Bytes over the host link (`Profile.transfer_bytes_by_kind` names the kinds)."""
        round_trip = self._round_trip and kind == "intermediate"
        self.model.profile.add_transfer(nbytes, self.model.config, kind, round_trip)
        self.model.transfer(nbytes, kind, to_device)
        record_transfer(nbytes, self.model.config, kind, round_trip)

    def _patch(self, site: Any, binding: tuple) -> bool:
        """Whether the launch at `site` must have its program patched: its arguments are bound
        otherwise than at its last launch (or it never ran)."""
        if self.bound.get(site) == binding:
            return False
        self.bound[site] = binding
        return True

    def _binding(self, args: Sequence[Any]) -> tuple:
        """What a launch's arguments are bound to: a native device tensor's, its address (it
        lives where its storage is); any other value's, its place in the argument list (the
        graph's own buffer for it: the runtime gives a graph's inputs, weights, KV cache and
        intermediates fixed places)."""
        out: list[int] = []
        for i, a in enumerate(args):
            root = a.owner or a if isinstance(a, DdrTensor) else None
            out.append(root.address if root is not None and id(root) in self._foreign else i)
        return tuple(out)

    def _host_value(self, x: Any) -> Any:
        """A value as a host op takes it: a device argument's values cross the link."""
        if isinstance(x, list):  # (a list operand: torch.prim.ListConstruct's)
            return [self._host_value(v) for v in x]
        if isinstance(x, DeviceInput):
            v = x.values()
            index = not np.issubdtype(v.dtype, np.floating)  # index and mask building on the host, by design
            self._transferred(v.size * (v.itemsize if index else 2), "index" if index else "argument", False)
            return v
        return x

    def _placed(
        self, x: DeviceInput, op: spyre.ToDeviceOp, prepared: _Transfer, owned: dict[SSAValue, DdrTensor]
    ) -> DdrTensor:
        """A device argument where a transfer wants it: its own bytes, or a relayout's copy."""
        layout, perm = prepared.layout, prepared.permutation
        mine = x.tensor
        if (
            mine is not None
            and perm is None
            and mine.layout.places_like(layout)
            and op not in self.written_transfers
            and op not in self.facts.consumes.values()
        ):
            self._foreign.add(id(mine.owner or mine))
            return mine.view_as(layout)
        dev = owned[op.result] = self.model.memory.to_device(x.values(), layout, perm)
        # (a tensor not in a layout a program reads: its bytes' place is not tracked, patched anew)
        patch = self._patch(("relayout", op), (mine.address,)) if mine is not None else True
        self.model.record(KernelRecord.copy("relayout", dev.nbytes, dev.nbytes, self.model.config), patch)
        return dev

    def _step(
        self, op: Operation, prepared: Any, env: dict[SSAValue, Any], keys: list, owned: dict[SSAValue, DdrTensor]
    ) -> tuple[Any, ...] | None:
        """Execute one op of the function: its results go into `env`; a return's values are returned."""
        memory = self.model.memory
        if isinstance(op, func.ReturnOp):
            return tuple(
                memory.from_device(env[v]) if isinstance(env[v], DdrTensor) else self._host_value(env[v])
                for v in op.arguments
            )
        if isinstance(op, spyre_isa.LaunchOp):
            prog, inputs, outputs, name = prepared
            # (a device argument a program reads as host indices: its values, where it is)
            args: list[Any] = [x.values() if isinstance(x := env[v], DeviceInput) else x for v in inputs]
            if op in self.copy_first:
                args[self.in_place[op]] = self._copy_destination(op, env, owned)
            elif (consumed := self.facts.consumes.get(op)) is not None and (
                held := self.resident.pop(consumed, None)
            ) is not None:
                owned[consumed.result] = held[1]  # this call's now: freed once unread
            outs = self.model.launch(prog, args, name, self._patch(op, self._binding(args)))
            self._round_trip = False
            if (
                op not in self.in_place or op in self.copy_first
            ):  # an output in place is its input's buffer, owned as it is
                owned.update(zip(outputs, (o.owner or o for o in outs)))
            env.update(zip(outputs, outs))
        elif prepared.__class__ is _View:  # (the most frequent op after launches)
            env[op.results[0]] = env[op.operands[0]].view_as(prepared.layout)
        elif isinstance(prepared, HostOp):
            results = self.folded_values.get(op)
            if results is None:
                results = prepared.run([self._host_value(env[v]) for v in op.operands])
                if op in self.folded:
                    self.folded_values[op] = results
            env.update(zip(op.results, results))
        elif prepared.__class__ is _Transfer:
            op = cast(spyre.ToDeviceOp, op)
            x = env[op.operands[0]]
            if isinstance(x, DeviceInput):
                env[op.results[0]] = self._placed(x, op, prepared, owned)
                return None
            key = self._residency_key(op, prepared, keys)
            self.resident.bind(op, key)
            held = self.resident.get(op) if key is not None else None
            if held is not None:
                # (a copy another executable froze cannot take this one's writes in place)
                if held[0] == key and not (held[1].frozen and op in self.written_transfers):
                    env[op.results[0]] = held[1]
                    return None
                del self.resident[op]  # another value, or this one updated: the old copy goes
                memory.free(held[1])
            layout, perm = prepared.layout, prepared.permutation
            if op in self.gather_tables:
                dev = memory.to_device_rows(np.asarray(x), layout)
            else:
                dev = memory.to_device(np.asarray(x), layout, perm)
            self._transferred(dev.nbytes, "argument" if prepared.argument is not None else "intermediate", True)
            if key is not None:
                self.resident[op] = (key, dev)
                if op not in self.written_transfers and op not in self.gather_tables:
                    dev.freeze()
            else:
                owned[op.results[0]] = dev
            env[op.results[0]] = dev
        elif isinstance(op, spyre.FromDeviceOp):
            dev = env[op.input]
            # a mirror keeps the caller's tensor in step (FromDeviceOp.mirror), a result kept on
            # the device stays there: no transfer
            is_result = returned(op.result)
            adopted = self.facts.adopted.get(op)
            if adopted is not None and (buf := owned.pop(adopted[2], None)) is not None:
                j, transfer, _ = adopted
                self._new_copies[j] = (transfer, buf)  # the argument's copy once written back
            if op.mirror is None and not (self._device_outputs and is_result):
                round_trip = not is_result and self.model.sequence_open  # a CPU op between device kernels
                if round_trip:
                    self._round_trip = True
                    self.model.profile.add_round_trip(self.model.config)
                    record_round_trip(self.model.config)
                self._transferred(dev.nbytes, "result" if is_result else "intermediate", False)
                if round_trip:
                    self.model.host_op(self.model.config.host_op_s)
                self.model.end_sequence()  # the host waits for the value
            res = op.result.type
            assert isinstance(res, TensorType)
            env[op.result] = memory.from_device(dev).astype(_host_numpy_dtype(res))
        elif isinstance(op, UnrealizedConversionCastOp):
            env.update(zip(op.outputs, (env[v] for v in op.inputs)))
        elif isinstance(op, t.PrimListConstructOp):
            env[op.result] = [env[v] for v in op.elements]
        elif op.name == "torch.prim.ListUnpack":
            env.update(zip(op.results, env[op.operands[0]]))
        else:
            env[op.results[0]] = self._constant(op)
        return None


def _host_numpy_dtype(t_: TensorType) -> Any:
    return {"f32": np.float32, "f16": np.float16, "f64": np.float64}.get(str(t_.element_type), np.float32)
