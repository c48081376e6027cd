"""Test-only helpers: a graph compiled the way the spyre backend compiles it, with what the
property tests look at; a function as a module; sentence embeddings by mean pooling. The pass criteria and the reference the tests share with the benches
are in spyre_mlir.testing.criteria."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from spyre_mlir.sim.numerics import DL16_MAX


@dataclass
class Captured:
    """A graph compiled the way the spyre backend compiles it, with what the tests look at."""

    fn: Any
    """The aot_autograd-compiled callable (Dynamo graph inputs -> outputs): later value draws
    call it directly, skipping Dynamo."""
    order: list[int]
    """Which of the function's inputs each graph input is (Dynamo orders them by first use)."""
    module: Any
    """The torch-level module of the graph, for the reference."""
    ctx: Any
    report: Any | None
    """The graph's GraphReport (device fraction, CPU fallbacks); None when `device` is false or
    the whole graph fell back to the CPU."""


@functools.cache
def core_aten_decompositions() -> Any:
    """torch's core-ATen decomposition table, made once per test process: making it walks every
    registered operator (about a tenth of a second), which each compile would pay again."""
    from torch._decomp import core_aten_decompositions as table

    return table()


def compile_captured(fn: Any, inputs: list[torch.Tensor] | tuple[torch.Tensor, ...], device: bool = True) -> Captured:
    """Compile `fn` for these inputs as the backend does: Dynamo (static shapes, one graph),
    aot_autograd with core-ATen decompositions, then compile_graph (`device=False`: only the
    torch-level module, the graph run by torch). Fallback warnings are left to the report."""
    import warnings

    from torch._dynamo.backends.common import aot_autograd

    from spyre_mlir.frontend.backend import STATS, compile_graph
    from spyre_mlir.frontend.fx_importer import import_fx_graph
    from spyre_mlir.target.config import DeviceConfig

    captured: dict[str, Any] = {}

    def fw(gm: torch.fx.GraphModule, example_inputs: Any) -> Any:
        with torch._subclasses.fake_tensor.unset_fake_temporarily():
            captured["module"], info = import_fx_graph(gm)
        captured["ctx"] = info.ctx
        if not device:
            return gm.forward
        before = len(STATS.graphs)
        run = compile_graph(gm, example_inputs, DeviceConfig())
        captured["report"] = STATS.graphs[-1] if len(STATS.graphs) == before + 1 else None
        return run

    def backend(gm: torch.fx.GraphModule, example_inputs: Any) -> Any:
        captured["order"] = [next(i for i, x in enumerate(inputs) if x is e) for e in example_inputs]
        captured["fn"] = aot_autograd(fw_compiler=fw, decompositions=core_aten_decompositions())(gm, example_inputs)
        return captured["fn"]

    torch._dynamo.reset()
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.compile(fn, backend=backend, dynamic=False, fullgraph=True)(*inputs)
    torch._dynamo.reset()
    return Captured(captured["fn"], captured["order"], captured["module"], captured["ctx"], captured.get("report"))


def assert_generated_doc_current(doc: Path, expected: str, command: str) -> None:
    """A generated doc (docs/ops.md, docs/passes.md) equals what its generator prints; else the
    first differing line and the command that regenerates it."""
    actual = doc.read_text() if doc.exists() else ""
    if actual != expected:
        old, new = actual.splitlines(), expected.splitlines()
        first = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))
        raise AssertionError(
            f"docs/{doc.name} is stale (first difference at line {first + 1}:\n"
            f"  file:      {old[first] if first < len(old) else '<end of file>'}\n"
            f"  generated: {new[first] if first < len(new) else '<end of output>'})\n"
            f"regenerate it from the repository root with:\n    {command}"
        )


class Fn(torch.nn.Module):
    """A function as a module (what torch.compile and the reference take)."""

    def __init__(self, fn: Any):
        super().__init__()
        self.fn = fn

    def forward(self, *xs: Any) -> Any:
        return self.fn(*xs)


