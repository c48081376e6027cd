"""Design-space sweeps: compile and simulate a model at every point of a grid of `DeviceConfig`
values, each point in a worker process, with the compile cache on (a point whose compile is in
the cache loads it: a rerun, or a point an earlier sweep compiled).

    points = grid({"cores": [8, 16, 32], "lx_bytes": [2**20, 2**21]})
    results = sweep("mlp.mlir", points, workers=2)     # one dict per point, in order

What can be swept (`measure`):

    FILE.mlir        a torch-level module on seeded random inputs: one call's kernel time
    CORPUS NAME      a bench/corpus.py model (a checkout's): one call's kernel time
    granite-decode   one decode step of the Granite-3.3-8B-shaped layer (bench/llm.py's), 8-token
                     prompt (`prompt`: another length), static cache: its kernel and transfer
                     time, tokens/s, and the prefill's (TTFT)
    smollm2-decode   the same for SmolLM2-135M (the demo's prompt, its tokens repeated to `prompt`)

Each point's `plan` is a digest of the compiled program (its printed module, the weights'
blobs aside): equal digests are the same program.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import fields
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from spyre_mlir.target.config import DeviceConfig

DECODE = ("granite-decode", "smollm2-decode")

_SUFFIXES = {"k": 1, "m": 2, "g": 3}


def parse_value(field: str, text: str) -> Any:
    """A DeviceConfig field's value from the command line: `16`, `2M` (a byte count: 2 MiB;
    otherwise 2e6), `204.8e9`, `dl16`."""
    kinds = {f.name: f.type for f in fields(DeviceConfig)}
    if field not in kinds:
        raise ValueError(f"--set {field}: not a DeviceConfig field (known: {', '.join(sorted(kinds))})")
    default = getattr(DeviceConfig(), field)
    t = text.strip()
    if isinstance(default, str):
        return t
    if isinstance(default, bool):
        if t.lower() not in ("true", "false", "1", "0"):
            raise ValueError(f"--set {field}={t}: true or false")
        return t.lower() in ("true", "1")
    scale = 1.0
    if t and t[-1].lower() in _SUFFIXES:
        base = 1024 if "bytes" in field and "per_s" not in field else 1000
        scale = float(base ** _SUFFIXES[t[-1].lower()])
        t = t[:-1]
    try:
        value = float(t) * scale
    except ValueError:
        raise ValueError(f"--set {field}={text}: not a number") from None
    if isinstance(default, int):
        if value != int(value):
            raise ValueError(f"--set {field}={text}: {field} is an integer")
        return int(value)
    return value


def grid(axes: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """Every combination of the axes' values, the last axis varying fastest."""
    names = list(axes)
    return [dict(zip(names, combo)) for combo in itertools.product(*(axes[n] for n in names))]


def plan_digest(module: Any) -> str:
    """sha256 (12 hex digits) of the module's printed ops: equal digests, the same program.
    Left out: the module's attributes (its `#spyre.target` names the device it was compiled
    for, which differs at every point whether or not the program does) and the kernels' graph
    prefix (`g7_k3`: the process's seventh graph)."""
    import re

    from spyre_mlir.report.capture import op_text

    text = "".join(op_text(op) for op in module.body.block.ops)
    return hashlib.sha256(re.sub(r"\bg\d+_k", "k", text).encode()).hexdigest()[:12]


def plan_summary(module: Any, times: dict[str, float], top: int = 3) -> list[str]:
    """The `top` kernels by time: their program's cores, streams and instructions."""
    import re

    from spyre_mlir.dialects import spyre_isa

    programs = {op.sym_name.data: op for op in module.walk() if isinstance(op, spyre_isa.ProgramOp)}
    launches = {
        op.kernel_name: op.program.root_reference.data for op in module.walk() if isinstance(op, spyre_isa.LaunchOp)
    }
    out = []
    for name, seconds in sorted(times.items(), key=lambda kv: -kv[1])[:top]:
        prog = programs.get(launches.get(name, ""))
        if prog is None:
            continue
        streams = prog.streams
        cores = sum(len(s.core_list) for s in streams)
        instrs = sum(len(list(s.body.block.ops)) for s in streams)
        short = re.sub(r"^g\d+_", "", name)  # (the process's graph number)
        out.append(f"{short} {seconds * 1e6:.1f}us {cores}c/{len(streams)}s/{instrs}i")
    return out


def _config(point: dict[str, Any]) -> DeviceConfig:
    config = DeviceConfig().replace(**point)
    config.validate()
    return config


