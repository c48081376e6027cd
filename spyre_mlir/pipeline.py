"""The named pipelines.

    spyre-pipeline = torch-adapt, convert-torch-to-spyre, spyre-propagate-layouts, spyre-fuse,
                     spyre-divide-work, spyre-plan-scratchpad, convert-spyre-to-isa, dce

Each stage is also a pass of its own (`spyre-opt -p <name>`), with options for ablation.
Stages that find their input already lowered do nothing, so the pipeline accepts torch,
spyre or spyre_isa level modules.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.printer import Printer
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

from spyre_mlir.diagnostics import in_pass, verify_after_pass
from spyre_mlir.lowering.convert_spyre_to_isa import ConvertSpyreToIsaPass
from spyre_mlir.lowering.convert_torch_to_spyre import ConvertTorchToSpyrePass
from spyre_mlir.runtime.config import DEFAULT_CONFIG, DeviceConfig
from spyre_mlir.transforms.spyre_divide_work import SpyreDivideWorkPass
from spyre_mlir.transforms.spyre_fuse import SpyreFusePass
from spyre_mlir.transforms.spyre_plan_scratchpad import SpyrePlanScratchpadPass
from spyre_mlir.transforms.spyre_propagate_layouts import SpyrePropagateLayoutsPass
from spyre_mlir.transforms.torch_adapt import TorchAdaptPass


def pipeline_passes(config: DeviceConfig = DEFAULT_CONFIG, kernel_prefix: str = "k", strict: bool = False) -> list[ModulePass]:
    return [
        TorchAdaptPass(),
        ConvertTorchToSpyrePass(strict=strict),
        SpyrePropagateLayoutsPass(),
        SpyreFusePass(prefix=kernel_prefix),
        SpyreDivideWorkPass(cores=config.cores),
        SpyrePlanScratchpadPass(budget_bytes=config.planner_lx_bytes, cores=config.cores),
        ConvertSpyreToIsaPass(cores=config.cores),
        DeadCodeElimination(),
    ]


def run_pipeline(
    ctx: Context,
    module: ModuleOp,
    config: DeviceConfig = DEFAULT_CONFIG,
    dump_dir: str | None = None,
    kernel_prefix: str = "k",
    strict: bool = False,
) -> None:
    """Run the whole pipeline; with `dump_dir` (or SPYRE_DUMP_IR) write the IR after each stage."""
    dump_dir = dump_dir or os.environ.get("SPYRE_DUMP_IR")
    if dump_dir:
        Path(dump_dir).mkdir(parents=True, exist_ok=True)
        _dump(ctx, module, Path(dump_dir) / "00-input.mlir")
    for i, p in enumerate(pipeline_passes(config, kernel_prefix, strict), start=1):
        with in_pass(p.name):  # a failure other than a diagnostic is an internal error naming the pass
            p.apply(ctx, module)
        if dump_dir:
            _dump(ctx, module, Path(dump_dir) / f"{i:02d}-{p.name}.mlir")
        verify_after_pass(module, p.name)


def _dump(ctx: Context, module: ModuleOp, path: Path) -> None:
    with open(path, "w") as f:
        printer = Printer(stream=f)
        printer.print_op(module)
        f.write("\n")
        printer.print_metadata(ctx.loaded_dialects)  # dense_resource blobs, so the dump re-parses


@dataclass(frozen=True)
class SpyrePipelinePass(ModulePass):
    """The whole compiler: torch (or spyre) in, spyre_isa programs and launches out."""

    name = "spyre-pipeline"

    cores: int = DEFAULT_CONFIG.cores
    """Cores of the target device."""

    strict: bool = False
    """Refuse float ops without a device lowering instead of leaving them on the host."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        run_pipeline(ctx, op, DEFAULT_CONFIG.replace(cores=self.cores), strict=self.strict)
