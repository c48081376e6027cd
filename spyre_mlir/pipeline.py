"""The named pipelines.

    spyre-pipeline = torch-adapt, cse, convert-torch-to-spyre, spyre-fold-infinity-tests,
                     spyre-propagate-layouts, spyre-fuse,
                     spyre-resident-chains, spyre-divide-work, spyre-onchip-relayout,
                     spyre-plan-scratchpad, convert-spyre-to-isa, dce, spyre-mark-gather-tables

Each stage is also a pass of its own (`spyre-opt -p <name>`), with options for ablation.
The device every stage compiles for is the module's `spyre.target` (`#spyre.target<...>`,
built from DeviceConfig: spyre_mlir/dialects/spyre/target.py): run_pipeline attaches the
device it is given, and a module without one gets the default device where the pipeline
starts. No pass takes the device as an option.
`cse` is xDSL's: right after torch-adapt it makes equal pure torch computations (same op,
operands, attributes and result types; the ops with `Pure`, see torch.PURE_OPS) one value
before they become kernels, e.g. the attention mask's where that SDPA's decomposition repeats
in every layer. It has no switch: spyre-propagate-layouts runs the same cse again (for its
restickifies), so turning the early one off would not keep equal computations apart: without
it, MiniLM still gives 91 launches and the same bits. The early one puts the merge where it
belongs, in the torch-level IR (SPYRE_DUMP_IR shows one mask where after it, of six), and hands
convert-torch-to-spyre one op instead of one per layer.
Stages that find their input already lowered do nothing, so the pipeline accepts torch,
spyre or spyre_isa level modules.

Splitting a graph at a refused kernel. A pass after convert-torch-to-spyre may refuse a device
op it has no lowering for (`Unsupported`: a restickify between two layouts no kernel moves
yet). Asked to (`refuse`, a dict the torch.compile backend passes), `run_pipeline` numbers the
torch ops as they come (spyre-track-origins, unless they are numbered already: every op then
carries the `#spyre.origin` of the torch ops it computes), and such a refusal
raises `KernelRefused` naming the torch ops the refused op stands for. The caller compiles the graph
again from its torch form with those ops in `refuse` (number -> reason): each is marked
spyre.REFUSED and stays on the host with that reason, like an op without a lowering, so the
graph splits there into a device island on each side instead of leaving the device whole.
A module numbered only for this loses its origins after the last pass.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.printer import Printer
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

from spyre_mlir.diagnostics import Unsupported, failing_op, in_pass, verify_after_pass
from spyre_mlir.dialects import spyre
from spyre_mlir.gc_pause import gc_paused
from spyre_mlir.lowering.convert_spyre_to_isa import ConvertSpyreToIsaPass
from spyre_mlir.lowering.convert_torch_to_spyre import ConvertTorchToSpyrePass
from spyre_mlir.target.config import DeviceConfig
from spyre_mlir.transforms.spyre_divide_work import SpyreDivideWorkPass
from spyre_mlir.transforms.spyre_fold_infinity_tests import SpyreFoldInfinityTestsPass
from spyre_mlir.transforms.spyre_fuse import SpyreFusePass
from spyre_mlir.transforms.spyre_mark_gather_tables import SpyreMarkGatherTablesPass
from spyre_mlir.transforms.spyre_onchip_relayout import SpyreOnchipRelayoutPass
from spyre_mlir.transforms.spyre_plan_scratchpad import SpyrePlanScratchpadPass
from spyre_mlir.transforms.spyre_propagate_layouts import SpyrePropagateLayoutsPass
from spyre_mlir.transforms.spyre_resident_chains import SpyreResidentChainsPass
from spyre_mlir.transforms.spyre_track_origins import SpyreTrackOriginsPass
from spyre_mlir.transforms.torch_adapt import TorchAdaptPass


@dataclass(frozen=True)
class Optimizations:
    """The optimisation switches, each a pass option (bench/ablation.py turns one off at a time:
    every baseline is this same compiler with one switch off)."""

    pointwise_chains: bool = True
    """spyre-fuse{pointwise_chains}: single-reader pointwise chains in one body."""
    row_groups: bool = True
    """spyre-fuse{row_groups}: reductions and their pointwise neighbours in one kernel, in LX."""
    epilogues: bool = True
    """spyre-fuse{epilogues}: a matmul's pointwise consumer applied to its output tiles in LX."""
    attention: bool = True
    """spyre-fuse{attention} (with row_groups): the scores product, the softmax and the context
    product in one kernel, the scores in LX."""
    gathered_operands: bool = True
    """spyre-fuse{gathered_operands}: a gather's rows read by the matmul or restickify that alone
    reads them, from the table, never stored."""
    cost_split: bool = True
    """spyre-divide-work{strategy=cost}: matmul splits by estimated time (off: even)."""
    multicast: bool = True
    """spyre-divide-work{multicast}: B tiles passed along the ring between the cores sharing them."""
    k_split: bool = True
    """spyre-divide-work{split_k}: a matmul's contraction split over cores, partial sums added over the ring."""
    double_buffer: bool = True
    """spyre-plan-scratchpad{double_buffer}: streamed tiles get two buffers."""
    cost_chunks: bool = True
    """spyre-plan-scratchpad{cost}: matmul chunks by estimated time (off: greedy halving)."""
    stationary_a: bool = True
    """spyre-plan-scratchpad{stationary_a} (with cost_chunks): a matmul's A blocks of at most 8
    rows stay whole in LX, loaded once, instead of a tile per chunk."""
    onchip_relayout: bool = True
    """spyre-onchip-relayout: a transpose between pointwise kernels done in LX and over the ring."""
    resident_chains: bool = True
    """spyre-resident-chains (with cost_split): a matmul's result read only as the next matmul's A
    stays in LX, the two splits chosen together (an MLP's intermediate never goes to DDR)."""

    @staticmethod
    def none() -> Optimizations:
        return Optimizations(**{f.name: False for f in fields(Optimizations)})

    def without(self, *names: str) -> Optimizations:
        unknown = [n for n in names if n not in {f.name for f in fields(Optimizations)}]
        if unknown:
            raise ValueError(
                f"unknown optimisation(s) {unknown}; known: {', '.join(f.name for f in fields(Optimizations))}"
            )
        return replace(self, **{n: False for n in names})


