"""`spyre-divide-work`: split each kernel's iteration space over the cores.

    strategy=even:  repeatedly halve the parallel dim with the most units per core while the
                    number of parts fits the cores (matmul: n in sticks and m in rows, never
                    k; pointwise/restickify: the output's device dims, whole sticks)

    %r = spyre.kernel "k0" (...)   ->   %r = spyre.kernel "k0" (...) split <n = 8, m = 4>

The split's meaning (which core gets which part) is `spyre_mlir.analysis.work.core_boxes`.
A kernel that already carries a split keeps it (a hand-written experiment).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from spyre_mlir.analysis.work import even_split, iteration_dims
from spyre_mlir.dialects import spyre
from spyre_mlir.runtime.config import DEFAULT_CONFIG


@dataclass(frozen=True)
class SpyreDivideWorkPass(ModulePass):
    """Choose each kernel's split of work over the cores."""

    name = "spyre-divide-work"

    cores: int = DEFAULT_CONFIG.cores
    """Cores to divide the work over."""

    strategy: str = "even"
    """How to choose splits: "even" (stick-aligned halving)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.strategy != "even":
            raise PassFailedException(f"spyre-divide-work: unknown strategy {self.strategy!r} (supported: even)")
        if self.cores < 1:
            raise PassFailedException(f"spyre-divide-work: cores must be >= 1, got {self.cores}")
        for kernel in op.walk():
            if not isinstance(kernel, spyre.KernelOp) or kernel.split is not None:
                continue
            dims = iteration_dims(kernel.compute_op)
            kernel.split = spyre.SplitAttr(even_split(dims, self.cores))
