"""The host runtime on the simulated timeline: IBM's Granite 3.3 8B runtime result beside the
model's (docs/hardware.md, "The host runtime"; docs/llm.md).

    python bench/runtime.py                      # a table
    python bench/runtime.py --json               # one JSON object
    python bench/runtime.py --save calls.json    # also keep the measured calls (each run as it
                                                 # ends; an existing file's runs are not run again)
    python bench/runtime.py --load calls.json    # the figures from kept calls (no device model run);
                                                 # with --config k=v, for another host runtime
    python bench/runtime.py --worker granite 1024 1 1   # one measurement alone (tokens, batch, layers)

IBM reports that its runtime patches each program at launch (a host computation, the patched
program over the link, then the compute), and that on Granite 3.3 8B at batch 1 and sequence
length 1024, moving graph construction off the data-transfer path made prefill 9.9% and decode
13.6% faster, and taking it off compute dispatch as well made them 1.7x and 2.4x faster in all,
about three quarters of the gain from the compute path. Here the same model runs on the device
model and its calls are timed in each runtime mode (sim/host_timeline.py):

    eager-patching    everything at launch, in order (IBM's starting point)
    transfers-ahead   graph construction off the data-transfer path
    patched-once      off the compute path too, programs patched once and reused

    gain off the transfer path  = eager-patching / transfers-ahead - 1      (IBM: 0.099, 0.136)
    speed-up in all             = eager-patching / patched-once             (IBM: 1.7, 2.4)
    compute path's share        = (transfers-ahead - patched-once) / (eager-patching - patched-once)
                                  (IBM: about 0.75; `compute_path_share_of_gain` is the mean of
                                  the two phases)

What is measured. The Granite-3.3-8B-shaped model (hidden 4096, 32 heads, 8 KV heads, FFN
12800, random weights, a vocabulary of 256) runs one layer through
`torch.compile(model.forward, backend="spyre")` and HF's `generate` (static cache): the prefill
of a 1024-token prompt and a steady decode step (the third, at position 1026), each a warm
call. Its 40-layer call is composed from that call: the layer's steps 40 times, the call's once
(the embedding, values the call computes once, the final norm and the LM head, the inputs and
results), with the toy LM head's launch replaced by the launches of Granite's LM head (4096 x
49159, one row per sequence, compiled alone). Which steps are the layer's is told by the same
model's 1- and 2-layer calls at a 64-token prompt (`PROBE_TOKENS`): the steps the second layer
adds, matched to the 1-layer call's, whose structure must be the measured call's
(`fingerprint`). Each launch keeps its simulated kernel time, its program's instructions and
addresses, and its tensor arguments. SmolLM2-135M (real weights, 30 layers, prompt 1024, run
whole) and a Granite decode at batch 8 (prompt 64, 1 layer, its layer told by the same probe)
are the checks: the host runtime's parameters are fitted on Granite at batch 1 alone (`fit`),
and these two are predicted with the same parameters.

The fit. graph_kernel_s, graph_tensor_s and patch_address_s are the host runtime's per-node
and per-address costs (no public figure); each call's time in each mode is linear in them, so
the four published ratios give four linear equations (eager-patching = speed-up x
patched-once; eager-patching - transfers-ahead = gain / (1 + gain) x eager-patching), solved
by non-negative least squares, each equation relative to its call's time. `instruction_bytes`
(the program bytes per instruction) is an assumption, not fitted. The defaults in
`DeviceConfig` are the fit's values, rounded.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import itertools
import json
import os
import subprocess
import sys
import textwrap
import warnings
from collections import Counter
from typing import Any

os.environ.setdefault("SPYRE_CACHE", "0")  # compiles are counted, not loaded
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np

from spyre_mlir.sim.host_timeline import HostOp, Launch, Step, Transfer, schedule
from spyre_mlir.target.config import RUNTIME_MODES, DeviceConfig

GRANITE = dict(hidden_size=4096, num_attention_heads=32, num_key_value_heads=8, intermediate_size=12800)
PROBE_TOKENS = 64
"""The prompt of the 1- and 2-layer runs that tell a layer's launches from the call's."""
GRANITE_LAYERS, GRANITE_VOCAB, TOY_VOCAB = 40, 49159, 256
EAGER, AHEAD, ONCE = RUNTIME_MODES

IBM = {
    "prefill_gain_off_transfer_path": 0.099,
    "decode_gain_off_transfer_path": 0.136,
    "prefill_speedup_total": 1.7,
    "decode_speedup_total": 2.4,
    "compute_path_share_of_gain": 0.75,
}
"""IBM's Granite 3.3 8B runtime figures, batch 1, sequence length 1024 (DESIGN.md section 16)."""

