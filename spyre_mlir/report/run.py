"""A compiled module run for a report: one warm call, then a profiled call whose every launch is
recorded (its profile record, its outputs' values, the LX it touches on each core), the
float64 reference of the torch-level module on the same inputs, and what each torch op became.

    data = report_data(compiled, ctx, capture, inputs, config)   # a JSON-able dict; data.profile

Every time in the data is a `KernelRecord`'s or the `Profile`'s own number (test_report.py
compares them).
"""

from __future__ import annotations

import base64
import gzip
import json
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation, SSAValue

from spyre_mlir.dialects import spyre, spyre_isa
from spyre_mlir.dialects import torch as t
from spyre_mlir.lowering.convert_torch_to_spyre.host_policy import host_by_design
from spyre_mlir.reference.evaluate import ReferenceError, evaluate
from spyre_mlir.report.capture import Capture, entry_function, op_text
from spyre_mlir.runtime.host import Executable
from spyre_mlir.sim.interpreter import DeviceModel
from spyre_mlir.sim.memory import DdrTensor
from spyre_mlir.sim.numerics import get_numerics
from spyre_mlir.sim.profile import KernelRecord, Profile, profile
from spyre_mlir.target.config import DeviceConfig
from spyre_mlir.target.constants import STICK_BYTES


@dataclass
class Launch:
    """One launch of the profiled call."""

    name: str
    program: str
    origin: spyre.OriginAttr | None
    outputs: list[np.ndarray]
    lx_bytes: list[int]
    """Per core: LX bytes the launch touches, and the values resident from earlier launches."""


class RecordingDeviceModel(DeviceModel):
    """A device model that, while `recording`, keeps each launch's outputs and LX use by its
    profile record."""

    def __init__(self, config: DeviceConfig, launch_origins: dict[str, spyre.OriginAttr]):
        super().__init__(config)
        self.recording = False
        self.launches: dict[int, Launch] = {}
        """By id of the launch's KernelRecord."""
        self.origins = launch_origins
        self._footprints: dict[str, list[list[tuple[int, int]]]] = {}

    def launch(
        self, prog: spyre_isa.ProgramOp, inputs: Sequence[DdrTensor], name: str | None = None, patch: bool = True
    ) -> list[DdrTensor]:
        held = list(self.resident)
        outs = super().launch(prog, inputs, name, patch)
        if self.recording:
            name = name or prog.sym_name.data
            record = self.profile.kernels[-1]
            per_core = self._footprint(prog)
            lx = [_union_bytes(per_core[c] + held) for c in range(self.config.cores)]
            self.launches[id(record)] = Launch(
                name,
                prog.sym_name.data,
                self.origins.get(name),
                [np.asarray(self.memory.from_device(o)) for o in outs],
                lx,
            )
        return outs

    def _footprint(self, prog: spyre_isa.ProgramOp) -> list[list[tuple[int, int]]]:
        """Per core, the LX stick intervals the program's instructions read or write."""
        key = prog.sym_name.data
        if key not in self._footprints:
            per_core: list[list[tuple[int, int]]] = [[] for _ in range(self.config.cores)]
            for s in self.plan(prog).stream_plans():
                for row, core in enumerate(s.cores):
                    for ins in s.instrs:
                        w = ins.works[row]
                        per_core[int(core)].extend(w.reads)
                        per_core[int(core)].extend(w.writes)
            self._footprints[key] = per_core
        return self._footprints[key]


def _union_bytes(intervals: list[tuple[int, int]]) -> int:
    total, end = 0, -1
    for lo, hi in sorted(intervals):
        if hi <= end:
            continue
        total += hi - max(lo, end)
        end = hi
    return total * STICK_BYTES


def gz64(text: str) -> str:
    """Text gzipped and base64-encoded (the page inflates it with DecompressionStream)."""
    return base64.b64encode(gzip.compress(text.encode(), compresslevel=6, mtime=0)).decode()


@dataclass
class ReportData:
    data: dict[str, Any]
    profile: Profile
    outputs: list[np.ndarray] = field(default_factory=list)


