"""`spyre-divide-work`: split each kernel's iteration space over the cores.

    strategy=even:  repeatedly halve the parallel dim with the most units per core while the
                    number of parts fits the cores (matmul: n in sticks and m in rows, never
                    k; pointwise/restickify: the output's device dims, whole sticks)
    strategy=cost:  matmul: every split of b, n and m (powers of two, product <= cores) and,
                    with split_k, of k (up to 4 parts whose partial sums are added over the
                    ring), with and without passing B tiles along chains of the cores that
                    share them over the ring (multicast, chain lengths dividing the m split),
                    each with
                    the best chunking that fits LX, ranked by
                    analysis/cost.py's estimate (PT passes, DDR traffic with re-reads at the
                    shared bandwidth, ring transfers, LX port);
                    attention (spyre.Attention): `attention_split` (estimated time);
                    other kernels: as even (their output dims split first, never a reduction)

    %r = spyre.kernel "k0" (...)   ->   %r = spyre.kernel "k0" (...) split <n = 8, m = 4>

The split's meaning (which core gets which part) is `spyre_mlir.dialects.spyre.iteration.core_boxes`.
A kernel that already carries a split keeps it: write `split <...>` on a kernel to try a
division by hand (per-kernel override). The cores, the LX budget (`planner_lx_bytes`) and the
rates the estimates use are the module's `spyre.target`'s.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from spyre_mlir.analysis.buffers import epilogue_sticks
from spyre_mlir.analysis.cost import attention_chain, attention_seconds, matmul_shape, plan_matmul
from spyre_mlir.dialects import spyre
from spyre_mlir.dialects.spyre import iteration_dims, kernel_form, kernel_iteration_dims, kernel_ops
from spyre_mlir.dialects.spyre.iteration import box_count, core_boxes, even_split
from spyre_mlir.target.config import DeviceConfig
from spyre_mlir.target.constants import STICK_BYTES


@dataclass(frozen=True)
class SpyreDivideWorkPass(ModulePass):
    """Choose each kernel's split of work over the cores."""

    name = "spyre-divide-work"

    strategy: str = "cost"
    """How to choose splits: "cost" (estimated time) or "even" (stick-aligned halving)."""

    double_buffer: bool = True
    """Whether spyre-plan-scratchpad double-buffers (changes the estimates)."""

    multicast: bool = True
    """strategy=cost may have cores that share B tiles pass them along the ring (the first
    loads each tile from DDR) instead of each loading them: `multicast <chain = g>` (chains of
    g consecutive cores)."""

    split_k: bool = True
    """strategy=cost may split a matmul's contraction dim k too (up to 4 parts, adjacent cores):
    each part sums its k range, the partial sums go over the ring to the previous part, which
    adds them (fp32, so the result is rounded differently from one core's sum), and the first
    rounds and stores. Fewer cores per B tile, so more rows each: less LX port and DDR per PT
    pass for a multicast chain's head."""

    stationary_a: bool = True
    """The estimates may keep a matmul's small A blocks whole in LX (spyre-plan-scratchpad's
    `stationary_a`)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.strategy not in ("even", "cost"):
            raise PassFailedException(f"spyre-divide-work: unknown strategy {self.strategy!r} (supported: cost, even)")
        config = spyre.module_target(op)
        for kernel in op.walk():
            if not isinstance(kernel, spyre.KernelOp) or kernel.split is not None:
                continue
            dims = kernel_iteration_dims(kernel)
            split = None
            form = kernel_form(kernel_ops(kernel))
            if (att := form.attention) is not None:
                split = attention_split(att, config, self.multicast)
                chain = attention_chain(core_boxes(dims, split, config.cores)) if self.multicast else 1
                if chain > 1:
                    kernel.multicast = spyre.MulticastAttr(chain)
            elif self.strategy == "cost" and isinstance(form.compute, spyre.MatmulOp):
                split, multicast = self.cheapest_matmul_split(
                    form.compute, epilogue_sticks(form.epilogue) if form.epilogue is not None else None, config
                )
                if multicast > 1:
                    kernel.multicast = spyre.MulticastAttr(multicast)
            kernel.split = spyre.SplitAttr(split or even_split(dims, config.cores))

    def cheapest_matmul_split(
        self, mm: spyre.MatmulOp, epilogue: tuple[int, int, int, int] | None, config: DeviceConfig
    ) -> tuple[dict[str, int] | None, int]:
        """The split and B-multicast chain length (1: none) with the least estimated time on
        the device `config`."""
        best = plan_matmul(
            matmul_shape(mm),
            config,
            config.planner_lx_bytes // STICK_BYTES,
            self.double_buffer,
            self.multicast,
            epilogue,
            self.split_k,
            self.stationary_a,
        )
        if best is None:
            return None, 1
        return {d.name: best[0][d.name] for d in iteration_dims(mm)}, best[1]


def attention_split(att: spyre.Attention, config: DeviceConfig, multicast: bool = True) -> dict[str, int]:
    """An attention kernel's split (either strategy; spyre.Attention's dims b, p, h): its
    matrices over as many cores as there are, then of the splits of each matrix's positions,
    and of its heads beyond them, over the cores left, the one with the least estimated time
    (cost.attention_seconds; the fewest cores among equals). A core loads the whole K^T and V
    of each matrix it takes, so that more cores per matrix cost DDR traffic: Granite's 8
    matrices of 4 heads x 1024 positions on 32 cores take 4 parts of the positions each (each
    K and V read 4 times); a small attention keeps cores idle rather than read K and V on
    every one. Positions are split before heads, so that a mask's rows are read by one core
    for all heads. With `multicast`, the cores of a matrix pass its K^T and V down a chain
    (`multicast <chain = g>` on the kernel, cost.attention_chain)."""
    b, p, h = att.dims()
    parts_b = min(b.size, config.cores)
    best: tuple[float, int, dict[str, int]] | None = None
    for per_matrix in (1 << i for i in range((config.cores // parts_b).bit_length())):
        parts_p = min(p.size, per_matrix)
        split = {b.name: parts_b, p.name: parts_p, h.name: min(h.size, per_matrix // parts_p)}
        cores = box_count([b, p, h], split)
        key = (attention_seconds(att, split, config, multicast), cores, split)
        if best is None or key[:2] < best[:2]:
            best = key
    assert best is not None
    return best[2]
