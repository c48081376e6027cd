"""`spyre-mark-gather-tables`: the uploads that only gathers read, marked.

A `spyre.to_device` whose result every reader reads only as the table of `spyre_isa.dma_gather`s
(each a launch whose program reads that input only so: `spyre.GatherTableReader`) is marked
`gather_table`. Which rows a gather reads is known only at run time, from its indices, so the
host may upload such a table row by row as the gathers first read its rows
(memory.LazyRowsTensor): an embedding of 30522 rows read for a 128-token forward sends 128 rows.
The bits the gathers read are the same either way.

    %t = spyre.to_device %w gather_table : tensor<30522x384xf32> -> tensor<30522x384xf16, #layout>

It is a fact of the program, not of the executor: the verifier of `spyre.to_device` checks it
(`spyre.only_gathered`), and the host executor reads it (runtime/host_program.py). A transfer
with a permutation is not marked (the upload rearranges the whole tensor).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, UnitAttr
from xdsl.passes import ModulePass

from spyre_mlir.dialects import spyre


@dataclass(frozen=True)
class SpyreMarkGatherTablesPass(ModulePass):
    """Mark the uploads only gathers read (module docstring)."""

    name = "spyre-mark-gather-tables"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for to_dev in op.walk():
            if not isinstance(to_dev, spyre.ToDeviceOp) or to_dev.permutation is not None:
                continue
            if spyre.only_gathered(to_dev):
                to_dev.gather_table = UnitAttr()