def report_data(
    compiled: ModuleOp,
    ctx: Any,
    capture: Capture,
    inputs: Sequence[np.ndarray],
    config: DeviceConfig,
    title: str = "",
    entry: str = "main",
) -> ReportData:
    """Run `compiled` (the pipeline's output for `capture`'s torch module) on `inputs`: a warm
    call, then the profiled one; the report's data from it."""
    launch_origins = {
        op.kernel_name: origin
        for op in compiled.walk()
        if isinstance(op, spyre_isa.LaunchOp) and (origin := spyre.origin_of(op)) is not None
    }
    model = RecordingDeviceModel(config, launch_origins)
    exe = Executable(compiled, ctx, model, entry)
    with warnings.catch_warnings():  # (the caller's own run warns; the report shows `saturated`)
        warnings.simplefilter("ignore")
        exe(*inputs)
        model.recording = True
        with profile() as prof:
            outputs = list(exe(*inputs))
        model.recording = False
    reference, reference_note = _reference(capture, inputs, config, ctx, entry)
    ops, edges = _torch_graph(capture, compiled, entry)
    kernels = []
    start = 0.0
    for i, rec in enumerate(prof.kernels):
        launch = model.launches.get(id(rec))
        kernels.append(_kernel(i, rec, launch, start, capture, reference, config))
        start += rec.time_s
    _place(ops, kernels)
    programs = {op.sym_name.data: op_text(op) for op in compiled.ops if isinstance(op, spyre_isa.ProgramOp)}
    data = {
        "title": title,
        "config": {f.name: getattr(config, f.name) for f in fields(DeviceConfig)},
        "summary": {
            "total_time_s": prof.total_time_s,
            "launches": len(prof.kernels),
            "ddr_bytes": prof.total_ddr_bytes,
            "macs": sum(k.macs for k in prof.kernels),
            "transfers_bytes": prof.transfers_bytes,
            "transfers_s": prof.transfers_s,
            "transfer_bytes_by_kind": dict(prof.transfer_bytes_by_kind),
            "host_round_trips": prof.host_round_trips,
            "host_round_trip_s": prof.host_round_trip_s,
            "host_ops_s": prof.host_ops_s,
            "torch_ops": len(ops),
            "reference": reference_note,
        },
        "ops": ops,
        "edges": edges,
        "kernels": kernels,
        "host_sequence": _host_sequence(compiled, entry),
        "programs": {name: gz64(text) for name, text in programs.items()},
        "stages": [{"name": name, "text": gz64(text)} for name, text in capture.stages],
        "trace": gz64(json.dumps(prof.chrome_trace())),
    }
    return ReportData(data, prof, outputs)


def _reference(
    capture: Capture, inputs: Sequence[np.ndarray], config: DeviceConfig, ctx: Any, entry: str
) -> tuple[dict[int, list[tuple[np.ndarray, np.ndarray] | None]], str]:
    """Every numbered torch op's float64 value and DL16 bound (by its number), or why not."""
    found: dict[int, list[tuple[np.ndarray, np.ndarray] | None]] = {}
    if capture.torch_module is None:
        return found, "no torch-level module"

    def on_op(op: Operation, results: list[tuple[np.ndarray, np.ndarray] | None]) -> None:
        origin = spyre.origin_of(op)
        if origin is not None and origin.op_ids:
            found[origin.op_ids[0]] = results

    exact = [np.asarray(x, np.float64) if np.asarray(x).dtype.kind == "f" else np.asarray(x) for x in inputs]
    try:
        evaluate(capture.torch_module, exact, get_numerics(config.numerics), ctx, entry, on_op=on_op)
    except ReferenceError as e:
        return found, f"the reference stopped: {e}"
    return found, "float64 reference with the device's error bounds (reference/evaluate.py)"


def _short(name: str) -> str:
    return name.removeprefix("torch.aten.").removeprefix("torch.")


def _type_text(v: SSAValue) -> str:
    ty = v.type
    if isinstance(ty, t.ValueTensorType) and ty.has_sizes:
        shape = "x".join(map(str, ty.get_shape()))
        return f"{shape} {ty.get_dtype() if ty.has_dtype else '?'}"
    return str(ty)


def _producers(v: SSAValue, number: dict[Operation, int], args: dict[SSAValue, int]) -> list[str]:
    """The graph nodes a value comes from: a numbered op, an argument, or through a list."""
    owner = v.owner
    if v in args:
        return [f"a{args[v]}"]
    if isinstance(owner, Operation):
        if owner in number:
            return [f"o{number[owner]}"]
        if owner.name in ("torch.prim.ListConstruct",):
            return [p for w in owner.operands for p in _producers(w, number, args)]
    return []


