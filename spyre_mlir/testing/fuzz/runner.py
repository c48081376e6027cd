"""Run fuzz cases through spyre-opt and spyre-run, in killable worker processes, and
classify what happened (see docs/fuzzing.md).

Each case (a recipe of spyre_mlir.testing.fuzz.mutations) is written to a file and run, in-process in a worker,
through the tools' own `main` functions, as a user would run them:

    1. spyre-opt CASE.mlir -p spyre-pipeline              parse, verify, the whole pipeline, print
    2. spyre-opt OUT.mlir                                  the printed result parses and verifies again
    3. spyre-run CASE.mlir --entry F [--reference]         when 1 succeeded and the module has a function:
                                                           the device model, and for torch-level modules
                                                           the float64 reference and its DL16 bound

A recipe's core count N is the case module's target (`with_cores`: `#spyre.target<cores = N>`).

Outcomes, worst first:

    hang          the case ran past its time bound (the worker's alarm, or the parent's kill)
    crash         the worker process died (a signal, out of memory)
    traceback     an exception escaped a tool's main, "Traceback" was printed, or a tool's last-resort
                  "internal error" report fired (an internal failure, not a precise diagnostic)
    mismatch      spyre-run exit 2: a device result outside the reference's DL16 bound; or a
                  module that compiled did not print back to text that parses and verifies
    out_of_range  spyre-run exit 2 with its note that exact values leave the DL16 range (the
                  device saturates, which the bound does not model): expected, not a finding
    unlocated     exit 1 with a message that names neither a location (file:line:col) nor an op
    diagnostic    exit 1 with a message naming a location or an op (the expected failure)
    ok            every stage exited 0
"""

from __future__ import annotations

import contextlib
import io
import json
import multiprocessing as mp
import os
import re
import signal
import tempfile
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any

from spyre_mlir.testing.fuzz.mutations import apply_recipe

OUTCOMES = ("ok", "diagnostic", "out_of_range", "unlocated", "mismatch", "traceback", "crash", "hang")
FAILURES = ("unlocated", "mismatch", "traceback", "crash", "hang")

LOCATED = re.compile(
    r":\d+:\d+"  # file:line:col
    r"|'[A-Za-z_]+\.[\w.]+'"  # 'dialect.op'
    r"|\b(?:torch|spyre|spyre_isa|func|arith|math|builtin|test)\.[a-z_][\w.]*"  # dialect.op
    r"|@[\w.$-]+"  # a function, kernel or program
    r"|\bkernel \w+"  # the device model's `kernel k0, instruction #3 (...)`
)
TORCH_LEVEL = re.compile(r"(?m)(?:^|=)\s*torch\.(?:aten|prim|constant|vtensor\.literal|operator)\b")
"""A torch op (not just a torch type): spyre-run --reference needs one."""
FUNCTION = re.compile(r"func\.func\s+(?:private\s+)?@([\w.$-]+)")

DEFAULT_TIMEOUT = 60.0
"""Seconds one case may take in a worker before it counts as a hang."""

MEMORY_LIMIT = 6 << 30
"""Address-space limit of a worker (bytes): a runaway allocation fails instead of swapping."""


class CaseTimeout(BaseException):
    """Raised by the worker's alarm; a BaseException so that no `except Exception` in the
    code under test swallows it."""


# region One case, in a worker


def _invoke(main: Callable[[list[str]], Any], argv: list[str]) -> tuple[int, str, str, str | None]:
    """(exit code, stdout, stderr, formatted traceback or None) of a tool's main, in-process."""
    out, err = io.StringIO(), io.StringIO()
    tb = None
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            ret = main(argv)
            code = int(ret or 0)
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            if not isinstance(e.code, int) and e.code is not None:
                err.write(str(e.code))
        except CaseTimeout:
            raise
        except BaseException as e:
            tb = "".join(traceback.format_exception(e))
            code = -1
    return code, out.getvalue(), err.getvalue(), tb


def _signature(kind: str, stage: str, text: str) -> str:
    """A short key that groups findings of one cause: the exception and where it was raised
    (innermost frame of spyre_mlir, else of xdsl), numbers blanked."""
    lines = text.strip().splitlines()
    last = (
        (lines[-1] if kind == "traceback" else lines[0]) if lines else ""
    )  # an exception's last line; a message's first
    frames = re.findall(r'File "([^"]+)", line (\d+), in (\S+)', text)
    where = ""
    for pat in ("spyre_mlir", "xdsl", ""):
        hit = [f for f in frames if pat in f[0]]
        if hit:
            f = hit[-1]
            where = f"{Path(f[0]).parent.name}/{Path(f[0]).name}:{f[2]}"
            break
    msg = re.sub(r"\d+", "N", last)[:160]
    return f"{kind} [{stage}] {where} {msg}".strip()


