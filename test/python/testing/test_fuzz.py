"""The CI slice of the fuzz harness (spyre_mlir.testing.fuzz, docs/fuzzing.md): 200 mutants of the test
suite's modules, drawn by Hypothesis from a fixed seed, through spyre-opt and spyre-run.
No traceback, crash, hang, mismatch or unlocated diagnostic is allowed.

    SPYRE_FUZZ_CASES=1000 pytest test/python/testing/test_fuzz.py     # a longer slice
    python bench/fuzz.py --cases 1000                          # the same, as a table
"""

from __future__ import annotations

import json
import os
import sys

import pytest

CASES = int(os.environ.get("SPYRE_FUZZ_CASES", "200"))
SEED = int(os.environ.get("SPYRE_FUZZ_SEED", "0"))


def test_recipes_are_reproducible():
    """Same seed and count: the same recipes and the same mutant texts."""
    from spyre_mlir.testing.fuzz import mutations

    a, b = mutations.draw_recipes(30, SEED), mutations.draw_recipes(30, SEED)
    assert a == b
    assert [mutations.apply_recipe(r)[1] for r in a] == [mutations.apply_recipe(r)[1] for r in b]
    assert mutations.draw_recipes(30, SEED + 1) != a


def test_every_operator_mutates_some_seed():
    from spyre_mlir.testing.fuzz import mutations

    seeds = mutations.load_seeds()
    assert len(seeds) > 50
    for name in mutations.OPERATORS:
        changed = 0
        for s in seeds[::3]:
            r = {"seed": s.name, "muts": [[name, 12345, 678]], "cores": None}
            changed += mutations.apply_recipe(r)[1] != s.text
        assert changed, name


@pytest.mark.parametrize(
    "text",
    [
        "func.func @f() {\n  func.return\n}",
        "builtin.module {\n  func.func @f() {\n    func.return\n  }\n}",
        'builtin.module attributes {spyre.numerics = "dl16"} {\n  func.func @f() {\n    func.return\n  }\n}',
        "builtin.module attributes {spyre.target = #spyre.target} {\n  func.func @f() {\n    func.return\n  }\n}",
        "builtin.module attributes {spyre.target = #spyre.target<>} {\n}",
        "builtin.module attributes {spyre.target = #spyre.target<cores = 4, lx_bytes = 4096>} {\n}",
        "builtin.module attributes {spyre.target = #spyre.target<lx_bytes = 4096>} {\n}",
    ],
)
def test_a_recipes_core_count_is_the_case_modules_target(text):
    from xdsl.parser import Parser

    from spyre_mlir.dialects import spyre
    from spyre_mlir.testing.fuzz import runner
    from spyre_mlir.tools.spyre_opt import make_tool_context

    module = Parser(make_tool_context(), runner.with_cores(text, 7)).parse_module()
    assert spyre.module_target(module).cores == 7


@pytest.mark.slow  # 200 cases through the tools in worker processes
def test_fuzz_slice():
    from spyre_mlir.testing.fuzz import mutations, runner

    recipes = mutations.draw_recipes(CASES, SEED)
    results = runner.run_cases(recipes, jobs=2)
    summary = runner.summarize(results, 0.0, SEED)
    bad = {k: v for k, v in summary["findings"].items()}
    assert not bad, "fuzz findings (replay with bench/fuzz.py --replay RECIPE):\n" + json.dumps(bad, indent=2)[:20000]
    assert summary["cases"] == CASES
    assert sum(summary[k] for k in ("tracebacks", "crashes", "hangs", "mismatches", "unlocated")) == 0
    # the slice reaches every stage: some mutants compile and run, and some are compared
    assert summary["ran_device_model"] > 0 and summary["compared_with_reference"] > 0
    assert all(r.outcome not in runner.FAILURES for r in results)


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