def load_bench(name: str) -> Any:
    """A checkout's bench/NAME.py (corpus, llm), loaded by path, the compile cache setting left
    as it was (the benches turn it off for themselves)."""
    import importlib.util
    import sys

    path = Path(__file__).resolve().parents[2] / "bench" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"spyre_bench_{name}", path)
    if spec is None or spec.loader is None or not path.exists():
        raise ValueError(f"this needs a checkout's bench/{name}.py ({path} is missing)")
    if spec.name in sys.modules:
        return sys.modules[spec.name]
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (dataclasses look their module up while it runs)
    cache = os.environ.get("SPYRE_CACHE")
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[spec.name]
        raise
    finally:
        if cache is None:
            os.environ.pop("SPYRE_CACHE", None)
        else:
            os.environ["SPYRE_CACHE"] = cache
    return module


def _mlir_point(path: str, config: DeviceConfig) -> dict[str, Any]:
    import numpy as np

    from spyre_mlir.diagnostics import LocatingParser
    from spyre_mlir.frontend.compile_cache import CachedGraph, CompileCache, cache_dir, cache_enabled, compiler_digest
    from spyre_mlir.pipeline import Optimizations, run_pipeline
    from spyre_mlir.report.capture import entry_function
    from spyre_mlir.runtime.host import Executable
    from spyre_mlir.sim.interpreter import DeviceModel
    from spyre_mlir.sim.profile import profile
    from spyre_mlir.tools.spyre_opt import make_tool_context
    from spyre_mlir.tools.spyre_run import input_types, random_input

    text = Path(path).read_text()
    key = hashlib.sha256(repr(("mlir", compiler_digest(), text, config, Optimizations())).encode()).hexdigest()
    cache = CompileCache(cache_dir()) if cache_enabled() else None
    entry = cache.load(key) if cache is not None else None
    compiled = "cache"
    if entry is None:
        compiled = "compiled"
        ctx = make_tool_context()
        module = LocatingParser(ctx, text, name=path).parse_module()
        types = input_types(entry_function(module))
        run_pipeline(ctx, module, config)
        entry = CachedGraph(module, ctx, [], 0, "g1")
        if cache is not None:
            cache.store(key, entry)
    else:
        source = LocatingParser(make_tool_context(), text, name=path).parse_module()
        types = input_types(entry_function(source))
    rng = np.random.default_rng(0)
    inputs = [random_input(rng, s, e) for s, e in types]
    exe = Executable(entry.module, entry.ctx, DeviceModel(config))
    exe(*inputs)
    with profile() as prof:
        exe(*inputs)
    times = {k.name: k.time_s for k in prof.kernels}
    return {
        "simulated_s": prof.total_time_s,
        "launches": len(prof.kernels),
        "plan": plan_digest(entry.module),
        "kernels": plan_summary(entry.module, times),
        "compile": compiled,
    }


def _graphs_since(before: int) -> list[Any]:
    from spyre_mlir.frontend.backend import STATS

    return STATS.graphs[before:]