def _torch_graph(capture: Capture, compiled: ModuleOp, entry: str) -> tuple[list[dict[str, Any]], list[list[str]]]:
    """The numbered torch ops (graph nodes, with what became of each) and the data flow."""
    if capture.torch_module is None:
        return [], []
    fn = entry_function(capture.torch_module, entry)
    number: dict[Operation, int] = {}
    for op in fn.body.block.ops:
        origin = spyre.origin_of(op)
        if origin is not None and origin.op_ids:
            number[op] = origin.op_ids[0]
    args: dict[SSAValue, int] = {a: i for i, a in enumerate(fn.body.block.args)}
    host: dict[int, dict[str, Any]] = {}
    for op in entry_function(compiled, entry).body.block.ops:
        origin = spyre.origin_of(op)
        if origin is None or not op.name.startswith("torch."):
            continue
        by_design, why = host_by_design(op)
        reason = op.attributes.get("spyre.host")
        text = reason.data if isinstance(reason, StringAttr) else why
        for i in origin.op_ids:
            host[i] = {"placement": "host" if by_design else "cpu", "reason": text}
    views = {
        i
        for op in entry_function(compiled, entry).body.block.ops
        if isinstance(op, spyre.PermuteOp | spyre.ReshapeOp) and (o := spyre.origin_of(op)) is not None
        for i in o.op_ids
    }
    ops: list[dict[str, Any]] = []
    edges: list[list[str]] = []
    for op, i in number.items():
        node: dict[str, Any] = {
            "id": i,
            "name": op.name,
            "short": _short(op.name),
            "types": [_type_text(r) for r in op.results],
            "text": op_text(op)[:2000],
            "placement": "folded",
            "reason": "",
            "kernels": [],
            "home": None,
            "error": None,
        }
        if i in host:
            node.update(host[i])
        elif i in views:
            node["placement"] = "view"
            node["reason"] = "a view of device bytes: no data moves"
        ops.append(node)
        for v in op.operands:
            for p in _producers(v, number, args):
                edges.append([p, f"o{i}"])
    ret = fn.body.block.last_op
    if isinstance(ret, func.ReturnOp):
        for k, v in enumerate(ret.operands):
            for p in _producers(v, number, args):
                edges.append([p, f"r{k}"])
    return ops, edges


def _engine_seconds(rec: KernelRecord) -> dict[str, float]:
    """Per engine group, the busiest core's busy time (engines overlap: these do not add up to
    the kernel's time)."""
    busy: dict[int, dict[str, list[tuple[float, float]]]] = {}
    for s in rec.spans:
        group = "ddr" if s.engine in ("dma_in", "dma_out") else s.engine
        busy.setdefault(s.core, {}).setdefault(group, []).append((s.start, s.end))
    out = {"ddr": 0.0, "pt": 0.0, "sfp": 0.0, "ring": 0.0}
    for engines in busy.values():
        for group, spans in engines.items():
            total, end = 0.0, -math.inf
            for lo, hi in sorted(spans):
                if hi <= end:
                    continue
                total += hi - max(lo, end)
                end = hi
            out[group] = max(out.get(group, 0.0), total / rec.config.clock_hz)
    return out


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _kernel(
    index: int,
    rec: KernelRecord,
    launch: Launch | None,
    start: float,
    capture: Capture,
    reference: dict[int, list[tuple[np.ndarray, np.ndarray] | None]],
    config: DeviceConfig,
) -> dict[str, Any]:
    info = capture.kernels.get(rec.name)
    origin = launch.origin if launch is not None else None
    k: dict[str, Any] = {
        "index": index,
        "name": rec.name,
        "start_s": start,
        "time_s": rec.time_s,
        "overhead_s": rec.overhead_s,
        "cycles": rec.cycles,
        "cores": rec.cores,
        "instructions": rec.instructions,
        "ddr_read_bytes": rec.ddr_read_bytes,
        "ddr_write_bytes": rec.ddr_write_bytes,
        "ring_bytes": rec.ring_bytes,
        "macs": rec.macs,
        "pt_utilization": rec.pt_utilization,
        "sfp_utilization": rec.sfp_utilization,
        "ddr_utilization": rec.ddr_utilization,
        "arithmetic_intensity": _finite(rec.arithmetic_intensity),
        "attainment": rec.attainment,
        "bottleneck": rec.bottleneck,
        "engines_s": _engine_seconds(rec),
        "ddr_at_bandwidth_s": rec.ddr_bytes / config.ddr_bytes_per_s,
        "core_ends_s": {str(c): e / config.clock_hz for c, e in sorted(rec.core_ends.items())},
        "saturated": rec.saturated,
        "program": launch.program if launch is not None else None,
        "ops": list(origin.op_ids) if origin is not None else [],
        "values": list(origin.value_ids) if origin is not None else [],
        "spyre": info.text if info is not None else None,
        "plan": info.plan if info is not None else None,
        "form": info.form if info is not None else [],
        "relayout": info.relayout if info is not None else rec.instructions == 0,
        "lx_bytes": launch.lx_bytes if launch is not None else [],
        "errors": [],
    }
    in_lx = info is not None and "resident_out" in info.plan  # its result stays in LX: DDR holds none
    if launch is not None and origin is not None:
        for j, (held, dev) in enumerate(zip(origin.value_ids, launch.outputs)):
            if in_lx:
                k["errors"].append({"output": j, "value": held, "compared": False, "why": "kept in LX (resident_out)"})
            else:
                k["errors"].append(_error(j, held, dev, reference))
    return k