def pipeline_passes(
    kernel_prefix: str = "k",
    strict: bool = False,
    opts: Optimizations = Optimizations(),
) -> list[ModulePass]:
    """The passes of spyre-pipeline, with `opts`' switches. They read the device they compile
    for from the module's `spyre.target` (run_pipeline attaches it)."""
    return [
        TorchAdaptPass(),
        CommonSubexpressionElimination(),  # equal pure torch computations: one value (torch.PURE_OPS)
        ConvertTorchToSpyrePass(strict=strict),
        SpyreFoldInfinityTestsPass(),
        SpyrePropagateLayoutsPass(),
        SpyreFusePass(
            prefix=kernel_prefix,
            pointwise_chains=opts.pointwise_chains,
            row_groups=opts.row_groups,
            epilogues=opts.epilogues,
            attention=opts.attention,
            gathered_operands=opts.gathered_operands,
        ),
        *(
            [
                SpyreResidentChainsPass(
                    double_buffer=opts.double_buffer,
                    multicast=opts.multicast,
                    split_k=opts.k_split,
                    stationary_a=opts.stationary_a and opts.cost_chunks,
                )
            ]
            if opts.resident_chains and opts.cost_split
            else []
        ),
        SpyreDivideWorkPass(
            strategy="cost" if opts.cost_split else "even",
            double_buffer=opts.double_buffer,
            multicast=opts.multicast,
            split_k=opts.k_split and opts.cost_split,
            stationary_a=opts.stationary_a and opts.cost_chunks,
        ),
        *([SpyreOnchipRelayoutPass()] if opts.onchip_relayout else []),
        SpyrePlanScratchpadPass(
            double_buffer=opts.double_buffer,
            cost=opts.cost_chunks,
            stationary_a=opts.stationary_a,
        ),
        ConvertSpyreToIsaPass(),
        DeadCodeElimination(),
        SpyreMarkGatherTablesPass(),
    ]


def run_pipeline(
    ctx: Context,
    module: ModuleOp,
    config: DeviceConfig | None = None,
    dump_dir: str | None = None,
    kernel_prefix: str = "k",
    strict: bool = False,
    opts: Optimizations = Optimizations(),
    verify_each: bool | None = None,
    on_stage: Callable[[str, ModuleOp], None] | None = None,
    refuse: Mapping[int, str] | None = None,
) -> None:
    """Run the whole pipeline; with `dump_dir` (or SPYRE_DUMP_IR) write the IR after each stage.
    `on_stage(name, module)`: called with the input ("input") and after each pass (its name).

    `config`: the device to compile for, attached to the module as its `spyre.target` (in
    place of any it states); None: the module's own target, or, for a module without one,
    the default device (`#spyre.target`, attached). Every pass reads the target from the module.

    `refuse`: track origins and split at refused kernels (the module docstring): the torch ops
    numbered here stay on the host with these reasons, and a later refusal raises
    KernelRefused naming the torch ops to add.

    `verify_each`: verify the module after every pass, so that invalid IR names the pass that
    made it (spyre-opt, dumps, SPYRE_VERIFY_EACH=1); otherwise (the default of the
    torch.compile backend) once, after the last pass: a full verification costs about a third
    of a pass over the whole module, eight times over."""
    dump_dir = dump_dir or os.environ.get("SPYRE_DUMP_IR")
    if verify_each is None:
        verify_each = bool(dump_dir) or os.environ.get("SPYRE_VERIFY_EACH", "0") != "0"
    if config is not None:
        spyre.set_module_target(module, config)
    spyre.module_target(module)  # a module without a target: the default one, attached
    passes = pipeline_passes(kernel_prefix, strict, opts)
    numbered_here = refuse is not None and spyre.numbered(module) is None
    if numbered_here:
        SpyreTrackOriginsPass().apply(ctx, module)
    if dump_dir:
        Path(dump_dir).mkdir(parents=True, exist_ok=True)
        _dump(ctx, module, Path(dump_dir) / "00-input.mlir")
    if on_stage is not None:
        on_stage("input", module)
    with gc_paused():  # the passes build IR by the hundred thousand ops (spyre_mlir/gc_pause.py)
        converted = False
        for i, p in enumerate(passes, start=1):
            if p.name == ConvertTorchToSpyrePass.name and refuse is not None:
                mark_refused(module, refuse)
            try:
                with in_pass(p.name):  # a failure other than a diagnostic is an internal error naming the pass
                    p.apply(ctx, module)
            except Unsupported as e:
                origins = refused_origins(e) if converted and refuse is not None else set()
                if origins - set(refuse or ()):
                    raise KernelRefused(str(e), frozenset(origins)) from e
                raise
            converted = converted or p.name == ConvertTorchToSpyrePass.name
            if dump_dir:
                _dump(ctx, module, Path(dump_dir) / f"{i:02d}-{p.name}.mlir")
            if on_stage is not None:
                on_stage(p.name, module)
            if verify_each or i == len(passes):
                verify_after_pass(
                    module, p.name if verify_each else "spyre-pipeline (SPYRE_VERIFY_EACH=1 names the pass)"
                )
            if p.name in ("convert-torch-to-spyre", "spyre-propagate-layouts"):  # where device tensors appear
                try:
                    check_ddr_sizes(module)  # one the device's DDR cannot hold: refused before it is planned
                except Unsupported as e:
                    origins = refused_origins(e) if refuse is not None else set()
                    if origins - set(refuse or ()):
                        raise KernelRefused(str(e), frozenset(origins)) from e
                    raise
    if numbered_here:
        forget_origins(module)


