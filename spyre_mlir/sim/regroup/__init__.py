"""A program's batched steps regrouped by their data flow: what later launches run.

The batched steps (sim/batch.py) merge the instructions that are at the same point of the
cooperative schedule. What stays apart is what one core does tile after tile (a matmul's
column tiles: ten steps each), because the tiles reuse the same LX buffers. Here the steps
are taken as one sequential program over LX rows (a step reads all its rows, then writes
them) and rewritten:

    rename    every write goes to fresh rows (scratch rows past the cores' LX); a read goes
              to the rows holding the value it would read. Only true dependencies remain.
    values    rows known to hold equal bytes share a number: a DMA load takes the number of
              its DDR stick (the value stored there earlier in the launch, if one was, else
              one number per stick), a ring send its source's, any other write a new one.
              A read goes to the first row that held its value, so copies fall dead.
    prune     the rows of a step (one per core) whose writes nothing reads are dropped;
              DDR stores and what the launch leaves in LX (`spyre.resident_out`) count as read.
    regroup   list scheduling: of the steps whose inputs are written, all of the signature
              (`Plan.signature`) that came first in the original order become one step, their
              rows concatenated; then the next.
    kept      a 16-bit store of computed values (an SFP function, a reduction) whose rows some
              step reads only as values (an SFP or reduction source, a product's A) keeps the
              fp32 values it stores in rows of `DeviceMemory.scratch_values`, and those reads
              take them there instead of decoding the bits; the bits are stored only if some
              read takes them (forms.py, `keep_values`). The same values, so the same bits.
    chains    a PT step that accumulates onto the sums of one PT step, sums nothing else
              reads, joins it: the k passes of an output tile become one step whose sums
              between passes never reach LX (forms.py, `fuse_chains`; `ChainStep`).
    copy back what `resident_out` leaves is copied from its fresh rows to its LX rows.
    allocate  fresh rows become scratch rows, a scratch row taken again once its value is dead
              (schedule.py, `allocate`): scratch holds what is live at once, not all a launch writes; kept
              values take rows of their own the same way.

A PT step's rows become matrix products: rows reading the same B rows are one product of
their A stacked on that B, and products whose A stacks are the same rows one product of
that stack on their B side by side ((m * rows, k) @ (k, n * tiles): a matmul's column tiles
are one product). Each of a product's tiles is summed on its own, by plans/pt.py's
`tile_products` as PtPlan sums it, so the way products are grouped does not change a result.
A product's B rows that hold sticks of a DDR argument as loaded (their values' origin,
`rename`) are read from that argument's decoded copy when it is frozen (memory.DdrTensor
.freeze, DeviceMemory.decoded: the same values), as a strided view where the tiles lie on a
grid of it (BView). The copy is made in the arrangement where a B row's sticks are side by
side (memory.DecodedCopy), so that a weight laid out column of sticks by column is read in
place too. A load that nothing but such products reads is skipped then (`FrozenLoad`).

DDR order is kept where it matters (exact sticks): a load or a store after a store of the
same stick, and a store after a load of it, stay after it.

Equal results are checked against the cooperative run, the definition, in
test_host_speed.py (bit for bit); time is untouched (the timing model replays the original
per-core instruction lists).

The phases, each returning new frozen nodes or its own immutable record of them:

    dataflow.py   `Node`; compact, rename (`Renamed`), prune; ddr_order (the DDR order edges)
    forms.py      product_loads (`ProductLoads`), keep_values (`Form`), fuse_chains (`Chain`),
                  the signature of a node
    schedule.py   schedule (the groups), allocate (`Allocation`), place (`Placed`)
    steps.py      the steps a group runs as: `merge`, `GemmStep`, `ChainStep`, `FrozenLoad`
    b_source.py   where a product's B tiles come from (`BSource`, `BView`)
"""

from __future__ import annotations

import numpy as np

from spyre_mlir.sim.plans import Plan, Step
from spyre_mlir.sim.regroup.b_source import BSource, BView, StridedTiles
from spyre_mlir.sim.regroup.dataflow import Node, Unbatchable, compact, ddr_order, prune, rename
from spyre_mlir.sim.regroup.forms import fuse_chains, keep_values, product_loads, signature
from spyre_mlir.sim.regroup.schedule import allocate, place, schedule
from spyre_mlir.sim.regroup.steps import ChainStep, CopyBack, FrozenLoad, GemmStep, arrange_frozen_loads, merge

__all__ = [
    "BSource",
    "BView",
    "ChainStep",
    "CopyBack",
    "FrozenLoad",
    "GemmStep",
    "Node",
    "StridedTiles",
    "Unbatchable",
    "regroup",
]


def regroup(
    steps: list[tuple[Plan, np.ndarray]], cores: int, lx_sticks: int, resident_out: tuple[int, int] | None
) -> tuple[list[tuple[Step, np.ndarray]], int, int]:
    """The steps rewritten (module docstring), how many scratch rows past the cores' LX they
    use, and how many rows of `DeviceMemory.scratch_values`."""
    nodes = [Node.of(ins, c, i) for i, (ins, c) in enumerate(steps)]
    if not nodes:
        return [], 0, 0
    nodes, touched = compact(nodes, cores * lx_sticks)
    nodes, renamed = rename(nodes, touched.size)
    rows = renamed.rows
    # what the launch leaves in LX: the touched rows of resident_out
    out_rows = np.zeros(0, dtype=np.int64)
    if resident_out is not None:
        lo, hi = resident_out
        left = (np.arange(cores)[:, None] * lx_sticks + np.arange(lo, hi)[None]).reshape(-1)
        out_rows = np.flatnonzero(np.isin(touched, left))
    src = renamed.canon[out_rows]
    moved = src != out_rows
    live_out = src[moved]
    nodes = prune(nodes, live_out, rows)
    loads = product_loads(nodes, renamed.origin, live_out, rows)
    forms = keep_values(nodes, renamed.producer, touched.size, live_out, rows)
    nodes, chains = fuse_chains(nodes, renamed.producer, live_out, rows, forms)
    forms.update((node, chain.form) for node, chain in chains.items())
    preds = ddr_order(nodes)
    sigs = [signature(n, forms[n], chains.get(n)) for n in nodes]
    groups = schedule(nodes, renamed.producer, preds, sigs)
    alloc = allocate(groups, touched, rows, live_out, cores * lx_sticks, forms)
    out = [step for g in groups for step in merge(place(g, alloc, forms, chains, loads))]
    arrange_frozen_loads(out)
    if moved.any():
        final = alloc.final
        out.append((CopyBack(final[out_rows[moved]], final[src[moved]]), np.zeros(0, dtype=np.int64)))
    return out, alloc.scratch_rows, alloc.values_rows
