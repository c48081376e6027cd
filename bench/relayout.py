"""Relayouts in simulated device time: through DDR against on chip, and x @ A.T against x @ A.

    python bench/relayout.py          # the table (about 2 minutes)
    python bench/relayout.py --json   # one JSON object

1. The same relayout — the transpose of a (2048, 1280) f16 tensor (5.24 MB) between two
   pointwise kernels, c = relu(relu(x).t()), whose result also feeds c @ w — compiled three ways:
     ddr        spyre-onchip-relayout off: a restickify kernel loads the tensor from DDR in
                64 x 64 blocks, transposes them on the SFP and stores the result (the round trip)
     on chip    the pass on (default): the producer keeps its bands in LX, the relayout
                transposes them in LX, and the consumer is split so that every block stays on
                its core
     all-to-all the pass on with `align_consumer=false`: the consumer keeps spyre-divide-work's
                split (40 rows per core), so every core sends a part of every block to every
                other core over the ring
   Each figure is the relayout launch's device time (its last core's finish); the host's launch
   overhead (`DeviceConfig.launch_overhead_s`, an assumption: no public figure) is printed
   beside it and left out of the ratio, since it is the same fixed cost for any launch.
2. `x @ A.T` against `x @ A` for x (512, 4096), A (4096, 4096) f16 through torch.compile:
   the simulated time of all launches of each.

Every output is checked against torch (the relayout bit for bit: relu is exact).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch
from xdsl.parser import Parser

from spyre_mlir.dialects import spyre
from spyre_mlir.frontend.backend import get_device_model
from spyre_mlir.lowering.convert_spyre_to_isa import ConvertSpyreToIsaPass
from spyre_mlir.runtime.host import Executable
from spyre_mlir.sim.interpreter import DeviceModel
from spyre_mlir.target.config import DeviceConfig
from spyre_mlir.tools.spyre_opt import make_tool_context
from spyre_mlir.transforms.spyre_onchip_relayout import SpyreOnchipRelayoutPass
from spyre_mlir.transforms.spyre_plan_scratchpad import SpyrePlanScratchpadPass

os.environ.setdefault("SPYRE_CACHE", "0")  # compile times and counts are of compiles, not cache loads

SHAPE = (2048, 1280)


def _relayout_graph(x: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The consumer's result also feeds a matmul, which needs the generic layout: so the
    relayout is needed (a result that only goes to the host would stay transposed, and the host
    would read it through its layout: no relayout at all, spyre-propagate-layouts)."""
    c = torch.relu(torch.relu(x).t())
    return c, c @ w


def _compiled(fn, inputs: tuple, disable: list[str]) -> tuple[list, torch.Tensor]:
    """Compile and run once; the kernel records of that run and the output."""
    torch._dynamo.reset()
    dev = get_device_model(DeviceConfig())
    start = len(dev.profile.kernels)
    with torch.no_grad():
        out = torch.compile(fn, backend="spyre", options={"disable": disable})(*inputs)
    return dev.profile.kernels[start:], out


def _restickify_kernel(kernels: list) -> object:
    """The launch between the two relus (the second of four: relu, relayout, relu, matmul)."""
    if len(kernels) != 4:
        raise RuntimeError(f"expected 4 launches (relu, relayout, relu, matmul), got {[k.name for k in kernels]}")
    return kernels[1]


def _all_to_all(x: torch.Tensor, w: torch.Tensor) -> tuple[list, np.ndarray]:
    """The graph through the pipeline, with spyre-onchip-relayout{align_consumer=false}."""
    with tempfile.TemporaryDirectory() as d:
        import os

        os.environ["SPYRE_DUMP_IR"] = d
        try:
            _compiled(_relayout_graph, (x, w), ["onchip_relayout"])
        finally:
            del os.environ["SPYRE_DUMP_IR"]
        text = next(Path(d).rglob("[0-9][0-9]-spyre-divide-work.mlir")).read_text()
    ctx = make_tool_context()
    module = Parser(ctx, text).parse_module()  # the dump states its target (the pipeline's)
    for p in (SpyreOnchipRelayoutPass(align_consumer=False), SpyrePlanScratchpadPass(), ConvertSpyreToIsaPass()):
        p.apply(ctx, module)
    model = DeviceModel(spyre.module_target(module))
    out, _ = Executable(module, ctx, model, "main")(x.numpy(), w.numpy())
    return model.profile.kernels, np.asarray(out)


