"""`spyre-sweep`: compile and simulate a model at every point of a grid of device parameters.

    spyre-sweep mlp.mlir --set cores=8,16,32 --set lx_bytes=1M,2M,4M
    spyre-sweep llama --set cores=16,32 --json              # a corpus model (bench/corpus.py)
    spyre-sweep granite-decode --set cores=8,16,32 --set lx_bytes=1M,2M,4M --plot sweep.html
    spyre-sweep granite-decode --prompt 128 --set cores=8,32      # the prefill (TTFT) of 128 tokens too

Any DeviceConfig field may be set (docs/hardware.md); byte counts take K, M, G (binary). Each
point runs in a worker process with the compile cache on. Prints a table (the simulated time,
tokens/s for a decode step, the plan digest: equal digests are the same program, and the top
kernels' cores/streams/instructions) and writes a plot (latency or tokens/s against each axis;
for two axes, the Pareto front); --json prints {"points": [{"config", "simulated_s", "plan",
...}, ...]} instead of the table.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import Any

from spyre_mlir.report.sweep import as_json, figure, grid, parse_value, sweep, table, write_plot


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="spyre-sweep", description=__doc__.splitlines()[0])
    ap.add_argument("what", help="a torch-level .mlir file, a corpus model name, granite-decode or smollm2-decode")
    ap.add_argument(
        "--set", action="append", default=[], metavar="FIELD=V1,V2", help="an axis: a DeviceConfig field's values"
    )
    ap.add_argument("--json", action="store_true", help="print the points as JSON instead of a table")
    ap.add_argument(
        "--plot", default="spyre_sweep.html", help="the plot's HTML file (default spyre_sweep.html; '' for none)"
    )
    ap.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    ap.add_argument("--prompt", type=int, help="a decode step's prompt tokens (default: 8 for granite-decode)")
    args = ap.parse_args(argv)
    axes: dict[str, list] = {}
    try:
        if not args.set:
            raise ValueError("give at least one --set FIELD=V1,V2")
        for item in args.set:
            field, _, values = item.partition("=")
            field = field.strip()
            if not values:
                raise ValueError(f"--set {item}: FIELD=V1,V2,...")
            if field in axes:
                raise ValueError(f"--set {field} given twice")
            axes[field] = [parse_value(field, v) for v in values.split(",")]
        points = grid(axes)
        start = time.perf_counter()

        def said(i: int, result: dict[str, Any]) -> None:
            outcome = (
                result.get("error")
                or f"{result['simulated_s'] * 1e6:.2f} us, plan {result['plan']}, {result['compile']}"
            )
            setting = " ".join(f"{k}={v}" for k, v in result["config"].items())
            elapsed = time.perf_counter() - start
            print(f"[{i + 1}/{len(points)}] {setting}: {outcome} ({elapsed:.0f} s)", file=sys.stderr)

        results = sweep(args.what, points, args.workers, on_point=said, prompt=args.prompt)
        wall = time.perf_counter() - start
    except ValueError as e:
        print(f"spyre-sweep: error: {e}", file=sys.stderr)
        return 1
    if args.json:
        print(as_json(args.what, axes, results, wall))
    else:
        print(table(args.what, list(axes), results))
        print(f"{len(results)} points in {wall:.1f} s")
    if args.plot:
        path = write_plot(figure(args.what, list(axes), results), args.plot)
        print(f"plot: {path}", file=sys.stderr if args.json else sys.stdout)
    return 1 if any("error" in r for r in results) and all("error" in r for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
