"""Instruction plans: what a `spyre_isa` instruction compiles to before the device model runs it.

A plan is one instruction prepared for the cores of one stream: its positions in LX and DDR as
index arrays (a row per core), its `run` (the semantics for all those cores as one numpy
operation), its `checks` (LX bounds and the sanitizer, without moving data) and its `works`
(per-core costs for the timing model). One plan class serves each instruction family and is
found through a registry keyed by op class, as xDSL's interpreter finds an `@impl`:

    @executes(spyre_isa.SfpReduceOp)          # the op class, or a base class of a family
    class ReducePlan(Plan): ...

    plan_instruction(op, ...)                  # the plans of `op` (a ring send: one per piece)

Beside the semantics, a plan describes its accesses for the batched execution (sim/batch.py)
and the regrouping (sim/regroup/), which are written against this interface and not
against the families:

    accesses()     the LX rows it reads and the rows it writes (None: no batched form)
    ddr_access()   a DMA's DDR argument and sticks
    with_rows()    the same instruction over other LX rows (merged or renamed steps)
    signature()    instructions with equal signatures can run as one step
    label()        what its writes do to the LX labels (`Labels`, `mark_shared_operands`)

`StreamPlan` holds the plans of one `spyre_isa.stream`.

    base.py       the interface (`Plan`), the registry (`executes`, `plan_instruction`), `Labels`
    positions.py  where accesses lie: stick positions and LX rows, a row per core
    dma.py        dma_load, dma_store, dma_gather, dma_scatter
    pt.py         pt_matmul, and the products of tiles (`tile_products`) the regrouping shares
    sfp.py        element-wise functions, reductions, transposes
    ring.py       ring sends, in pieces
    sync.py       signal, wait, barrier
    stream.py     `StreamPlan`, `mark_shared_operands`
"""

from spyre_mlir.sim.plans.base import (
    DdrAccess,
    Labels,
    Plan,
    SrcDstPlan,
    Step,
    Sync,
    Unlabelled,
    executes,
    plan_class,
    plan_instruction,
)
from spyre_mlir.sim.plans.dma import DmaPlan, GatherPlan, ScatterPlan
from spyre_mlir.sim.plans.positions import F32_STICKS, loop_offsets
from spyre_mlir.sim.plans.pt import PtPlan, operand_matrix, tile_products
from spyre_mlir.sim.plans.ring import RingPlan, RingSend
from spyre_mlir.sim.plans.sfp import REDUCTIONS, SFP_FUNCTIONS, ReducePlan, SfpPlan, TransposePlan
from spyre_mlir.sim.plans.stream import StreamPlan, mark_shared_operands
from spyre_mlir.sim.plans.sync import SyncPlan

__all__ = [
    "F32_STICKS",
    "REDUCTIONS",
    "SFP_FUNCTIONS",
    "DdrAccess",
    "DmaPlan",
    "GatherPlan",
    "Labels",
    "Plan",
    "PtPlan",
    "ReducePlan",
    "RingPlan",
    "RingSend",
    "ScatterPlan",
    "SfpPlan",
    "SrcDstPlan",
    "Step",
    "StreamPlan",
    "Sync",
    "SyncPlan",
    "TransposePlan",
    "Unlabelled",
    "executes",
    "loop_offsets",
    "mark_shared_operands",
    "operand_matrix",
    "plan_class",
    "plan_instruction",
    "tile_products",
]