FITTED = ("graph_kernel_s", "graph_tensor_s", "patch_address_s")


# region Measurement (workers, each in its own process)


def _steps_json(calls: list[Any], kernels: list[Any]) -> list[list[Any]]:
    """One forward's calls as one list of steps (JSON): launches with their kernel's MACs and
    DDR bytes (to tell the layers apart), transfers, CPU ops."""
    out: list[list[Any]] = []
    for call in calls:
        records = iter(k for k in kernels if k.call == call.number)
        for s in call.steps:
            if isinstance(s, Launch):
                k = next(records)
                out.append(["L", *dataclasses.astuple(s), k.macs, k.ddr_bytes])
            elif isinstance(s, Transfer):
                out.append(["T", *dataclasses.astuple(s)])
            else:
                out.append(["H", s.seconds])
    return out


def generate_calls(model: Any, ids: Any, new_tokens: int = 4) -> dict[str, Any]:
    """A warm `generate` (compiles, uploads, patches), then a measured one: its prefill call's
    steps and its last decode call's (a steady step: the first decode call receives the KV cache
    the prefill graph made)."""
    import torch

    import spyre_mlir

    compiled = torch.compile(model.forward, backend="spyre")
    marks: list[tuple[int, int]] = []
    active: list[Any] = []

    def forward(*args: Any, **kwargs: Any) -> Any:
        prof = active[0] if active else None
        first = len(prof.calls) if prof is not None else 0
        out = compiled(*args, **kwargs)
        if prof is not None:
            marks.append((first, len(prof.calls)))
        return out

    forward.__signature__ = inspect.signature(model.forward)  # type: ignore[attr-defined]  # (as bench/llm.py's Recorder)
    model.forward = forward
    with torch.no_grad():
        model.generate(ids, max_new_tokens=new_tokens, do_sample=False, cache_implementation="static")
        with spyre_mlir.profile() as prof:
            active.append(prof)
            model.generate(ids, max_new_tokens=new_tokens, do_sample=False, cache_implementation="static")
    kernels = list(prof.kernels)
    calls = [prof.calls[a:b] for a, b in marks]
    return {
        "prompt_tokens": int(ids.shape[1]),
        "batch": int(ids.shape[0]),
        "prefill": _steps_json(calls[0], kernels),
        "decode": _steps_json(calls[-1], kernels),
    }


def granite(tokens: int, batch: int, layers: int) -> dict[str, Any]:
    """The Granite-shaped model with `layers` layers and a toy vocabulary (module docstring)."""
    import torch
    from transformers import GraniteConfig, GraniteForCausalLM

    warnings.filterwarnings("ignore")
    cfg = GraniteConfig(num_hidden_layers=layers, vocab_size=TOY_VOCAB, max_position_embeddings=4096, **GRANITE)
    torch.manual_seed(0)
    model = GraniteForCausalLM(cfg).eval()
    ids = torch.randint(0, TOY_VOCAB, (batch, tokens))
    return generate_calls(model, ids)


def lm_head(rows: int) -> dict[str, Any]:
    """Granite's LM head (4096 -> 49159) alone on `rows` rows: a warm call's launches."""
    import torch

    import spyre_mlir

    torch.manual_seed(0)
    head = torch.nn.Linear(GRANITE["hidden_size"], GRANITE_VOCAB, bias=False).eval()
    fn = torch.compile(head, backend="spyre")
    x = torch.randn(rows, 1, GRANITE["hidden_size"])
    with torch.no_grad():
        fn(x)
        with spyre_mlir.profile() as prof:
            fn(x)
    steps = _steps_json(list(prof.calls), list(prof.kernels))
    return {"launches": [s for s in steps if s[0] == "L"]}


