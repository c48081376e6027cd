"""Fuzz spyre-opt and spyre-run with mutants of the test suite's modules (docs/fuzzing.md).

    python bench/fuzz.py --cases 1000              # a summary table, then every finding
    python bench/fuzz.py --cases 1000 --json       # the same figures as one JSON object
    python bench/fuzz.py --cases 200 --seed 7 --jobs 2 --timeout 30
    python bench/fuzz.py --replay '{"seed": "test/filecheck/inputs/kernels.mlir", "muts": [["layout", 5, 9]], "cores": null}'
    python bench/fuzz.py --cases 1000 --show 417   # print case 417's mutant text (and its recipe)

Hypothesis draws the mutations from `--seed`, so a run is reproducible: the same seed, case
count and corpus give the same cases. Exit status 1 when any case is a traceback, a crash, a
hang, a mismatch or an unlocated diagnostic.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from spyre_mlir.testing.fuzz.mutations import apply_recipe, draw_recipes
from spyre_mlir.testing.fuzz.runner import DEFAULT_TIMEOUT, FAILURES, Result, run_cases, summarize


def table(summary: dict) -> str:
    rows = [
        ("cases", summary["cases"]),
        ("ok (every stage exit 0)", summary["ok"]),
        ("diagnostics (exit 1, located)", summary["diagnostics"]),
        ("tracebacks", summary["tracebacks"]),
        ("crashes", summary["crashes"]),
        ("hangs", summary["hangs"]),
        ("mismatches", summary["mismatches"]),
        ("unlocated diagnostics", summary["unlocated"]),
        ("ran the device model", summary["ran_device_model"]),
        ("compared with the reference", summary["compared_with_reference"]),
        ("wall time (s)", summary["wall_s"]),
        ("slowest case (s)", summary["case_s_max"]),
    ]
    w = max(len(k) for k, _ in rows)
    lines = [f"{k:<{w}}  {v}" for k, v in rows]
    lines.append("")
    lines.append("outcome@last stage:")
    lines += [f"  {k:<28} {v}" for k, v in summary["by_stage"].items()]
    for sig, f in summary["findings"].items():
        lines += [
            "",
            f"FINDING x{f['count']}: {sig}",
            f"  recipe: {json.dumps(f['recipe'])}",
            "  " + f["message"].strip().replace("\n", "\n  "),
        ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench/fuzz.py", description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0, help="Hypothesis seed of the mutations (default 0)")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    ap.add_argument(
        "--timeout", type=float, default=DEFAULT_TIMEOUT, help=f"seconds per case (default {DEFAULT_TIMEOUT:g})"
    )
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--replay", metavar="RECIPE", help="run one recipe (JSON) and print its result")
    ap.add_argument("--show", type=int, metavar="I", help="print the mutant text of case I (0 with --replay) and exit")
    ap.add_argument("--verbose", action="store_true", help="one line per case on stderr")
    args = ap.parse_args(argv)

    if args.replay:
        recipes = [json.loads(args.replay)]
    else:
        recipes = draw_recipes(args.cases, args.seed)
    if args.show is not None:
        r = recipes[args.show]
        print(f"// recipe: {json.dumps(r)}")
        print(apply_recipe(r)[1])
        return 0

    def progress(res: Result) -> None:
        if args.verbose or res.outcome in FAILURES:
            print(
                f"[{res.index}] {res.outcome:<10} {res.seconds:6.2f}s {' '.join(res.stages)} {res.recipe['seed']}",
                file=sys.stderr,
            )

    start = time.perf_counter()
    results = run_cases(recipes, jobs=args.jobs, timeout=args.timeout, progress=progress)
    summary = summarize(results, time.perf_counter() - start, args.seed)
    if args.replay:
        print(json.dumps(results[0].as_dict(), indent=2))
    elif args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(table(summary))
    bad = sum(summary[k] for k in ("tracebacks", "crashes", "hangs", "mismatches", "unlocated"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