@dataclass
class Result:
    index: int
    recipe: dict[str, Any]
    outcome: str = "ok"
    stage: str = ""
    message: str = ""
    signature: str = ""
    seconds: float = 0.0
    stages: list[str] = field(default_factory=list)
    reference: bool = False
    """spyre-run compared the device model with the reference."""

    def as_dict(self) -> dict[str, Any]:
        return self.__dict__.copy()


def _classify(res: Result, stage: str, code: int, stderr: str, tb: str | None, allow_mismatch: bool = False) -> bool:
    """Record a stage's outcome; True when the case may go on to the next stage."""
    res.stages.append(f"{stage}:{code}")
    internal = re.search(r"internal error", stderr)
    if tb is not None or "Traceback (most recent call last)" in stderr or internal:
        res.outcome, res.stage = "traceback", stage
        res.message = (tb or stderr)[-3000:]
        res.signature = _signature("traceback" if not internal or tb else "internal", stage, tb or stderr)
        return False
    if code == 0:
        res.stage = ""
        return True
    if code == 2 and allow_mismatch and "note: exact values leave the" in stderr:
        res.outcome, res.stage, res.message = "out_of_range", stage, stderr[-3000:]
        return False
    if code == 2 and allow_mismatch:
        res.outcome, res.stage, res.message = "mismatch", stage, stderr[-3000:]
        res.signature = f"mismatch [{stage}] {res.recipe['seed']}"
        return False
    first = stderr.strip()
    if code == 1 and first and LOCATED.search(first):
        res.outcome, res.stage, res.message = "diagnostic", stage, first[:400]
        return False
    res.outcome, res.stage, res.message = "unlocated", stage, f"exit {code}: {first[:2000]}"
    res.signature = _signature("unlocated", stage, first)
    return False


def with_cores(text: str, cores: int) -> str:
    """A case's module on a target of `cores` cores, edited as text (a case need not parse):
    the `cores` entry of its `#spyre.target`, or one added to it, or a target given to its
    `builtin.module`, or the text wrapped in a module that has one."""
    entry = f"cores = {cores}"
    if (m := re.search(r"#spyre\.target<([^>]*)>", text)) is not None:
        given = m.group(1)
        inner = re.sub(r"\bcores\s*=\s*-?\d+", entry, given) if re.search(r"\bcores\b", given) else f"{entry}, {given}"
        inner = inner if given.strip() else entry
        return text[: m.start(1)] + inner + text[m.end(1) :]
    if (m := re.search(r"#spyre\.target\b", text)) is not None:
        return text[: m.end()] + f"<{entry}>" + text[m.end() :]
    target = f"spyre.target = #spyre.target<{entry}>"
    if (m := re.search(r"builtin\.module\s+attributes\s*\{", text)) is not None:
        return text[: m.end()] + target + ", " + text[m.end() :]
    if (m := re.search(r"builtin\.module\s*\{", text)) is not None:
        return text[: m.start()] + f"builtin.module attributes {{{target}}} {{" + text[m.end() :]
    return f"builtin.module attributes {{{target}}} {{\n{text}\n}}\n"