def smollm2(tokens: int) -> dict[str, Any]:
    """SmolLM2-135M-Instruct with its real weights (bench/llm.py's), a `tokens` prompt."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from llm import GGUF, PROMPT, smollm2_dir

    warnings.filterwarnings("ignore")
    d = smollm2_dir()
    tok = AutoTokenizer.from_pretrained(d, gguf_file=GGUF)
    model = AutoModelForCausalLM.from_pretrained(d, gguf_file=GGUF, dtype=torch.float32).eval()
    ids = tok(" ".join([PROMPT] * (tokens // 8)), return_tensors="pt").input_ids[:, :tokens]
    return generate_calls(model, ids)


WORKERS = {"granite": granite, "lm_head": lm_head, "smollm2": smollm2}


def _worker(name: str, *args: str) -> None:
    print(json.dumps(WORKERS[name](*map(int, args))))


def _run(name: str, *args: Any) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--worker", name, *map(str, args)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"bench/runtime.py: worker {name} failed:\n{done.stderr[-4000:]}")
    print(f"bench/runtime.py: {name} {' '.join(map(str, args))} measured", file=sys.stderr, flush=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


MEASUREMENTS: dict[str, tuple[Any, ...]] = {
    "granite_probe_1": ("granite", PROBE_TOKENS, 1, 1),
    "granite_probe_2": ("granite", PROBE_TOKENS, 1, 2),
    "lm_head": ("lm_head", 1),
    "granite": ("granite", 1024, 1, 1),
    "granite_batch8": ("granite", PROBE_TOKENS, 8, 1),
    "lm_head_batch8": ("lm_head", 8),
    "smollm2": ("smollm2", 1024),
}
"""The device model's runs (module docstring): each a worker's arguments."""


def measure(kept: dict[str, Any] | None = None, save: str | None = None) -> dict[str, Any]:
    """The device model's runs: every call's steps. `kept`: runs measured before (not run
    again); `save`: a file that keeps the runs as each ends (a run cut short resumes from it)."""
    out = dict(kept or {})
    for key, (name, *args) in MEASUREMENTS.items():
        if key not in out:
            out[key] = _run(name, *args)
            if save:
                with open(save, "w") as f:
                    json.dump(out, f)
    return out


# endregion


# region The host runtime's figures (from the measured calls)

HOST_FIELDS = FITTED + ("instruction_bytes", "host_link_bytes_per_s", "host_link_latency_s")
"""The parameters the host runtime's schedule reads that `--config` may change for kept calls
(the kernels' own times are the measured device's)."""


def parse(steps: list[list[Any]]) -> tuple[list[Step], list[tuple[Any, ...]]]:
    """Steps from JSON, and a signature of each (launches by their program's shape, MACs and
    DDR bytes; transfers by their bytes) to tell the layers apart."""
    out: list[Step] = []
    sigs: list[tuple[Any, ...]] = []
    for s in steps:
        if s[0] == "L":
            launch = Launch(*s[1:9])
            out.append(launch)
            sigs.append(("L", launch.arguments, launch.addresses, launch.instructions, s[9], s[10]))
        elif s[0] == "T":
            out.append(Transfer(*s[1:4]))
            sigs.append(("T", *s[1:4]))
        else:
            out.append(HostOp(s[1]))
            sigs.append(("H",))
    return out, sigs


def layer_steps(one: list[list[Any]], two: list[list[Any]]) -> list[bool]:
    """Which steps of a 1-layer call are its layer's, from the same model's 1- and 2-layer
    calls: the 2-layer call holds each of them once more. The steps the second layer adds
    (the 2-layer call's, less the 1-layer call's, as multisets of their signatures) are matched
    to the 1-layer call's in order; the others (the embedding, values the call computes once,
    the final norm, the LM head, its transfers) are the call's."""
    extra = Counter(parse(two)[1]) - Counter(parse(one)[1])
    flags = []
    for sig in parse(one)[1]:
        flags.append(extra[sig] > 0)
        extra[sig] -= flags[-1]
    return flags


def fingerprint(steps: list[list[Any]]) -> list[tuple[Any, ...]]:
    """A call's structure, whatever the model's size: each launch's tensor arguments and
    whether it multiplies, each transfer's kind and direction."""
    return [("L", s[4], s[9] > 0) if s[0] == "L" else (s[0], *s[2:4]) if s[0] == "T" else ("H",) for s in steps]


