"""bench/plans.py runs and its figures keep the cost model's relations (simulated time and
estimates, deterministic: not a wall-clock assertion); `cost.contended` combines demands as
its docstring says."""

import json

import pytest

from spyre_mlir.analysis import cost
from spyre_mlir.report.sweep import load_bench


def test_contended_demands_are_the_largest_where_it_dominates_and_more_where_they_near_it():
    p = cost.CONTENTION_NORM
    assert cost.contended(100.0) == 100.0
    assert cost.contended(100.0, 0.0, 0.0) == 100.0
    assert cost.contended(0.0, 0.0) == 0.0
    assert 100.0 < cost.contended(100.0, 50.0) < 100.1  # half the largest: +0.05%
    two = cost.contended(100.0, 100.0)
    assert two == pytest.approx(100.0 * 2 ** (1 / p))
    assert 100.0 < cost.contended(100.0, 90.0) < two < cost.contended(100.0, 100.0, 100.0) < 300.0
    assert cost.contended(3.0, 7.0, 5.0) == cost.contended(7.0, 5.0, 3.0)


def test_plans_bench_quick(capsys):
    """`bench/plans.py --quick --json`, in this process: the search's own choice is the first of
    the ranked plans (the least estimate), each plan ran and was chunked, and no estimate is
    below the plain maximum of the same plan's demands."""
    bench = load_bench("plans")
    assert bench.main(["--quick", "--json", "--top", "3"]) == 0
    (case,) = json.loads(capsys.readouterr().out)["cases"]
    plans = case["plans"]
    assert len(plans) == 3 and plans[0]["chosen"] and not any(p["chosen"] for p in plans[1:])
    estimates = [p["estimate_us"] for p in plans]
    assert estimates == sorted(estimates)
    for p in plans:
        assert p["simulated_us"] > 0 and p["chunks"]
        assert p["estimate_us"] >= p["max_estimate_us"] - 1e-9
    assert case["chosen_over_fastest"] >= 1.0