def run_case(index: int, recipe: dict[str, Any], workdir: str) -> Result:
    from spyre_mlir.tools import spyre_opt, spyre_run

    start = time.perf_counter()
    res = Result(index, recipe)
    seed, text = apply_recipe(recipe)
    cores = recipe.get("cores")
    if cores:
        text = with_cores(text, cores)
    path = os.path.join(workdir, f"case{index}.mlir")
    with open(path, "w") as f:
        f.write(text)
    pipeline = "spyre-pipeline"
    try:
        res.stage = "spyre-opt"
        code, out, err, tb = _invoke(spyre_opt.main, [path, "-p", pipeline])
        if not _classify(res, "spyre-opt", code, err, tb):
            return res
        printed = os.path.join(workdir, f"case{index}.out.mlir")
        with open(printed, "w") as f:
            f.write(out)
        res.stage = "reparse"
        code, _, err, tb = _invoke(spyre_opt.main, [printed])
        if not _classify(res, "reparse", code, err, tb):
            if res.outcome in ("diagnostic", "unlocated"):  # printed IR that does not read back
                res.outcome = "mismatch"
                res.signature = _signature("roundtrip", "reparse", err)
            return res
        fn = FUNCTION.search(text)
        if fn is None:
            return res
        argv = [path, "--no-profile", "--entry", fn.group(1)]
        expected: list[Any] | None = None
        outputs: list[str] = []
        if TORCH_LEVEL.search(text):
            argv.append("--reference")
            res.reference = True
        else:  # spyre level: the harness's own oracle (spyre_mlir.testing.fuzz.oracle), on inputs it writes
            res.stage = "oracle"
            try:
                oracle = _spyre_oracle(text, fn.group(1), workdir, index)
            except CaseTimeout:
                raise
            except Exception as e:  # the harness's own bug, reported as such
                tb = "".join(traceback.format_exception(e))
                res.outcome, res.stage, res.message = "traceback", "oracle", tb[-3000:]
                res.signature = _signature("traceback", "oracle", tb)
                return res
            if oracle is not None:
                inputs, expected = oracle
                outputs = [os.path.join(workdir, f"case{index}.out{i}.npy") for i in range(len(expected))]
                argv += [a for p in inputs for a in ("--input", p)] + [a for p in outputs for a in ("--save-output", p)]
        res.stage = "spyre-run"
        code, out, err, tb = _invoke(spyre_run.main, argv)
        if (
            _classify(res, "spyre-run", code, err + (out if code == 2 else ""), tb, allow_mismatch=True)
            and expected is not None
        ):
            import numpy as np

            from spyre_mlir.testing.fuzz.oracle import agree

            res.reference = True
            for i, (p, want) in enumerate(zip(outputs, expected)):
                ok, why = agree(np.load(p), want)
                if not ok:
                    res.outcome, res.stage = "mismatch", "spyre-run"
                    res.message = f"output {i} vs the spyre-level oracle: {why}"
                    res.signature = f"mismatch [spyre-run] {res.recipe['seed']}"
                    break
        return res
    except CaseTimeout as e:
        res.outcome = "hang"
        res.message = "".join(traceback.format_exception(e))[-3000:]  # where it was when the time ran out
        res.signature = f"hang [{res.stage}] {seed.name}"
        return res
    finally:
        res.seconds = time.perf_counter() - start
        for p in os.listdir(workdir):
            if p.startswith(f"case{index}."):
                with contextlib.suppress(OSError):
                    os.remove(os.path.join(workdir, p))


def _spyre_oracle(text: str, entry: str, workdir: str, index: int) -> tuple[list[str], list[Any]] | None:
    """Inputs (written as .npy) and the oracle's outputs for a spyre-level function, or None
    where the oracle does not apply. An exception here is the harness's bug: it counts as a
    traceback at stage `oracle`."""
    import numpy as np
    from xdsl.dialects import func

    from spyre_mlir.diagnostics import LocatingParser
    from spyre_mlir.sim.memory import DeviceError
    from spyre_mlir.testing.fuzz.oracle import NoOracle, evaluate
    from spyre_mlir.tools.spyre_opt import make_tool_context
    from spyre_mlir.tools.spyre_run import input_types, random_input

    module = LocatingParser(make_tool_context(), text).parse_module()
    fn = next((op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == entry), None)
    if fn is None:
        return None
    try:
        types = input_types(fn)
    except DeviceError:
        return None
    if sum(int(np.prod(s)) for s, _ in types) > 1 << 24:
        return None
    rng = np.random.default_rng(index)
    inputs = [random_input(rng, s, e) for s, e in types]
    try:
        expected = evaluate(module, entry, inputs)
    except NoOracle:
        return None
    paths = []
    for i, x in enumerate(inputs):
        paths.append(os.path.join(workdir, f"case{index}.in{i}.npy"))
        np.save(paths[-1], x)
    return paths, expected


def _worker(conn: Any, timeout: float) -> None:
    import resource

    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    import torch

    torch.set_num_threads(1)
    import warnings

    warnings.simplefilter("ignore")

    def alarm(signum: int, frame: Any) -> None:
        raise CaseTimeout()

    signal.signal(signal.SIGALRM, alarm)
    import spyre_mlir.pipeline
    import spyre_mlir.reference.evaluate
    import spyre_mlir.tools.spyre_run  # noqa: F401

    workdir = tempfile.mkdtemp(prefix="spyre-fuzz-")
    conn.send(("ready", None))
    while True:
        msg = conn.recv()
        if msg is None:
            break
        index, recipe = msg
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            res = run_case(index, recipe, workdir)
        except CaseTimeout:
            res = Result(index, recipe, "hang", "?", "timed out outside a stage", f"hang [?] {recipe['seed']}")
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        conn.send(("done", res.as_dict()))


# endregion
# region The pool


class _Slot:
    def __init__(self, ctx: Any, timeout: float):
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker, args=(child, timeout), daemon=True)
        self.proc.start()
        child.close()
        self.ready = False
        self.job: tuple[int, dict[str, Any]] | None = None
        self.started = 0.0
        self.done = 0

    def kill(self) -> None:
        with contextlib.suppress(Exception):
            self.proc.kill()
        self.proc.join(5)
        with contextlib.suppress(Exception):
            self.conn.close()


