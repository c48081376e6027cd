"""`spyre-report`: the explorer report of a compiled model, one HTML file that opens offline.

    spyre-report mlp.mlir -o mlp.html                 # a torch-level module, seeded random inputs
    spyre-report mlp.mlir -o mlp.html --config cores=8 --input x.npy
    spyre-report minilm -o minilm.html                # all-MiniLM-L6-v2 on the demo's sentences
    spyre-report smollm2-decode -o decode.html        # one SmolLM2-135M decode step (static cache)
    spyre-report llama -o llama.html                  # a corpus model (bench/corpus.py of a checkout)

The report runs the compiled module twice on its own device model (a warm call, then the
profiled one) and compares every kernel output holding a torch op's value with the float64
reference (docs/report.md).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.utils.exceptions import DiagnosticException, ParseError

from spyre_mlir.diagnostics import LocatingParser, diagnostic_text, verify_module
from spyre_mlir.pipeline import run_pipeline
from spyre_mlir.reference.evaluate import ReferenceError
from spyre_mlir.report.capture import Capture, entry_function
from spyre_mlir.report.sweep import load_bench
from spyre_mlir.report.write import write_report
from spyre_mlir.sim.memory import DeviceError
from spyre_mlir.target.config import DeviceConfig
from spyre_mlir.tools.spyre_opt import make_tool_context
from spyre_mlir.tools.spyre_run import input_types, random_input
from spyre_mlir.transforms.spyre_track_origins import SpyreTrackOriginsPass

NAMED = ("minilm", "smollm2-decode")


def report_mlir(
    path: str,
    out: str,
    config: DeviceConfig,
    inputs: Sequence[np.ndarray] | None = None,
    seed: int = 0,
    entry: str = "main",
) -> Path:
    """The report of a torch-level .mlir module (seeded random inputs unless given)."""
    ctx = make_tool_context()
    with open(path) as f:
        module = LocatingParser(ctx, f.read(), name=path).parse_module()
    verify_module(module, ctx)
    fn = entry_function(module, entry)
    if inputs is None:
        rng = np.random.default_rng(seed)
        inputs = [random_input(rng, s, e) for s, e in input_types(fn)]
    SpyreTrackOriginsPass().apply(ctx, module)
    capture = Capture()
    run_pipeline(ctx, module, config, on_stage=capture)
    write_report(module, ctx, capture, inputs, config, out, title=os.path.basename(path), entry=entry)
    return Path(out)


def _options(config: DeviceConfig) -> dict[str, Any]:
    default = DeviceConfig()
    return {k: v for k, v in vars(config).items() if getattr(default, k) != v}


def report_model(name: str, out: str, config: DeviceConfig) -> list[Path]:
    """The reports of a named model: minilm, smollm2-decode or a corpus entry."""
    import torch

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import spyre_mlir.report as report_pkg
    from spyre_mlir.frontend.backend import STATS

    options = _options(config)
    torch._dynamo.reset()
    if name == "minilm":
        from spyre_mlir.demo import SENTENCES, load_minilm

        tokenizer, model = load_minilm()
        batch = tokenizer(SENTENCES, padding=True, return_tensors="pt")
        return report_pkg.report(model, batch["input_ids"], batch["attention_mask"], path=out, **options)
    if name == "smollm2-decode":
        from spyre_mlir.demo import PROMPT, load_smollm2

        tokenizer, model = load_smollm2()
        ids = tokenizer(PROMPT, return_tensors="pt").input_ids
        before = len(STATS.graphs)
        with tempfile.TemporaryDirectory() as tmp:
            first = os.path.join(tmp, "prefill.html")
            model.forward = torch.compile(model.forward, backend="spyre", options={**options, "report": first})
            with torch.no_grad():
                model.generate(ids, max_new_tokens=2, do_sample=False, cache_implementation="static")
            written = [g.report for g in STATS.graphs[before:] if g.report]
            if len(written) < 2:
                raise SystemExit(f"spyre-report: expected a prefill and a decode graph, got {len(written)} report(s)")
            target = Path(out)
            prefill = target.with_name(f"{target.stem}-prefill{target.suffix}")
            shutil.move(written[-1], target)
            shutil.move(written[0], prefill)
        return [target, prefill]
    corpus = load_bench("corpus")
    if name not in corpus.CORPUS:
        raise SystemExit(
            f"spyre-report: {name!r} is no .mlir file, named model ({', '.join(NAMED)}) or corpus model "
            f"({', '.join(sorted(corpus.CORPUS))})"
        )
    model, inputs = corpus.build(name)
    return report_pkg.report(model, *inputs, path=out, **options)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="spyre-report", description=__doc__.splitlines()[0])
    ap.add_argument("what", help=f"a torch-level .mlir file, {' or '.join(NAMED)}, or a corpus model name")
    ap.add_argument("-o", "--output", default="spyre_report.html", help="the HTML file (default spyre_report.html)")
    ap.add_argument("--config", action="append", default=[], metavar="KEY=VALUE", help="device parameter override")
    ap.add_argument("--input", action="append", default=[], help=".npy input, once per function argument (.mlir)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the random inputs (.mlir; default 0)")
    ap.add_argument("--entry", default="main", help="function to report (.mlir; default main)")
    args = ap.parse_args(argv)
    try:
        config = DeviceConfig.from_overrides(args.config)
        if args.what.endswith(".mlir") or os.path.exists(args.what):
            inputs = [np.load(p) for p in args.input] or None
            paths = [report_mlir(args.what, args.output, config, inputs, args.seed, args.entry)]
        else:
            paths = report_model(args.what, args.output, config)
    except (DiagnosticException, ParseError, DeviceError, ReferenceError, OSError, ValueError) as e:
        print(f"spyre-report: error: {diagnostic_text(e)}", file=sys.stderr)
        return 1
    for p in paths:
        print(f"report: {p} ({p.stat().st_size / 2**20:.1f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
