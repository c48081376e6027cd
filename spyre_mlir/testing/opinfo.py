"""PyTorch's OpInfo samples on the native "spyre" device, as PyTorch's `test_ops.py`
`test_compare_cpu` runs them for every backend.

For each float32 OpInfo of the wheel's `op_db` (gradient variants and ops whose result is
uninitialised memory left out: `selected_opinfos`), its first `SAMPLES_PER_OP` samples are made
on the device, and each is run there and on the CPU on the inputs as the card holds them (the
sample copied back: its float values DL16-rounded). `run_sample` classifies the outcome:

    on_device   right, and every op that reached the device's fallback ran on the device model
                (or on the host by design: integer work, item(), random numbers)
    fallback    right, some op ran on the CPU (the first one's reason is kept)
    refused     the device raised a typed refusal naming what it cannot hold (a float64 or
                complex tensor), as a user sees it
    left_out    the sample cannot be compared: a complex tensor in or out, or a CPU answer that
                changes with the RNG seed (random numbers)
    wrong       an answer outside its bound (below), a result off the device, a shape or dtype
                that differs from the CPU's
    crash       any other exception (the compiler's bugs among them), or no answer within
                SAMPLE_TIMEOUT_S

Right means, element by element, within the DL16 bound `reference.evaluate` derives
(docs/numerics.md, "Error bounds used by the tests") for the graph the device runs: the sample
traced with the backend's decompositions, imported to the torch dialect and evaluated in float64
on the inputs as the card holds them, the bound propagated op by op. Where that graph cannot be
evaluated (an op the importer cannot spell, a result that is not a tensor), the bound is that of
one store of the CPU's float32 answer (u|r| + tiny), which is exact for a sample that ran whole
on the CPU. Integer and boolean results must be equal. Where the exact answer lies beyond the
device format's range (inf included), the device's answer is the saturated one of its sign.
"""

from __future__ import annotations

import copy
import operator
import signal
import time
import traceback
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import torch
from torch.utils._pytree import tree_flatten, tree_map, tree_unflatten

from spyre_mlir.sim.numerics import Numerics

SAMPLES_PER_OP = 5
SAMPLE_TIMEOUT_S = 300.0
"""A sample with no answer by then counts as a hang (compiles of one op take seconds)."""

Kind = Literal["on_device", "fallback", "refused", "left_out", "wrong", "crash"]
KINDS: tuple[Kind, ...] = ("on_device", "fallback", "refused", "left_out", "wrong", "crash")
EXPECTABLE: tuple[Kind, ...] = ("on_device", "fallback", "refused", "left_out")
"""What an expectations file may state; wrong and crash always fail."""


@dataclass(frozen=True)
class Outcome:
    op: str
    """The OpInfo's full name (`div.floor_rounding`)."""
    sample: int
    kind: Kind
    reason: str = ""
    seconds: float = 0.0
    bound: str = ""
    """Why the answer was held to one store of the CPU's answer, not to the derived bound ("":
    the derived bound, or not compared)."""

    def __str__(self) -> str:
        return f"{self.op}[{self.sample}]: {self.kind}" + (f" ({self.reason})" if self.reason else "")


def selected_opinfos() -> list[Any]:
    """Every OpInfo of PyTorch's op_db that supports float32 on the CPU, but for gradient
    variants (`.grad`, `_backward` ops: they test derivatives) and ops whose result is
    uninitialised memory (`empty*`), in op_db's order."""
    from torch.testing._internal.common_methods_invocations import op_db

    return [
        op
        for op in op_db
        if torch.float32 in op.supported_dtypes("cpu")
        and not op.has_nondeterministic_output
        and not op.full_name.endswith(".grad")
        and "_backward" not in op.name
        and "grad_oriented" not in op.full_name
    ]


COMMON_OPS = frozenset(
    {
        *("add", "sub", "mul", "div.no_rounding_mode", "neg", "abs", "exp", "log", "log1p", "sqrt", "rsqrt"),
        *("reciprocal", "sigmoid", "tanh", "sin", "cos", "erf", "pow", "square", "clamp", "where", "maximum"),
        *("minimum", "sum", "mean", "amax", "amin", "argmax", "var", "softmax", "log_softmax", "cumsum"),
        *("nn.functional.relu", "nn.functional.gelu", "nn.functional.silu", "nn.functional.layer_norm"),
        *("nn.functional.rms_norm", "nn.functional.linear", "matmul", "mm", "bmm", "addmm", "baddbmm"),
        *("nn.functional.scaled_dot_product_attention", "nn.functional.embedding", "nn.functional.conv2d"),
        *("nn.functional.normalize", "nn.functional.soft_margin_loss", "cat", "stack", "transpose"),
        *("permute", "reshape", "view", "squeeze", "unsqueeze", "expand", "narrow", "select", "index_select"),
        *("masked_fill", "tril", "triu", "topk"),
    }
)
"""The common float ops of models: their samples run in `make test` (every op's in `make
test-full`), eager and compiled."""