def run_cases(
    recipes: Sequence[dict[str, Any]],
    jobs: int = 2,
    timeout: float = DEFAULT_TIMEOUT,
    recycle: int = 150,
    progress: Callable[[Result], None] | None = None,
) -> list[Result]:
    """Run the recipes on `jobs` worker processes; a worker past `timeout` + 15 s is killed
    (a hang the alarm could not interrupt, e.g. inside numpy) and replaced. Workers are
    replaced after `recycle` cases to bound memory growth."""
    ctx = mp.get_context("spawn")
    pending = list(enumerate(recipes))[::-1]
    results: dict[int, Result] = {}
    slots = [_Slot(ctx, timeout) for _ in range(max(1, min(jobs, len(recipes))))]
    hard = timeout + 15.0
    startup_failures = 0

    def finish(res: Result) -> None:
        results[res.index] = res
        if progress:
            progress(res)

    try:
        while len(results) < len(recipes):
            for i, s in enumerate(slots):
                if s.ready and s.job is None and pending:
                    if s.done >= recycle:
                        s.conn.send(None)
                        s.kill()
                        slots[i] = s = _Slot(ctx, timeout)
                        continue
                    s.job = pending.pop()
                    s.started = time.monotonic()
                    s.conn.send(s.job)
            conns = [s.conn for s in slots]
            for c in wait(conns, timeout=1.0):
                s = next(s for s in slots if s.conn is c)
                payload: dict[str, Any] = {}
                try:
                    kind, payload = s.conn.recv()
                except (EOFError, OSError):
                    kind = "died"
                    s.proc.join(2)
                if kind == "ready":
                    s.ready = True
                    startup_failures = 0
                elif kind == "done":
                    finish(Result(**payload))
                    s.job, s.done = None, s.done + 1
                else:
                    if not s.ready:
                        startup_failures += 1
                        if startup_failures > 3:
                            raise RuntimeError(f"fuzz workers die before they are ready (exit code {s.proc.exitcode})")
                    _replace(slots, s, ctx, timeout, finish, "crash", f"the worker died (exit code {s.proc.exitcode})")
            now = time.monotonic()
            for s in list(slots):
                if s.job is not None and now - s.started > hard:
                    _replace(slots, s, ctx, timeout, finish, "hang", f"killed after {hard:.0f} s")
                elif s.job is None and not s.proc.is_alive():
                    _replace(slots, s, ctx, timeout, finish, "crash", "the worker died")
    finally:
        for s in slots:
            with contextlib.suppress(Exception):
                s.conn.send(None)
            s.kill()
    return [results[i] for i in range(len(recipes))]


def _replace(
    slots: list[_Slot], s: _Slot, ctx: Any, timeout: float, finish: Callable[[Result], None], outcome: str, why: str
) -> None:
    job = s.job
    s.kill()
    slots[slots.index(s)] = _Slot(ctx, timeout)
    if job is not None:
        index, recipe = job
        finish(Result(index, recipe, outcome, "?", why, f"{outcome} {recipe['seed']}", time.monotonic() - s.started))


# endregion
# region Summary


def summarize(results: Iterable[Result], wall: float, seed: int) -> dict[str, Any]:
    results = list(results)
    counts = {o: sum(r.outcome == o for r in results) for o in OUTCOMES}
    findings: dict[str, dict[str, Any]] = {}
    for r in results:
        if r.outcome in FAILURES:
            f = findings.setdefault(
                r.signature, {"outcome": r.outcome, "count": 0, "recipe": r.recipe, "message": r.message[-1500:]}
            )
            f["count"] += 1
    stages: dict[str, int] = {}
    for r in results:
        last = r.stages[-1].split(":")[0] if r.stages else "-"
        key = f"{r.outcome}@{last}" if r.outcome != "ok" else f"ok@{last}"
        stages[key] = stages.get(key, 0) + 1
    return {
        "cases": len(results),
        "seed": seed,
        "ok": counts["ok"],
        "diagnostics": counts["diagnostic"],
        "tracebacks": counts["traceback"],
        "hangs": counts["hang"],
        "mismatches": counts["mismatch"],
        "out_of_range": counts["out_of_range"],
        "unlocated": counts["unlocated"],
        "crashes": counts["crash"],
        "ran_device_model": sum(any(s.startswith("spyre-run:") for s in r.stages) for r in results),
        "compared_with_reference": sum(r.reference and r.stages[-1] in ("spyre-run:0", "spyre-run:2") for r in results),
        "by_stage": dict(sorted(stages.items())),
        "wall_s": round(wall, 1),
        "case_s_max": round(max((r.seconds for r in results), default=0.0), 2),
        "findings": findings,
    }


def dumps(obj: Any) -> str:
    return json.dumps(obj, indent=2, sort_keys=False)


# endregion
