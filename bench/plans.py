"""The matmul cost model beside the simulation, plan by plan (docs/performance.md, "The cost
model's contention term").

    python bench/plans.py              # the table (about 8 minutes)
    python bench/plans.py --json       # {"cases": [...]}, one object per case
    python bench/plans.py --quick      # one small case (the smoke test pytest runs)

For each case (a product's shape, the corelets each core drives) every split and multicast
chain the plan search considers (analysis/cost.py: candidate_splits, multicast_chains, each
with its best chunking) is ranked by its estimate; the `--top` best are compiled with that plan
forced (`split` and `multicast` written on the kernel before spyre-divide-work, which leaves a
kernel with a split alone; spyre-plan-scratchpad then chunks it as the search did), run on the
device model, and their simulated times printed beside the estimates. `max` is the same plan's
estimate with the resources' demands combined by their maximum, as if PT, DDR and the LX port
overlapped perfectly (`cost.contended` with an infinite p); the estimate the planner uses is
their p-norm. A case passes when the plan the search chooses is the fastest simulated of the
ones run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from contextlib import contextmanager

import numpy as np
from xdsl.parser import Parser

from spyre_mlir.analysis import cost
from spyre_mlir.dialects import spyre
from spyre_mlir.dialects.torch import make_context
from spyre_mlir.pipeline import pipeline_passes
from spyre_mlir.runtime.host import Executable
from spyre_mlir.sim.interpreter import DeviceModel
from spyre_mlir.target.config import DeviceConfig
from spyre_mlir.transforms.spyre_divide_work import SpyreDivideWorkPass
from spyre_mlir.transforms.spyre_plan_scratchpad import SpyrePlanScratchpadPass

os.environ.setdefault("SPYRE_CACHE", "0")

CASES = [  # (m, k, n, corelets)
    (1024, 4096, 12800, 2),  # a Granite-8B-shaped layer's up_proj at a 1024-token prefill, both corelets
    (1024, 4096, 4096, 2),  # its q_proj
    (512, 4096, 4096, 1),
    (128, 768, 3072, 1),  # a BERT-base MLP's first product
]
QUICK = [(128, 384, 1536, 1)]


@contextmanager
def contention_norm(p: float):
    """cost.CONTENTION_NORM set to `p` (a huge p: the plain maximum) for direct calls of
    cost.matmul_estimate (the search's memoised chunkings are not asked inside it)."""
    old = cost.CONTENTION_NORM
    cost.CONTENTION_NORM = p
    try:
        yield
    finally:
        cost.CONTENTION_NORM = old


def ranked_plans(shape: cost.MatmulShape, config: DeviceConfig) -> list[tuple[dict, int, dict, float]]:
    """Every (split, chain) of the search (`cost.every_plan`) with its best chunking and
    estimate in seconds, fastest first."""
    plans = cost.every_plan(shape, config, config.planner_lx_bytes // 128, True, True, True)
    return sorted(((split, chain, chunks, est.seconds) for split, chain, chunks, est in plans), key=lambda f: f[3])


def simulate(m: int, k: int, n: int, config: DeviceConfig, split: dict, chain: int) -> tuple[float, dict]:
    """Simulated seconds of `m x k @ k x n` with the plan forced, and the chunks it got."""
    a, b, c = (f"!torch.vtensor<[{x},{y}],f32>" for x, y in ((m, k), (k, n), (m, n)))
    text = f"""func.func @main(%a: {a}, %b: {b}) -> {c} {{
  %0 = torch.aten.mm %a, %b : {a}, {b} -> {c}
  return %0 : {c}
}}"""
    ctx = make_context()
    module = Parser(ctx, text).parse_module()
    spyre.set_module_target(module, config)
    passes = pipeline_passes()
    at = next(i for i, p in enumerate(passes) if isinstance(p, SpyreDivideWorkPass))
    for p in passes[:at]:
        p.apply(ctx, module)
    (kernel,) = [op for op in module.walk() if isinstance(op, spyre.KernelOp)]
    kernel.split = spyre.SplitAttr(split)
    kernel.multicast = spyre.MulticastAttr(chain) if chain > 1 else None
    chunks: dict = {}
    for p in passes[at:]:
        p.apply(ctx, module)
        if isinstance(p, SpyrePlanScratchpadPass):
            (kernel,) = [op for op in module.walk() if isinstance(op, spyre.KernelOp)]
            chunks = kernel.chunks.as_dict()
    model = DeviceModel(config)
    rng = np.random.default_rng(0)
    Executable(module, ctx, model)(
        rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)
    )
    return model.profile.kernels[-1].time_s, chunks


def run_case(m: int, k: int, n: int, corelets: int, top: int) -> dict:
    config = DeviceConfig(corelets_used=corelets)
    shape = cost.MatmulShape(1, m, k, n)
    plans = ranked_plans(shape, config)
    chosen = cost.plan_matmul(shape, config, config.planner_lx_bytes // 128, True, True, None, True)
    rows = []
    for split, chain, chunks, est in plans[:top]:
        with contention_norm(1e9):
            plain = cost.matmul_estimate(shape, split, chunks, config, True, chain).seconds
        sim, got = simulate(m, k, n, config, split, chain)
        rows.append(
            {
                "split": split,
                "chain": chain,
                "chunks": got,
                "estimate_us": est * 1e6,
                "max_estimate_us": plain * 1e6,
                "simulated_us": sim * 1e6,
                "chosen": chosen is not None and split == chosen[0] and chain == chosen[1],
            }
        )
    fastest = min(rows, key=lambda r: r["simulated_us"])
    return {
        "m": m,
        "k": k,
        "n": n,
        "corelets": corelets,
        "plans": rows,
        "chosen_is_fastest": fastest["chosen"],
        "chosen_over_fastest": next((r["simulated_us"] for r in rows if r["chosen"]), float("nan"))
        / fastest["simulated_us"],
    }


def table(cases: list[dict]) -> str:
    out = []
    for c in cases:
        out.append(f"{c['m']} x {c['k']} x {c['n']}, {c['corelets']} corelet(s) per core")
        out.append(f"  {'split':<22}{'chain':>6}{'estimate us':>13}{'max us':>10}{'simulated us':>14}")
        for r in c["plans"]:
            split = ",".join(f"{d}{v}" for d, v in r["split"].items() if v > 1) or "-"
            mark = "  <- chosen" if r["chosen"] else ""
            out.append(
                f"  {split:<22}{r['chain']:>6}{r['estimate_us']:>13.1f}{r['max_estimate_us']:>10.1f}"
                f"{r['simulated_us']:>14.1f}{mark}"
            )
        out.append(
            f"  chosen plan simulated {c['chosen_over_fastest']:.3f}x the fastest run"
            f"{'' if c['chosen_is_fastest'] else ' (not the fastest)'}"
        )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    ap.add_argument("--quick", action="store_true", help="one small case")
    ap.add_argument("--top", type=int, default=5, help="plans run per case, best estimates first")
    args = ap.parse_args(argv)
    cases = [run_case(*c, top=args.top) for c in (QUICK if args.quick else CASES)]
    print(json.dumps({"cases": cases}, indent=1) if args.json else table(cases))
    return 0


if __name__ == "__main__":
    sys.exit(main())
