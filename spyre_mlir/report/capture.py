"""What a report keeps of a compile: the numbered torch module, the IR after every stage, and
each kernel as the last spyre-level stage left it (its op, plan and marks).

    capture = Capture()
    SpyreTrackOriginsPass().apply(ctx, module)          # the torch ops numbered
    run_pipeline(ctx, module, config, on_stage=capture)  # capture(name, module) after each stage
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.printer import Printer

from spyre_mlir.dialects import spyre

MAX_STAGE_CHARS = 64 * 1024 * 1024
"""A stage's text is kept whole up to this size (a larger one is cut, saying so)."""


def op_text(op: Operation) -> str:
    out = io.StringIO()
    Printer(stream=out).print_op(op)
    return out.getvalue()


@dataclass
class KernelInfo:
    """A kernel as the last spyre-level stage left it."""

    name: str
    text: str
    """The spyre.kernel op, printed."""
    plan: dict[str, Any]
    """split, chunks, lx (buffer -> LX byte offset) and the marks, as printed."""
    form: list[str]
    """Its compute ops' names (spyre.matmul, spyre.pointwise, ...)."""
    relayout: bool
    """Its only compute op is a spyre.restickify (a relayout the compiler inserted)."""


@dataclass
class Capture:
    """Called by run_pipeline after each stage (`on_stage`)."""

    torch_module: ModuleOp | None = None
    """The numbered torch-level module, as it entered the pipeline."""
    stages: list[tuple[str, str]] = field(default_factory=list)
    """(stage, the module printed after it), in order (the weights' blobs left out)."""
    kernels: dict[str, KernelInfo] = field(default_factory=dict)

    def __call__(self, name: str, module: ModuleOp) -> None:
        if name == "input":  # a graph compiled again (split at a refused kernel) starts over
            self.torch_module = module.clone()
            self.stages, self.kernels = [], {}
        text = op_text(module)
        if len(text) > MAX_STAGE_CHARS:
            text = text[:MAX_STAGE_CHARS] + f"\n// ... cut: {len(text)} characters in all\n"
        self.stages.append((name, text))
        kernels = [k for k in module.walk() if isinstance(k, spyre.KernelOp)]
        if kernels:
            self.kernels = {k.sym_name.data: kernel_info(k) for k in kernels}


def kernel_info(k: spyre.KernelOp) -> KernelInfo:
    plan: dict[str, Any] = {}
    for key in ("split", "chunks", "lx"):
        attr = getattr(k, key)
        if attr is not None:
            plan[key] = attr.as_dict()
    for key in ("multicast", "core_order", "resident_in", "resident_out", "onchip", "lx_budget"):
        attr = getattr(k, key)
        if attr is not None:
            out = io.StringIO()
            Printer(stream=out).print_attribute(attr)
            plan[key] = out.getvalue()
    ops = spyre.kernel_ops(k)
    return KernelInfo(
        k.sym_name.data,
        op_text(k),
        plan,
        [o.name for o in ops],
        len(ops) == 1 and isinstance(ops[0], spyre.RestickifyOp),
    )


def entry_function(module: ModuleOp, name: str = "main") -> func.FuncOp:
    fn = next((op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == name), None)
    if fn is None:
        raise ValueError(f"the module has no function @{name}")
    return fn