def run_op(opinfo: Any, device: str, numerics: Numerics) -> list[Outcome]:
    """The outcome of each of the op's first SAMPLES_PER_OP samples."""
    from spyre_mlir.torch_device.storage import DeviceDtypeError

    outcomes = []
    for i, sample in device_samples(opinfo, device):
        if isinstance(sample, DeviceDtypeError):
            outcomes.append(Outcome(opinfo.full_name, i, "refused", _first_line(sample)))
        elif isinstance(sample, BaseException):
            why = f"making the sample: {type(sample).__name__}: {_first_line(sample)} [{_where(sample)}]"
            outcomes.append(Outcome(opinfo.full_name, i, "crash", why))
        else:
            outcomes.append(run_sample(opinfo, i, sample, numerics))
    return outcomes


def device_samples(opinfo: Any, device: str = "spyre") -> Iterator[tuple[int, Any | BaseException]]:
    """The op's first SAMPLES_PER_OP float32 samples made on `device` (seeded), or the
    exception making one raised (the samples after it are not made)."""
    torch.manual_seed(0)
    it = iter(opinfo.sample_inputs(device, torch.float32, requires_grad=False))
    for i in range(SAMPLES_PER_OP):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                sample = next(it)
        except StopIteration:
            return
        except Exception as e:  # the sample's making is the op's test input: its failure is an outcome
            yield i, e
            return
        yield i, sample


class SampleTimeout(BaseException):
    """No answer in time (a BaseException: no handler for the op's own errors catches it)."""


@contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    def expire(signum: int, frame: Any) -> None:
        raise SampleTimeout(f"no answer within {seconds:.0f} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _to_cpu(x: Any) -> Any:
    return x.detach().to("cpu") if isinstance(x, torch.Tensor) else x


def _with_its_storage(x: torch.Tensor) -> torch.Tensor:
    """A CPU copy of a device tensor with its whole storage, viewed as the tensor views it
    (a sample may be a view whose op reads elements of the storage outside it: as_strided)."""
    if x.device.type == "cpu" or x.layout != torch.strided:
        return x.to("cpu")
    n = x.untyped_storage().nbytes() // x.element_size()
    whole = torch.empty(0, dtype=x.dtype, device=x.device).set_(x.untyped_storage(), 0, (n,), (1,))
    return whole.to("cpu").as_strided(x.shape, x.stride(), x.storage_offset())


def _on_cpu(sample: Any) -> Any:
    """The sample on the CPU: its tensors copied (their values as the card holds them), and a
    device argument naming spyre (a factory op's) naming the CPU."""

    def leaf(x: Any) -> Any:
        if isinstance(x, torch.Tensor):
            return _with_its_storage(x.detach())
        if isinstance(x, torch.device) and x.type != "cpu":
            return torch.device("cpu")
        if isinstance(x, str) and x.split(":")[0] == "spyre":
            return "cpu"
        return x

    cpu = copy.copy(sample)
    cpu.input, cpu.args, cpu.kwargs = tree_map(leaf, _operands(sample))
    return cpu


def _call(opinfo: Any, sample: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return opinfo(sample.input, *sample.args, **sample.kwargs)


def _leaves(x: Any) -> list[Any]:
    return tree_flatten(x)[0]


def _has_complex(x: Any) -> bool:
    return any(isinstance(t, torch.Tensor) and t.is_complex() for t in _leaves(x))


def _cpu_answer(opinfo: Any, cpu_sample: Any) -> tuple[Any, str]:
    """The CPU's answer (under seed 1, as the device runs), and why the sample is left out
    ("" if it is not)."""
    if _has_complex(_operands(cpu_sample)):
        return None, "a complex operand"
    with torch.random.fork_rng():
        torch.manual_seed(1)
        answer = _call(opinfo, _cloned(cpu_sample))
    if _has_complex(answer):
        return None, "a complex result"
    if any(isinstance(t, torch.Tensor) and t.layout != torch.strided for t in _leaves(answer)):
        return None, "a sparse result"
    return answer, ""


def _random(placed: list[Any]) -> str:
    """The first op run that draws random numbers (PyTorch tags them), or "". (OpInfo's random
    ops seed the RNG and restore its state, so neither their answer nor the state shows it.)"""
    for p in placed:
        packet, _, overload = p.op.removeprefix("aten.").rpartition(".")
        op = getattr(getattr(torch.ops.aten, packet, None), overload, None)
        if op is not None and torch.Tag.nondeterministic_seeded in op.tags:
            return p.op
    return ""


def _cloned(sample: Any) -> Any:
    """The sample with its tensors copied, each with its whole storage (an op may write its
    operands, or read its storage outside the view: as_strided)."""

    def copied(x: Any) -> Any:
        if not isinstance(x, torch.Tensor) or x.layout != torch.strided:
            return x.clone() if isinstance(x, torch.Tensor) else x
        fresh = torch.empty(0, dtype=x.dtype, device=x.device)
        return fresh.set_(x.untyped_storage().clone(), x.storage_offset(), x.shape, x.stride())

    out = copy.copy(sample)
    out.input, out.args, out.kwargs = tree_map(copied, _operands(sample))
    return out


def run_sample(opinfo: Any, index: int, sample: Any, numerics: Numerics) -> Outcome:
    """One sample made on the device, run there and compared with the CPU (module docstring)."""
    start = time.perf_counter()
    try:
        with _time_limit(SAMPLE_TIMEOUT_S):
            kind, reason, bound = _run(opinfo, sample, numerics)
    except SampleTimeout as e:
        kind, reason, bound = "crash", f"a hang: {e}", ""
    return Outcome(opinfo.full_name, index, kind, reason, time.perf_counter() - start, bound)


def _run(opinfo: Any, sample: Any, numerics: Numerics) -> tuple[Kind, str, str]:
    from spyre_mlir.torch_device import eager
    from spyre_mlir.torch_device.storage import DeviceDtypeError

    if any(isinstance(t, torch.Tensor) and t.layout != torch.strided for t in _leaves(_operands(sample))):
        return "left_out", "a sparse operand", ""
    cpu_sample = _on_cpu(sample)
    try:
        expected, left_out = _cpu_answer(opinfo, cpu_sample)
    except Exception as e:  # the op's own error: no answer to compare with
        return "left_out", f"the CPU raises {type(e).__name__}: {_first_line(e)}", ""
    if left_out:
        return "left_out", left_out, ""
    try:
        with eager.placements() as placed, torch.random.fork_rng():
            torch.manual_seed(1)
            got = _call(opinfo, sample)
        got_cpu = tree_map(_to_cpu, got)
    except DeviceDtypeError as e:
        return "refused", _first_line(e), ""
    except Exception as e:  # anything else is a crash, reported with where it was raised
        return "crash", f"{type(e).__name__}: {_first_line(e)} [{_where(e)}]", ""
    if _random(placed):
        return "left_out", f"random numbers ({_random(placed)})", ""
    off_device = [
        t for t in _leaves(got) if isinstance(t, torch.Tensor) and t.device.type != "spyre" and _on_spyre(sample)
    ]
    if off_device:
        return "wrong", f"a result on {off_device[0].device}, not on the device", ""
    problem, bound = compare(opinfo, sample, cpu_sample, tree_map(_to_cpu, expected), got_cpu, numerics)
    if problem:
        return "wrong", problem, bound
    cpu = [p for p in placed if p.where == "cpu"]
    if cpu:
        return "fallback", f"{cpu[0].op.removeprefix('aten.').split('.')[0]}: {cpu[0].reason}", bound
    return "on_device", "", bound


def run_compiled_op(opinfo: Any, numerics: Numerics) -> list[Outcome]:
    """The outcome of each of the op's first SAMPLES_PER_OP samples, made on the CPU and run as
    a function compiled with `torch.compile(backend="spyre")`: on_device when no op of its
    graphs ran on the CPU, fallback (with the first such op) when one did."""
    torch._dynamo.reset()
    outcomes = []
    for i, sample in device_samples(opinfo, "cpu"):
        start = time.perf_counter()
        kind: Kind
        if isinstance(sample, BaseException):
            kind, reason, bound = "crash", f"making the sample: {type(sample).__name__}: {_first_line(sample)}", ""
        else:
            try:
                with _time_limit(SAMPLE_TIMEOUT_S):
                    kind, reason, bound = _run_compiled(opinfo, sample, numerics)
            except SampleTimeout as e:
                kind, reason, bound = "crash", f"a hang: {e}", ""
        outcomes.append(Outcome(opinfo.full_name, i, kind, reason, time.perf_counter() - start, bound))
    return outcomes


def _run_compiled(opinfo: Any, sample: Any, numerics: Numerics) -> tuple[Kind, str, str]:
    from torch.fx.experimental.proxy_tensor import make_fx

    from spyre_mlir.frontend.backend import STATS

    try:
        expected, left_out = _cpu_answer(opinfo, sample)
    except Exception as e:  # the op's own error: no answer to compare with
        return "left_out", f"the CPU raises {type(e).__name__}: {_first_line(e)}", ""
    if left_out:
        return "left_out", left_out, ""
    flat, spec = tree_flatten(_operands(sample))
    positions = [i for i, x in enumerate(flat) if isinstance(x, torch.Tensor)]

    def fn(*tensors: torch.Tensor) -> Any:
        filled = list(flat)
        for i, t in zip(positions, tensors):
            filled[i] = t
        inp, args, kwargs = tree_unflatten(filled, spec)
        return opinfo.op(inp, *args, **kwargs)

    tensors = [flat[i] for i in positions]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            graph = make_fx(fn, tracing_mode="fake")(*tensors).graph
        drawn = [n.target for n in graph.nodes if torch.Tag.nondeterministic_seeded in getattr(n.target, "tags", ())]
    except (RuntimeError, NotImplementedError, TypeError, ValueError):  # no single graph: Dynamo splits it
        drawn = []
    if drawn:
        return "left_out", f"random numbers ({drawn[0]})", ""
    graphs = len(STATS.graphs)
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            # each sample compiled at its own static shapes (Dynamo would make a size symbolic
            # after the second one, the length buckets' business: test_buckets.py)
            got = torch.compile(fn, backend="spyre", dynamic=False)(*[t.clone() for t in tensors])
    except Exception as e:  # a crash, reported with where it was raised
        return "crash", f"{type(e).__name__}: {_first_line(e)} [{_where(e)}]", ""
    problem, bound = compare(opinfo, sample, sample, expected, got, numerics)
    if problem:
        return "wrong", problem, bound
    on_cpu = [op for g in STATS.graphs[graphs:] for op in g.cpu_fallback]
    if on_cpu:
        return "fallback", f"{on_cpu[0]} runs on the CPU", bound
    return "on_device", "", bound


def _operands(sample: Any) -> tuple[Any, Any, Any]:
    return sample.input, sample.args, sample.kwargs


def _on_spyre(sample: Any) -> bool:
    return any(isinstance(t, torch.Tensor) and t.device.type == "spyre" for t in _leaves(_operands(sample)))


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0][:300] if text else type(e).__name__


def _where(e: BaseException) -> str:
    frames = traceback.extract_tb(e.__traceback__)
    ours = [f for f in frames if "spyre_mlir" in f.filename]
    f = (ours or frames)[-1] if (ours or frames) else None
    return f"{f.filename.split('spyre_mlir/')[-1]}:{f.lineno}" if f is not None else "?"


# region The comparison


def compare(opinfo: Any, sample: Any, cpu_sample: Any, expected: Any, got: Any, numerics: Numerics) -> tuple[str, str]:
    """Why the device's answer `got` (on the CPU) to `sample` is not right ("": it is), and why
    the bound is one store of the CPU's answer ("": the derived bound). `cpu_sample` is the
    sample on the CPU, `expected` the CPU's answer to it."""
    process: Callable[[Any], Any] = cpu_sample.output_process_fn_grad
    want_leaves, want_spec = tree_flatten(process(expected))
    got_leaves, got_spec = tree_flatten(process(got))
    if want_spec != got_spec:
        return f"the result's structure differs from the CPU's ({got_spec} vs {want_spec})", ""
    derived, why = _reference(opinfo, sample, cpu_sample, process, numerics)
    for i, (w, g) in enumerate(zip(want_leaves, got_leaves)):
        where = f"result {i}" if len(want_leaves) > 1 else "the result"
        if not isinstance(w, torch.Tensor):
            if isinstance(w, float) and isinstance(g, float):
                w, g = torch.tensor(w), torch.tensor(g)
            elif w != g and not (w != w and g != g):
                return f"{where} is {g!r}, the CPU's {w!r}", why
            else:
                continue
        if not isinstance(g, torch.Tensor):
            return f"{where} is a {type(g).__name__}, the CPU's a tensor", why
        if g.shape != w.shape or g.dtype != w.dtype:
            return f"{where} is {g.dtype} {tuple(g.shape)}, the CPU's {w.dtype} {tuple(w.shape)}", why
        if not w.is_floating_point():
            if not torch.equal(g, w) and not _tied_indices(cpu_sample.input, g, w, numerics):
                bad = (g != w).nonzero()[0].tolist()
                return f"{where} differs at {bad}: {g[tuple(bad)].item()}, the CPU's {w[tuple(bad)].item()}", why
            continue
        # every float result on the device was stored once at least: a value the graph makes
        # on the host (a constant, exact in the derived bound) too, when it crosses
        cpu = w.detach().to(torch.float64).numpy()
        ref, bound = (derived[0][i], derived[1][i]) if derived is not None else (cpu, np.zeros(cpu.shape))
        bound = np.maximum(bound, numerics.unit_roundoff * np.abs(ref) + numerics.min_normal)
        problem = _within(g.detach().to(torch.float64).numpy(), ref, cpu, bound, numerics)
        if problem:
            return f"{where}: {problem}", why
    return "", why


def _tied_indices(x: Any, got: torch.Tensor, want: torch.Tensor, numerics: Numerics) -> bool:
    """Whether `got` and `want` are indices into the float input `x` along one dim (topk,
    sort, max.dim ...) that pick equal values of `x` as the device holds it: inputs that differ
    in float32 but round to one 16-bit value are a tie on the device, which it may break either
    way."""
    if not (isinstance(x, torch.Tensor) and x.is_floating_point() and got.dim() == x.dim() >= 1):
        return False
    if got.dtype != torch.int64:
        return False
    held = torch.from_numpy(numerics.round(x.detach().to(torch.float32).numpy()))
    for d in range(x.dim()):
        if any(got.shape[j] != x.shape[j] for j in range(x.dim()) if j != d):
            continue
        n = x.shape[d]
        if bool(((got < 0) | (got >= n) | (want < 0) | (want >= n)).any()):
            continue
        if torch.equal(held.gather(d, got), held.gather(d, want)):
            return True
    return False


def _within(got: np.ndarray, exact: np.ndarray, cpu: np.ndarray, bound: np.ndarray, numerics: Numerics) -> str:
    """Why `got` is not within `bound` of the exact answer nor of the CPU's (which carries its
    own float32 error: a log_softmax near 0 cancels in it), or "". Where the exact answer lies
    beyond the device format's range, the device's answer is the saturated one of its sign."""
    got, exact, cpu, bound = np.broadcast_arrays(got, exact, cpu, np.asarray(bound, dtype=np.float64))
    top = numerics.max_value
    with np.errstate(invalid="ignore", over="ignore"):
        nan = np.isnan(exact)
        beyond = ~nan & (np.abs(exact) > top)
        saturated = np.where(beyond, np.sign(exact) * top, exact)
        err = np.minimum(np.abs(got - saturated), np.abs(got - np.clip(cpu, -top, top)))
        ok = np.where(nan, np.isnan(got), np.where(beyond, err <= numerics.unit_roundoff * top, err <= bound))
    if ok.all():
        return ""
    idx = np.unravel_index(np.argmax(~ok), ok.shape) if ok.ndim else ()
    return (
        f"{got[idx]:.6g} where the exact answer is {exact[idx]:.6g} and the CPU's {cpu[idx]:.6g} at "
        f"{tuple(int(i) for i in idx)} (error {err[idx]:.3g}, bound {bound[idx]:.3g}; {int((~ok).sum())} of "
        f"{ok.size} elements out)"
    )


def _reference(
    opinfo: Any, sample: Any, cpu_sample: Any, process: Callable[[Any], Any], numerics: Numerics
) -> tuple[tuple[list[np.ndarray], list[np.ndarray]] | None, str]:
    """Exact values (float64) and DL16 bounds of the sample's processed results, from the graph
    the device runs, evaluated on the CPU sample's values; or None and why there is no graph.

    The graph is traced on the device's tensors (fake ones), so that an op decomposes as it
    does for the device (SDPA into its math form, not the CPU's fused kernel); where the op's
    Python code branches on values (an `equal`, an `item()`), the ops the CPU sample runs are
    recorded as they run (`_recorded`: the branches its values take)."""
    from torch.fx.experimental.proxy_tensor import make_fx

    from spyre_mlir.diagnostics import Unsupported
    from spyre_mlir.frontend.fx_importer import import_fx_graph
    from spyre_mlir.reference.evaluate import ReferenceError, evaluate
    from spyre_mlir.reference.model import reference_decompositions

    values = [x for x in _leaves(_operands(cpu_sample)) if isinstance(x, torch.Tensor)]
    inputs = [t.to(torch.float64).numpy() if t.is_floating_point() else t.numpy() for t in values]
    why = ""
    for traced in (sample, cpu_sample):
        flat, spec = tree_flatten(_operands(traced))
        positions = [i for i, x in enumerate(flat) if isinstance(x, torch.Tensor)]

        def fn(
            *tensors: torch.Tensor, flat: list[Any] = flat, spec: Any = spec, positions: list[int] = positions
        ) -> Any:
            filled = list(flat)
            for i, t in zip(positions, tensors):
                filled[i] = t
            inp, args, kwargs = tree_unflatten(filled, spec)
            return tree_flatten(process(opinfo.op(inp, *args, **kwargs)))[0]

        tensors = [flat[i] for i in positions]
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                graph = fn if traced is sample else _recorded(fn, tensors)
                # (functionalised: a body may write its buffers in place, through views)
                gm = make_fx(
                    torch.func.functionalize(graph, remove="mutations"),
                    decomposition_table=reference_decompositions(),
                    tracing_mode="fake",
                )(*tensors)
                module, info = import_fx_graph(gm)
                return evaluate(module, inputs, numerics, info.ctx), ""
        # no graph to derive the bound from: the caller takes one store of the CPU's answer
        except (
            Unsupported,
            ReferenceError,
            NotImplementedError,
            RuntimeError,
            TypeError,
            ValueError,
            AssertionError,
        ) as e:
            why = why or f"{type(e).__name__}: {_first_line(e)}"
    return None, why


_READS = {torch.ops.aten._local_scalar_dense.default, torch.ops.aten.equal.default, torch.ops.aten.is_nonzero.default}
"""Ops whose answer Python reads (to branch on): run, not recorded."""


def _recorded(fn: Callable[..., Any], tensors: list[torch.Tensor]) -> torch.fx.GraphModule:
    """The aten ops `fn(*tensors)` runs, as a straight-line graph of its inputs (the branches
    its Python code takes on these values; tensors it makes from numbers are constants)."""
    from torch._library.custom_ops import _maybe_get_opdef
    from torch.utils._python_dispatch import TorchDispatchMode

    graph = torch.fx.Graph()
    root = torch.nn.Module()
    nodes: dict[int, torch.fx.Node] = {id(t): graph.placeholder(f"arg{i}") for i, t in enumerate(tensors)}
    alive: list[Any] = list(tensors)  # ids stay unique while the recording lasts

    def node_of(x: Any) -> Any:
        if not isinstance(x, torch.Tensor):
            return x
        if id(x) not in nodes:  # made outside any op (torch.tensor(...)): a constant
            name = f"constant{len(alive)}"
            root.register_buffer(name, x.detach().clone())
            nodes[id(x)] = graph.get_attr(name)
            alive.append(x)
        return nodes[id(x)]

    class Recorder(TorchDispatchMode):
        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            definition = _maybe_get_opdef(func)
            if definition is not None:  # a torch.library custom op: the aten ops of its body
                with self:
                    return definition._init_fn(*args, **(kwargs or {}))
            out = func(*args, **(kwargs or {}))
            if func in _READS:
                return out
            node = graph.call_function(func, tree_map(node_of, tuple(args)), tree_map(node_of, dict(kwargs or {})))
            leaves = out if isinstance(out, tuple | list) else (out,)
            for i, t in enumerate(leaves):
                if isinstance(t, torch.Tensor):
                    nodes[id(t)] = node if leaves is not out else graph.call_function(operator.getitem, (node, i))
                    alive.append(t)
            return out

    with Recorder():
        outs = fn(*tensors)
    graph.output([node_of(o) for o in outs])
    return torch.fx.GraphModule(root, graph)


# endregion