def compiled_within_bound(fn: Any, *inputs: Any, **options: Any) -> tuple[Any, Any]:
    """One call of `fn` compiled for the spyre backend (options passed on), checked against the
    exact answer within the DL16 bound that reference/evaluate.py propagates: (its output, the
    graph's placement report)."""
    from spyre_mlir.frontend.backend import STATS
    from spyre_mlir.sim.numerics import DL16
    from spyre_mlir.testing.criteria import assert_within_device_bound, reference

    torch._dynamo.reset()
    model = Fn(fn)
    (exact,), (bound,) = reference(model, *inputs, numerics=DL16)
    before = len(STATS.graphs)
    with torch.no_grad():
        y = torch.compile(model, backend="spyre", options=options)(*inputs)
    assert_within_device_bound(y, exact, bound, DL16)
    return y, STATS.graphs[before]


def seeded_randn(*shape: int, seed: int = 0, scale: float = 1.0) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)) * scale


def embed(model: Any, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """Sentence embeddings as sentence-transformers makes them for MiniLM: mean pooling over
    the attention mask, then L2 normalisation."""
    hidden = model(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
    return torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9), p=2, dim=1)


def tiny_llama(**config: Any) -> torch.nn.Module:
    """A 2-layer Llama (hidden 256, 4 heads of 64, 2 KV heads, vocab 256), seeded; `config`
    adds or overrides LlamaConfig fields."""
    import transformers

    base = dict(
        vocab_size=256,
        hidden_size=256,
        intermediate_size=512,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=128,
    )
    torch.manual_seed(0)
    return transformers.LlamaForCausalLM(transformers.LlamaConfig(**(base | config))).eval()


def check(fn: Any, *inputs: torch.Tensor, device_only: bool = True) -> None:
    """`fn` compiled within the DL16 bound (compiled_within_bound), and with no op on the CPU
    unless `device_only` is False."""
    _, report = compiled_within_bound(fn, *inputs)
    if device_only:
        assert not report.cpu_fallback, f"ran on the CPU: {dict(report.cpu_fallback)}"


def cast_through(v: np.ndarray, dtype: torch.dtype) -> np.ndarray:
    """float64 values through `dtype` and back (what a result of that dtype can hold)."""
    return torch.from_numpy(np.ascontiguousarray(v, dtype=np.float64)).to(dtype).to(torch.float64).numpy()


def assert_device_result(y: torch.Tensor, exact: np.ndarray, bound: np.ndarray, what: str) -> float:
    """The differential tests' criterion for one output (lowering/test_differential.py's docstring); returns max |y - exact| / max |exact|
    over the finite elements (0 when there are none), to see DL16 rounding."""
    exact = np.asarray(exact, dtype=np.float64)
    y64 = y.detach().to(torch.float64).numpy()
    assert y64.shape == exact.shape, f"{what}: shape {y64.shape}, expected {exact.shape}"
    nan = np.isnan(exact)
    bad = np.isnan(y64) != nan
    if bad.any():
        i = tuple(int(k) for k in np.argwhere(bad)[0])
        raise AssertionError(f"{what}: at {i} the device gives {y64[i]!r}, exact {exact[i]!r} (NaN must match NaN)")
    with np.errstate(invalid="ignore"):
        inf = np.isinf(exact)
        lo = np.where(inf, exact, exact - bound)
        hi = np.where(inf, exact, exact + bound)
    assert not np.isnan(lo[~nan]).any(), f"{what}: the reference bound is NaN where the exact answer is not"
    lo = cast_through(np.clip(lo, -DL16_MAX, DL16_MAX), y.dtype)
    hi = cast_through(np.clip(hi, -DL16_MAX, DL16_MAX), y.dtype)
    ok = nan | ((lo <= y64) & (y64 <= hi))
    if not ok.all():
        i = tuple(int(k) for k in np.argwhere(~ok)[0])
        raise AssertionError(
            f"{what}: at {i} the device gives {y64[i]!r}, outside [{lo[i]!r}, {hi[i]!r}] "
            f"(exact {exact[i]!r}, bound {bound[i]!r}, {int((~ok).sum())} element(s) outside)"
        )
    fin = np.isfinite(exact) & (np.abs(exact) < DL16_MAX) & np.isfinite(y64)
    if not fin.any():
        return 0.0
    scale = np.abs(exact[fin]).max()
    return float(np.abs(y64[fin] - exact[fin]).max() / scale) if scale > 0 else 0.0