class KernelRefused(Unsupported):
    """A pass after convert-torch-to-spyre refused a device op; `origins` are the numbers of
    the torch ops it stands for (their #spyre.origin): compiled again with them in `refuse`, the
    graph splits at them (the module docstring)."""

    def __init__(self, message: str, origins: frozenset[int]):
        super().__init__(message)
        self.origins = origins


def mark_refused(module: ModuleOp, refuse: Mapping[int, str]) -> None:
    """Mark the torch ops of a numbered module computing any that `refuse` names to stay on
    the host with the reason (spyre.REFUSED)."""
    for op in module.walk():
        origin = spyre.origin_of(op) if spyre.is_torch_compute(op) else None
        named = [refuse[n] for n in origin.op_ids if n in refuse] if origin is not None else []
        if named:
            op.attributes[spyre.REFUSED] = StringAttr(named[0])


def refused_origins(e: Unsupported) -> set[int]:
    """The torch ops (their #spyre.origin) the op a refusal names stands for: the op's own, or
    those of the ops inside it (a kernel), or those of its readers."""
    op = failing_op(e)
    if op is None:
        return set()

    def of(ops: list[Operation]) -> set[int]:
        return {i for o in ops if (origin := spyre.origin_of(o)) is not None for i in origin.op_ids}

    found = of([op, *op.walk()])
    if not found:
        found = of([u.operation for r in op.results for u in r.uses])
    return found


def forget_origins(module: ModuleOp) -> None:
    """Drop the numbering and every op's origin (a module numbered only to split it)."""
    module.attributes.pop(spyre.ORIGINS_ATTR, None)
    for op in module.walk():
        if op.name == "spyre.kernel":
            op.properties.pop("origin", None)
        op.attributes.pop(spyre.ORIGIN_ATTR, None)


def check_ddr_sizes(module: ModuleOp) -> None:
    """Every device tensor of the module must fit its target's usable DDR on its own (shapes
    are static), or no launch could ever run: refused with a diagnostic naming the op, the
    value's type and the bytes, before any planning or host allocation."""
    config = spyre.module_target(module)
    for op in module.walk():
        for v in op.results:
            if spyre.is_device_tensor(v.type):
                nbytes = spyre.device_layout(v.type).nbytes
                if nbytes > config.ddr_usable_bytes:
                    raise Unsupported(
                        f"'{op.name}': its result {v.type} needs {nbytes} bytes of DDR, more than the "
                        f"{config.ddr_usable_bytes} bytes the device may allocate (ddr_usable_bytes)"
                    )


def _dump(ctx: Context, module: ModuleOp, path: Path) -> None:
    with open(path, "w") as f:
        printer = Printer(stream=f)
        printer.print_op(module)
        f.write("\n")
        printer.print_metadata(ctx.loaded_dialects)  # dense_resource blobs, so the dump re-parses


@dataclass(frozen=True)
class SpyrePipelinePass(ModulePass):
    """The whole compiler: torch (or spyre) in, spyre_isa programs and launches out, for the
    device the module's `spyre.target` names (the default device where it names none)."""

    name = "spyre-pipeline"

    strict: bool = False
    """Refuse float ops without a device lowering instead of leaving them on the host."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        run_pipeline(ctx, op, strict=self.strict, verify_each=True)