def measure() -> dict:
    torch.manual_seed(0)
    x = (torch.randint(-512, 512, SHAPE) / 64).to(
        torch.float16
    )  # at most 9 significant bits: exact in DL16 (9 fraction bits, docs/numerics.md)
    w = torch.randn(SHAPE[0], 64, dtype=torch.float16) / 32
    want = torch.relu(torch.relu(x).t())
    rows = {}
    for name, disable in (("ddr", ["onchip_relayout"]), ("onchip", [])):
        kernels, (out, _) = _compiled(_relayout_graph, (x, w), disable)
        if not torch.equal(out, want):
            raise RuntimeError(
                f"{name}: the relayout is not bit-exact (max |error| {(out.float() - want.float()).abs().max()})"
            )
        rows[name] = kernels
    a2a_kernels, a2a_out = _all_to_all(x, w)
    if not np.array_equal(a2a_out, want.numpy()):
        raise RuntimeError("all-to-all: the relayout is not bit-exact")
    rows["all_to_all"] = a2a_kernels
    cfg = DeviceConfig()
    device_us = {k: _restickify_kernel(v).cycles / cfg.clock_hz * 1e6 for k, v in rows.items()}

    xm = torch.randn(512, 4096, dtype=torch.float16)
    a = torch.randn(4096, 4096, dtype=torch.float16) / 64
    times = {}
    for name, fn in (("xA", lambda x, a: x @ a), ("xAT", lambda x, a: x @ a.T)):
        kernels, out = _compiled(fn, (xm, a), [])
        ref = fn(xm.float(), a.float())
        err = float((out.float() - ref).abs().max())
        times[name] = (sum(k.time_s for k in kernels) * 1e6, [k.name for k in kernels], err)
    return {
        "relayout_shape": list(SHAPE),
        "relayout_bytes": int(np.prod(SHAPE)) * 2,
        "ddr_round_trip_us": round(device_us["ddr"], 3),
        "onchip_us": round(device_us["onchip"], 3),
        "ratio": round(device_us["ddr"] / device_us["onchip"], 1),
        "onchip_all_to_all_us": round(device_us["all_to_all"], 3),
        "ratio_all_to_all": round(device_us["ddr"] / device_us["all_to_all"], 1),
        "ring_bytes_all_to_all": _restickify_kernel(rows["all_to_all"]).ring_bytes,
        "launch_overhead_us": cfg.launch_overhead_s * 1e6,
        "pipeline_us": {k: round(sum(r.time_s for r in v) * 1e6, 2) for k, v in rows.items()},
        "matmul_xA_us": round(times["xA"][0], 2),
        "matmul_xAT_us": round(times["xAT"][0], 2),
        "matmul_ratio": round(times["xAT"][0] / times["xA"][0], 3),
        "matmul_launches": {"xA": times["xA"][1], "xAT": times["xAT"][1]},
        "matmul_max_abs_error": {"xA": times["xA"][2], "xAT": times["xAT"][2]},
    }


def table(r: dict) -> str:
    mb = r["relayout_bytes"] / 1e6
    return "\n".join(
        [
            f"relayout: transpose of a {r['relayout_shape'][0]}x{r['relayout_shape'][1]} f16 tensor ({mb:.2f} MB) between two pointwise kernels",
            f"{'path':<34}{'device us':>10}{'ratio':>8}   (+ {r['launch_overhead_us']:.1f} us launch overhead each)",
            f"{'through DDR (restickify kernel)':<34}{r['ddr_round_trip_us']:>10.2f}{'1.0x':>8}",
            f"{'on chip (consumer aligned)':<34}{r['onchip_us']:>10.2f}{str(r['ratio']) + 'x':>8}",
            f"{'on chip, all-to-all over the ring':<34}{r['onchip_all_to_all_us']:>10.2f}{str(r['ratio_all_to_all']) + 'x':>8}   ({r['ring_bytes_all_to_all']} bytes on the ring)",
            f"whole graph (4 launches, with the matmul): ddr {r['pipeline_us']['ddr']} us, on chip {r['pipeline_us']['onchip']} us, all-to-all {r['pipeline_us']['all_to_all']} us",
            "",
            "matmul (512, 4096) x (4096, 4096) f16, all launches:",
            f"  x @ A    {r['matmul_xA_us']:>9.2f} us   {r['matmul_launches']['xA']}",
            f"  x @ A.T  {r['matmul_xAT_us']:>9.2f} us   {r['matmul_launches']['xAT']}   ratio {r['matmul_ratio']}",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench/relayout.py", description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    r = measure()
    print(json.dumps(r, indent=1) if args.json else table(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