def compose(
    measured: list[list[Any]],
    probe: list[list[list[Any]]],
    layers: int,
    head: list[list[Any]] | None = None,
    toy_head_macs: int = 0,
) -> list[Step]:
    """The `layers`-layer call from a 1-layer one: its layer's steps `layers` times, the call's
    once. `probe`: the 1- and 2-layer calls of the model at a shorter prompt (or the model's
    own), which tell the layer's steps from the call's (`layer_steps`); its 1-layer call must
    have `measured`'s structure (`fingerprint`). With `head`, the launch with
    `toy_head_macs` MACs (the toy LM head) is replaced by `head`'s launches (module docstring).
    A repeated launch is the card's to start (the launch before it is the previous layer's)."""
    if fingerprint(probe[0]) != fingerprint(measured):
        raise SystemExit("bench/runtime.py: the probe's 1-layer call has another structure than the model's")
    dispatch = DeviceConfig().dispatch_overhead_s
    steps, sigs = parse(measured)
    out: list[Step] = []
    for step, sig, layer in zip(steps, sigs, layer_steps(*probe)):
        if head is not None and isinstance(step, Launch) and sig[4] == toy_head_macs and not layer:
            out += [  # (in the toy head's place in its launch sequence)
                dataclasses.replace(s, host_started=step.host_started, overhead_s=step.overhead_s) if j == 0 else s
                for j, s in enumerate(parse(head)[0])
            ]
            continue
        out.append(step)
        if layer:
            again = (
                dataclasses.replace(step, host_started=False, overhead_s=dispatch) if isinstance(step, Launch) else step
            )
            out += [again] * (layers - 1)
    return out


def granite_call(m: dict[str, Any], probe: list[dict[str, Any]], name: str, head: dict[str, Any]) -> list[Step]:
    """The 40-layer Granite call of phase `name` (module docstring)."""
    toy_macs = m["batch"] * GRANITE["hidden_size"] * TOY_VOCAB  # one row per sequence (logits_to_keep=1)
    return compose(m[name], [p[name] for p in probe], GRANITE_LAYERS, head["launches"], toy_macs)


def breakdown(steps: list[Step], config: DeviceConfig, mode: str) -> dict[str, float]:
    tl = schedule(steps, config, mode)
    return {
        "total_s": tl.total_s,
        "kernels_s": tl.kernels_s,
        "dispatch_s": tl.dispatch_s,
        "host_runtime_s": tl.runtime_s,
        "link_s": tl.link_s,
        "host_ops_s": tl.host_ops_s,
        "host_runtime_share": tl.runtime_share,
    }


def ratios(steps: list[Step], config: DeviceConfig) -> dict[str, float]:
    """The figures IBM published, for one phase."""
    e, x, o = (schedule(steps, config, m).total_s for m in RUNTIME_MODES)
    return {
        "gain_off_transfer_path": e / x - 1,
        "speedup_total": e / o,
        "compute_path_share_of_gain": (x - o) / (e - o) if e > o else 0.0,
    }


def phase(steps: list[Step], config: DeviceConfig) -> dict[str, Any]:
    return {
        "launches": sum(isinstance(s, Launch) for s in steps),
        **ratios(steps, config),
        "modes": {m: breakdown(steps, config, m) for m in RUNTIME_MODES},
    }


def _totals(steps: list[Step], config: DeviceConfig, theta: np.ndarray) -> np.ndarray:
    """The call's time in each mode with the fitted parameters set to `theta`."""
    cfg = config.replace(**dict(zip(FITTED, map(float, theta))))
    return np.array([schedule(steps, cfg, m).total_s for m in RUNTIME_MODES])


def fit(phases: dict[str, list[Step]], config: DeviceConfig, targets: dict[str, float] = IBM) -> dict[str, float]:
    """graph_kernel_s, graph_tensor_s and patch_address_s fitted to the ratios `targets` gives
    for the phases given (IBM's: module docstring): non-negative least squares, each equation
    relative to its call's time."""
    rows, rhs = [], []
    for name, steps in phases.items():
        s, r = targets[f"{name}_speedup_total"], targets[f"{name}_gain_off_transfer_path"]

        base = _totals(steps, config, np.zeros(3))
        step = 1e-6
        cols = np.stack([(_totals(steps, config, step * np.eye(3)[j]) - base) / step for j in range(3)], axis=1)
        scale = s * base[2]
        # eager = s * once;  eager / (1 + r) = ahead   (each linear in theta: base + cols @ theta)
        rows += [(cols[0] - s * cols[2]) / scale, (cols[0] / (1 + r) - cols[1]) / scale]
        rhs += [-(base[0] - s * base[2]) / scale, -(base[0] / (1 + r) - base[1]) / scale]
    a, b = np.array(rows), np.array(rhs)
    best: tuple[float, np.ndarray] | None = None
    for k in range(1, 4):  # non-negative least squares over three unknowns: every set of free ones
        for free in itertools.combinations(range(3), k):
            theta = np.zeros(3)
            theta[list(free)] = np.linalg.lstsq(a[:, list(free)], b, rcond=None)[0]
            if (theta >= 0).all():
                res = float(np.linalg.norm(a @ theta - b))
                if best is None or res < best[0]:
                    best = (res, theta)
    assert best is not None
    return dict(zip(FITTED, map(float, best[1])))


