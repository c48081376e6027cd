"""bench/coverage.py measures corpus entries in worker processes (`--jobs`): the rows are the
ones one process measures, in the order asked, whatever order the workers finish in."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).parents[3] / "bench" / "coverage.py"


def _rows(*args: str) -> list[dict]:
    out = subprocess.run(
        [sys.executable, str(BENCH), "--json", *args], capture_output=True, text=True, timeout=600, check=True
    )
    rows = json.loads(out.stdout)["models"]
    for row in rows:
        assert row["wall_s"] > row["first_call_s"] + row["call_s"] > 0
        assert 0 < row["spyre_compile_s"] < row["first_call_s"]
        for key in ("wall_s", "first_call_s", "spyre_compile_s", "call_s"):
            del row[key]  # each entry's own times: the only fields that may differ
    return rows


@pytest.mark.full  # three compiles in each of two runs, and two workers' imports
def test_workers_give_the_rows_one_process_gives_in_the_order_asked():
    names = ["bert", "gpt2", "llama"]  # not the corpus's order
    one = _rows(*names, "--jobs", "1")
    assert [r["name"] for r in one] == names
    assert all(r["passed"] for r in one), [r["reason"] for r in one]
    assert _rows(*names, "--jobs", "2") == one


@pytest.mark.full  # three models built from their configs, compiled and run against eager
def test_the_sweep_builds_model_types_from_their_configs_and_gets_them_right():
    """`--sweep`: model types by their transformers name, each built from its shrunk default
    config (bench/sweep.py); each right against eager, with its float ops on the device."""
    names = ["llama", "gpt2", "bert"]
    out = subprocess.run(
        [sys.executable, str(BENCH), "--sweep", "--json", *names],
        capture_output=True,
        text=True,
        timeout=1200,
        check=True,
    )
    rows = json.loads(out.stdout)["models"]
    assert [r["name"] for r in rows] == names
    assert all(r["buildable"] and r["passed"] for r in rows), [(r["name"], r["reason"]) for r in rows]
    assert all(r["float_device_fraction"] >= 0.95 for r in rows), [
        (r["name"], r["float_device_fraction"]) for r in rows
    ]


@pytest.mark.slow  # four models built from their configs, compiled and run against eager
def test_sweep_entries_that_once_crashed_the_compiler_compile():
    """qwen3_5_text: spyre-propagate-layouts relayouts a value no torch op holds (a view moved
    below the pointwise ops that read it) and the relayout carries its reader's origin;
    gemma3n_text: a result with an element per stick (a reduction's, permuted) broadcast
    with a vector takes the generic layout. paligemma computes otherwise when traced
    (transformers skips its attention mask in eager mode only): judged against the trace.
    switch_transformers: an output of a padded call (length buckets) that views its input is
    rebuilt by aot_autograd from the strides it is given, which are its own length's.
    qwen3_5_text's gated delta rule takes exp() of differences of log decays summed to -300: it
    fails the criterion in DL16 runs of eager PyTorch too, and its row is beyond DL16, not a
    wrong answer."""
    out = subprocess.run(
        [
            sys.executable,
            str(BENCH),
            "--sweep",
            "--json",
            "qwen3_5_text",
            "gemma3n_text",
            "paligemma",
            "switch_transformers",
        ],
        capture_output=True,
        text=True,
        timeout=900,
        check=True,
    )
    data = json.loads(out.stdout)
    rows = {r["name"]: r for r in data["models"]}
    assert all(r["compiles"] and r["stage"] != "compile" for r in rows.values()), [r["reason"] for r in rows.values()]
    qwen = rows["qwen3_5_text"]
    assert not qwen["passed"] and qwen["beyond_dl16"], qwen["reason"]
    assert (
        qwen["reason"].startswith("beyond DL16: ")
        and "of 16 DL16 runs of the model fail the criterion too" in qwen["dl16"]
    )
    assert data["totals"]["beyond_dl16"] == 1 and data["totals"]["wrong_answers"] == 0
    assert rows["gemma3n_text"]["passed"], rows["gemma3n_text"]["reason"]
    assert rows["gemma3n_text"]["reference"] == "eager"
    assert rows["paligemma"]["reference"] == "aot_eager" and rows["paligemma"]["passed"], rows["paligemma"]["reason"]
    assert rows["paligemma"]["cosine"] >= 0.999
    assert rows["switch_transformers"]["passed"], rows["switch_transformers"]["reason"]


def test_jobs_below_one_are_refused():
    out = subprocess.run([sys.executable, str(BENCH), "bert", "--jobs", "0"], capture_output=True, text=True)
    assert out.returncode == 2
    assert "--jobs must be at least 1, got 0" in out.stderr


def test_the_parent_process_loads_no_torch():
    """Workers start at once only if the process handing out the entries has not loaded torch
    (nor transformers, nor spyre_mlir): importing the bench and its corpus loads none of them."""
    probe = (
        f"import sys; sys.path.insert(0, {str(BENCH.parent)!r}); import coverage, corpus; "
        "print(sorted(m for m in ('torch', 'transformers', 'spyre_mlir') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