def _error(
    j: int, held: int, dev: np.ndarray, reference: dict[int, list[tuple[np.ndarray, np.ndarray] | None]]
) -> dict[str, Any]:
    """Output j of a launch against the reference value of the torch op it holds."""
    out: dict[str, Any] = {"output": j, "value": held, "compared": False}
    for pair in reference.get(held, []) if held >= 0 else []:
        if pair is None or pair[0].shape != dev.shape:
            continue
        ref, bound = pair
        with np.errstate(invalid="ignore"):
            err = np.abs(dev.astype(np.float64) - ref)
            ok = (err <= bound) | (dev == ref) | (np.isnan(ref) & np.isnan(dev))
            ratio = np.where(bound > 0, err / np.where(bound > 0, bound, 1), np.where(err > 0, np.inf, 0))
        finite = err[np.isfinite(err)]
        out.update(
            compared=True,
            max_abs_error=float(finite.max()) if finite.size else 0.0,
            max_bound=float(bound[np.isfinite(bound)].max()) if np.isfinite(bound).any() else 0.0,
            worst_ratio=_finite(float(np.nanmax(ratio))) if ratio.size else 0.0,
            within=bool(ok.all()),
        )
        break
    return out


def _place(ops: list[dict[str, Any]], kernels: list[dict[str, Any]]) -> None:
    """Each torch op's kernels, its home (the last kernel holding its value, a relayout only when
    no other does) and, from there, its error."""
    by_id = {o["id"]: o for o in ops}
    for k in kernels:
        for i in k["ops"]:
            if i in by_id:
                by_id[i]["kernels"].append(k["name"])
                if by_id[i]["placement"] in ("folded", "view"):  # (a view of its result may remain outside)
                    by_id[i]["placement"] = "device"
                    by_id[i]["reason"] = ""
    for prefer_relayout in (True, False):  # a computing kernel's claim wins over a relayout's
        for k in kernels:
            if k["relayout"] != prefer_relayout:
                continue
            for e in k["errors"]:
                o = by_id.get(e["value"])
                if o is not None:
                    o["home"] = k["name"]
                    if e["compared"]:
                        o["error"] = {key: e[key] for key in ("max_abs_error", "max_bound", "worst_ratio", "within")}
    for k in kernels:  # a kernel that holds no op's value: its ops live there
        for i in k["ops"]:
            o = by_id.get(i)
            if o is not None and o["home"] is None and not k["relayout"]:
                o["home"] = k["name"]
    for o in ops:
        if o["placement"] == "folded":
            o["reason"] = "no device op or host op computes it: folded into a transfer or a constant, merged or dead"


def _host_sequence(compiled: ModuleOp, entry: str) -> list[dict[str, Any]]:
    """The function's steps in order, as the host runs them: launches, host ops (by design or a
    CPU fallback) and the transfers between."""
    steps: list[dict[str, Any]] = []
    for op in entry_function(compiled, entry).body.block.ops:
        if isinstance(op, spyre_isa.LaunchOp):
            steps.append({"kind": "launch", "name": op.kernel_name})
        elif op.name.startswith("torch.") and spyre.origin_of(op) is not None or "spyre.host" in op.attributes:
            by_design, _ = host_by_design(op)
            reason = op.attributes.get("spyre.host")
            steps.append(
                {
                    "kind": "host" if by_design else "cpu",
                    "name": _short(op.name),
                    "reason": reason.data if isinstance(reason, StringAttr) else "",
                }
            )
        elif isinstance(op, spyre.ToDeviceOp | spyre.FromDeviceOp):
            steps.append({"kind": "to_device" if isinstance(op, spyre.ToDeviceOp) else "from_device"})
    return steps