def implied_prefill_over_decode(f: dict[str, float]) -> float:
    """The prefill's time over a decode step's once the runtime is optimised, as published
    ratios imply it if building the tensor nodes costs the same in both phases: that cost is
    gain / (1 + gain) x speed-up x the optimised time in each."""

    def share(name: str) -> float:
        g = f[f"{name}_gain_off_transfer_path"]
        return g / (1 + g) * f[f"{name}_speedup_total"]

    return share("decode") / share("prefill")


def prefill_over_decode_bound(config: DeviceConfig, tokens: int = 1024) -> dict[str, float]:
    """The least Granite's prefill of `tokens` can take over a decode step on the card, from its
    rates: its layers' weights multiplied by every token at the PT peak (with every corelet, and
    with the corelets the compiler drives), against a step reading every weight (the LM head's
    too) in DL16 at the DDR's rate."""
    h, ff = GRANITE["hidden_size"], GRANITE["intermediate_size"]
    kv = GRANITE["num_key_value_heads"] * h // GRANITE["num_attention_heads"]
    weights = GRANITE_LAYERS * (2 * h * h + 2 * h * kv + 3 * h * ff)
    decode_s = 2 * (weights + h * GRANITE_VOCAB) / config.ddr_bytes_per_s
    prefill_s = weights * tokens / (config.pt_peak_macs_per_s * config.cores)
    return {
        "every_corelet": prefill_s / decode_s,
        "corelets_used": prefill_s * config.corelets_per_core / config.corelets_used / decode_s,
    }


def figures(m: dict[str, Any], config: DeviceConfig) -> dict[str, Any]:
    probe = [m["granite_probe_1"], m["granite_probe_2"]]
    g = {name: granite_call(m["granite"], probe, name, m["lm_head"]) for name in ("prefill", "decode")}
    out: dict[str, Any] = {}
    phases = {name: phase(steps, config) for name, steps in g.items()}
    for name, p in phases.items():
        out[f"{name}_gain_off_transfer_path"] = round(p["gain_off_transfer_path"], 4)
        out[f"{name}_speedup_total"] = round(p["speedup_total"], 4)
    out["compute_path_share_of_gain"] = round(
        (phases["prefill"]["compute_path_share_of_gain"] + phases["decode"]["compute_path_share_of_gain"]) / 2, 4
    )
    out["ibm"] = IBM
    out["granite_3_3_8b"] = phases
    fitted = fit(g, config)
    refit = config.replace(**fitted)
    out["fit"] = {
        "parameters": fitted,
        "figures": {name: ratios(steps, refit) for name, steps in g.items()},
    }
    out["parameters"] = {f: getattr(config, f) for f in HOST_FIELDS}
    out["within_25_percent"] = {k: abs(out[k] / IBM[k] - 1) <= 0.25 for k in IBM}
    once = {name: p["modes"][ONCE]["total_s"] for name, p in phases.items()}
    implied = implied_prefill_over_decode(IBM)
    bound = prefill_over_decode_bound(config)
    out["prefill_over_decode"] = {
        "model": once["prefill"] / once["decode"],
        "ibm_implied": implied,
        "card_bound": bound,
    }
    out["note"] = (
        "A prefill builds nearly as many tensor nodes as a decode step (the same launches with the same "
        "arguments), so one per-node cost gives the two phases gains off the transfer path in inverse "
        f"proportion to their times. IBM's four figures imply a prefill {implied:.2f}x a decode step once the "
        "runtime is optimised (were its tensor nodes' cost the same in both phases); the card's rates put a "
        f"1024-token prefill at least {bound['every_corelet']:.2f}x a decode step (the weights at the PT peak "
        f"against the weights read at the DDR's rate; {bound['corelets_used']:.2f}x with the corelets the compiler "
        f"drives), and the model's is {once['prefill'] / once['decode']:.2f}x. So the per-node cost that gives "
        "decode's gain gives prefill a smaller one: on IBM's runtime a prefill carries more graph construction "
        "than a decode step. The speed-ups in all are fitted (graph_kernel_s, patch_address_s)."
    )
    checks = {
        "smollm2_135m": {name: phase(parse(m["smollm2"][name])[0], config) for name in ("prefill", "decode")},
        "granite_decode_batch8": phase(granite_call(m["granite_batch8"], probe, "decode", m["lm_head_batch8"]), config),
    }
    out["checks"] = checks
    return out