def _model_point(name: str, config: DeviceConfig, prompt: int | None = None) -> dict[str, Any]:
    import torch

    from spyre_mlir.frontend.backend import STATS
    from spyre_mlir.sim.profile import profile

    options = {k: v for k, v in vars(config).items() if getattr(DeviceConfig(), k) != v}
    torch._dynamo.reset()
    before, loads = len(STATS.graphs), STATS.cache_loads
    if name in DECODE:
        llm = load_bench("llm")
        if name == "granite-decode":
            from transformers import GraniteConfig, GraniteForCausalLM

            cfg = GraniteConfig(num_hidden_layers=1, vocab_size=256, max_position_embeddings=4096, **llm.GRANITE)
            torch.manual_seed(0)
            model = GraniteForCausalLM(cfg).eval()
            ids = torch.randint(0, 256, (1, prompt or 8))
        else:
            from spyre_mlir.demo import PROMPT, load_smollm2

            tokenizer, model = load_smollm2()
            ids = tokenizer(PROMPT, return_tensors="pt").input_ids
            if prompt:
                ids = ids.repeat(1, -(-prompt // ids.shape[1]))[:, :prompt]
        figures = llm.generate_figures(model, ids, 3, options=options)
        graphs = _graphs_since(before)
        decode = graphs[-1].module() if graphs else None
        last = figures["calls"][-1]
        from spyre_mlir.frontend.backend import get_device_model

        records = get_device_model(config).profile.kernels[-last["launches"] :]  # the last decode step's
        result = {
            "simulated_s": figures["itl_s"],
            "tokens_per_s": figures["tokens_per_s"],
            "ttft_s": figures["ttft_s"],
            "prompt_tokens": figures["prompt_tokens"],
            "launches": last["launches"],
            "kernels_s": {r.name: r.time_s for r in records},
        }
    else:
        corpus = load_bench("corpus")
        if name not in corpus.CORPUS:
            raise ValueError(
                f"{name!r} is no .mlir file, {' or '.join(DECODE)}, or corpus model ({', '.join(sorted(corpus.CORPUS))})"
            )
        model, inputs = corpus.build(name)
        fn = torch.compile(model, backend="spyre", options=options or None)
        with torch.no_grad():
            fn(*inputs)
            with profile() as prof:
                fn(*inputs)
        graphs = _graphs_since(before)
        decode = graphs[-1].module() if graphs else None
        result = {"simulated_s": prof.total_time_s, "launches": len(prof.kernels)}
        result["kernels_s"] = {k.name: k.time_s for k in prof.kernels}
    modules = [g.module() for g in graphs]
    result["plan"] = hashlib.sha256("".join(plan_digest(m) for m in modules if m is not None).encode()).hexdigest()[:12]
    times = result.pop("kernels_s", {})
    result["kernels"] = plan_summary(decode, times) if decode is not None and times else []
    result["compile"] = "cache" if STATS.cache_loads - loads == len(graphs) and graphs else "compiled"
    return result


def measure(what: str, point: dict[str, Any], prompt: int | None = None) -> dict[str, Any]:
    """One point (run in a worker): its config's fields set, its simulated time and plan."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    start = time.perf_counter()
    config = _config(point)
    if what.endswith(".mlir") or os.path.exists(what):
        result = _mlir_point(what, config)
    else:
        result = _model_point(what, config, prompt)
    return {"config": dict(point), **result, "wall_s": time.perf_counter() - start}


def _measure_or_error(what: str, point: dict[str, Any], prompt: int | None) -> dict[str, Any]:
    try:
        return measure(what, point, prompt)
    except Exception as e:  # a point the device cannot take (a plan past LX, a split too small) is reported
        return {"config": dict(point), "error": f"{type(e).__name__}: {e}".splitlines()[0][:400]}


def sweep(
    what: str,
    points: list[dict[str, Any]],
    workers: int = 2,
    on_point: Callable[[int, dict[str, Any]], None] | None = None,
    prompt: int | None = None,
) -> list[dict[str, Any]]:
    """Every point measured, in worker processes (spawned: a fresh interpreter each), in order;
    `on_point(i, result)` as each one finishes. `prompt`: a decode step's prompt tokens."""
    if prompt is not None and what not in DECODE:
        raise ValueError(f"a prompt length is for {' or '.join(DECODE)}, not {what}")
    for point in points:
        _config(point)  # refused here, before any worker starts
    results: list[dict[str, Any]] = [{} for _ in points]

    def done(i: int, result: dict[str, Any]) -> None:
        results[i] = result
        if on_point is not None:
            on_point(i, result)

    if workers <= 1:
        for i, p in enumerate(points):
            done(i, _measure_or_error(what, p, prompt))
        return results
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        futures = {pool.submit(_measure_or_error, what, p, prompt): i for i, p in enumerate(points)}
        for future in as_completed(futures):
            done(futures[future], future.result())
    return results


def pareto(points: list[dict[str, Any]], axes: Sequence[str]) -> list[int]:
    """Indices of the points no other point beats: no more of every axis, no more time, and
    less of one."""
    ok = [i for i, p in enumerate(points) if "simulated_s" in p]

    def key(i: int) -> tuple[float, ...]:
        p = points[i]
        return (*[float(p["config"][a]) for a in axes], p["simulated_s"])

    front = []
    for i in ok:
        ki = key(i)
        if not any(all(a <= b for a, b in zip(key(j), ki)) and key(j) != ki for j in ok if j != i):
            front.append(i)
    return front


def table(what: str, axes: Sequence[str], points: list[dict[str, Any]]) -> str:
    decode = what in DECODE
    head = [
        *axes,
        "simulated (us)",
        *(["tokens/s", "TTFT (us)"] if decode else []),
        "launches",
        "plan",
        "compile",
        "top kernels",
    ]
    rows = []
    for p in points:
        cells = [str(p["config"][a]) for a in axes]
        if "error" in p:
            rows.append([*cells, "-", *(["-", "-"] if decode else []), "-", "-", "-", p["error"]])
            continue
        rows.append(
            [
                *cells,
                f"{p['simulated_s'] * 1e6:.2f}",
                *([f"{p['tokens_per_s']:.1f}", f"{p['ttft_s'] * 1e6:.2f}"] if decode else []),
                str(p["launches"]),
                p["plan"],
                p["compile"],
                "; ".join(p.get("kernels", [])),
            ]
        )
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(head[:-1])]
    fmt = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[-1]  # noqa: E731
    return "\n".join([fmt(head), fmt(["-" * w for w in widths] + ["-" * 11]), *map(fmt, rows)])


def figure(what: str, axes: Sequence[str], points: list[dict[str, Any]]) -> Any:
    """Latency (for a decode step: tokens/s, and below it the prefill's TTFT) against each
    axis; with two axes, a Pareto front."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    ok = [p for p in points if "simulated_s" in p]
    decode = what in DECODE
    ys = [p["tokens_per_s"] if decode else p["simulated_s"] * 1e6 for p in ok]
    metrics = [(ys, "tokens/s" if decode else "simulated time (us)")]
    if decode:
        metrics.append(([p["ttft_s"] * 1e6 for p in ok], "TTFT, simulated (us)"))
    cols = len(axes) + (1 if len(axes) == 2 else 0)
    titles = [f"by {a}" for a in axes] + (["Pareto front"] if len(axes) == 2 else [])
    titles += [f"prefill by {a}" for a in axes] + ([""] if len(axes) == 2 else []) if decode else []
    fig = make_subplots(rows=len(metrics), cols=cols, subplot_titles=titles)
    for r, (values, ylabel) in enumerate(metrics, start=1):
        for c, axis in enumerate(axes, start=1):
            others = [a for a in axes if a != axis]
            groups: dict[tuple, list[int]] = {}
            for i, p in enumerate(ok):
                groups.setdefault(tuple(p["config"][a] for a in others), []).append(i)
            for key, idx in groups.items():
                idx.sort(key=lambda i: ok[i]["config"][axis])
                label = ", ".join(f"{a}={v}" for a, v in zip(others, key)) or axis
                fig.add_trace(
                    go.Scatter(
                        x=[ok[i]["config"][axis] for i in idx],
                        y=[values[i] for i in idx],
                        mode="lines+markers",
                        name=label,
                        legendgroup=label,
                        showlegend=c == 1 and r == 1,
                    ),
                    r,
                    c,
                )
            fig.update_xaxes(title_text=axis, type="log" if _spread(ok, axis) else "linear", row=r, col=c)
            fig.update_yaxes(title_text=ylabel, row=r, col=c)
    if len(axes) == 2:
        front = pareto(ok, axes)
        a, b = axes
        fig.add_trace(
            go.Scatter(
                x=[p["config"][a] for p in ok],
                y=[p["config"][b] for p in ok],
                mode="markers+text",
                text=[f"{y:.3g}" for y in ys],
                textposition="top center",
                marker={"size": 10, "color": ys, "colorscale": "Viridis", "showscale": True},
                name="points",
                showlegend=False,
            ),
            1,
            cols,
        )
        fig.add_trace(
            go.Scatter(
                x=[ok[i]["config"][a] for i in front],
                y=[ok[i]["config"][b] for i in front],
                mode="markers",
                marker={"size": 18, "symbol": "circle-open", "color": "#c00", "line": {"width": 2}},
                name="Pareto front (no point has less of both and less time)",
            ),
            1,
            cols,
        )
        fig.update_xaxes(title_text=a, type="log" if _spread(ok, a) else "linear", row=1, col=cols)
        fig.update_yaxes(title_text=b, type="log" if _spread(ok, b) else "linear", row=1, col=cols)
    fig.update_layout(
        title=f"spyre-sweep {what}",
        height=520 * len(metrics),
        legend={"orientation": "h", "yanchor": "top", "y": -0.2 / len(metrics)},
    )
    return fig


def _spread(points: list[dict[str, Any]], axis: str) -> bool:
    values = [float(p["config"][axis]) for p in points]
    return bool(values) and min(values) > 0 and max(values) / min(values) >= 8


def write_plot(fig: Any, path: str | Path) -> Path:
    """The figure as one HTML file with plotly.js inlined (opens offline)."""
    path = Path(path)
    fig.write_html(str(path), include_plotlyjs=True, full_html=True)
    return path


def as_json(what: str, axes: dict[str, list[Any]], points: list[dict[str, Any]], wall_s: float) -> str:
    return json.dumps(
        {"what": what, "axes": axes, "points": points, "wall_s": wall_s},
        indent=2,
        default=lambda x: x if not isinstance(x, float) or math.isfinite(x) else None,
    )