def table(r: dict[str, Any]) -> str:
    lines = [
        f"{'Granite 3.3 8B, batch 1, 1024 tokens':<40}{'total ms':>10}{'kernels':>10}{'dispatch':>10}{'runtime':>10}{'link':>10}"
    ]
    for name in ("prefill", "decode"):
        p = r["granite_3_3_8b"][name]
        for mode in RUNTIME_MODES:
            b = p["modes"][mode]
            lines.append(
                f"  {name + ' (' + str(p['launches']) + ' launches) ' + mode:<38}{b['total_s'] * 1e3:>10.2f}{b['kernels_s'] * 1e3:>10.2f}"
                f"{b['dispatch_s'] * 1e3:>10.2f}{b['host_runtime_s'] * 1e3:>10.2f}{b['link_s'] * 1e3:>10.2f}"
            )
    lines.append(f"{'':<40}{'model':>10}{'IBM':>10}  within 25%")
    for key, ibm in r["ibm"].items():
        lines.append(f"  {key:<38}{r[key]:>10.3f}{ibm:>10.3f}  {'yes' if r['within_25_percent'][key] else 'no'}")
    lines.append("checks (predicted with the same parameters)")
    c = r["checks"]
    for name in ("prefill", "decode"):
        p = c["smollm2_135m"][name]
        lines.append(
            f"  SmolLM2-135M {name:<25}gain off transfers {p['gain_off_transfer_path']:.3f}, speed-up {p['speedup_total']:.2f}, "
            f"compute path {p['compute_path_share_of_gain']:.2f}"
        )
    p = c["granite_decode_batch8"]
    lines.append(
        f"  Granite decode, batch 8{'':<15}gain off transfers {p['gain_off_transfer_path']:.3f}, speed-up {p['speedup_total']:.2f}, "
        f"compute path {p['compute_path_share_of_gain']:.2f}"
    )
    lines.append("fit on Granite (batch 1): " + ", ".join(f"{k} {v:.3g}" for k, v in r["fit"]["parameters"].items()))
    lines.append(
        f"prefill / decode step, patched-once: model {r['prefill_over_decode']['model']:.2f}, "
        f"implied by IBM's figures {r['prefill_over_decode']['ibm_implied']:.2f}, "
        f"the card's least {r['prefill_over_decode']['card_bound']['every_corelet']:.2f}"
    )
    lines.append(textwrap.fill(r["note"], 100))
    return "\n".join(lines)


# endregion


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    ap.add_argument("--save", metavar="FILE", help="keep the measured calls in FILE (resumes from the runs it holds)")
    ap.add_argument("--load", metavar="FILE", help="the figures from calls kept by --save (no device model run)")
    ap.add_argument(
        "--config",
        action="append",
        metavar="K=V",
        help=f"another host runtime for the figures: {', '.join(HOST_FIELDS)}",
    )
    ap.add_argument(
        "--worker",
        nargs="+",
        metavar="ARG",
        help="one measurement alone: granite TOKENS BATCH LAYERS | lm_head ROWS | smollm2 TOKENS",
    )
    args = ap.parse_args(argv)
    if args.worker:
        _worker(*args.worker)
        return 0
    bad = [kv for kv in args.config or [] if kv.partition("=")[0] not in HOST_FIELDS]
    if bad:
        ap.error(
            f"--config {bad[0]}: the figures may change the host runtime's parameters only ({', '.join(HOST_FIELDS)})"
        )
    config = DeviceConfig.from_overrides(args.config)
    if args.load:
        with open(args.load) as f:
            measured = json.load(f)
        missing = [key for key in MEASUREMENTS if key not in measured]
        if missing:
            ap.error(f"--load {args.load}: runs missing ({', '.join(missing)}): resume them with --save {args.load}")
    else:
        kept: dict[str, Any] = {}
        if args.save and os.path.exists(args.save):
            with open(args.save) as f:
                kept = json.load(f)
        measured = measure(kept, args.save)
    r = figures(measured, config)
    print(json.dumps(r, indent=1) if args.json else table(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
