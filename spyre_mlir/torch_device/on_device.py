"""Eager ops on the device: one op as a graph, compiled once per signature and cached.

`run` is tried first for every op that reaches the fallback (eager.py). It returns
NotImplemented when the op is not for the device (no spyre float operand, a CPU operand, a
data-dependent shape) or when the pipeline cannot take it all (strict compile: any float op
left on the host); `why_not` says which, for the fallback's warning.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch.utils._pytree import TreeSpec, tree_flatten, tree_unflatten

from spyre_mlir.torch_device import state

_CACHE: dict[Any, tuple[Callable[..., Any], TreeSpec] | str] = {}
"""By signature and the device's config (a compiled graph runs on its config's device model):
the compiled graph and its output structure, or why the op is not run here."""

STATS = {"compiles": 0, "device_runs": 0}


def _spyre(x: Any) -> bool:
    return isinstance(x, torch.Tensor) and x.device.type == "spyre"


def _signature(op: torch._ops.OpOverload, flat: list[Any], spec: TreeSpec) -> Any:
    parts: list[Any] = [state.config()]
    for x in flat:
        if isinstance(x, torch.Tensor):
            parts.append(("tensor", tuple(x.shape), x.dtype, x.device.type))
        elif isinstance(x, torch.device):
            parts.append(("device", x.type))
        else:
            parts.append((type(x).__name__, x))
    return (str(op), str(spec), tuple(parts))


def _written(op: torch._ops.OpOverload) -> list[str]:
    return [a.name for a in op._schema.arguments if a.alias_info is not None and a.alias_info.is_write]


def _functional(op: torch._ops.OpOverload) -> torch._ops.OpOverload | None:
    """The out-of-place form of an in-place op (`add_.Tensor` -> `add.Tensor`) or of an
    `out=` op (`add.out` -> `add.Tensor`: the overload with the same other arguments), or None."""
    name = op._schema.name.split("::")[1]
    written = _written(op)
    if name.endswith("_") and not name.startswith("_") and written == ["self"]:
        packet = getattr(torch.ops.aten, name[:-1], None)
        return getattr(packet, op._overloadname, None) if packet is not None else None
    returning = _returning_form(op)
    if returning is not None:
        return returning
    args = op._schema.arguments
    if not written or any(not a.kwarg_only for a in args if a.name in written):
        return None
    want = [(a.name, str(a.type)) for a in args if a.name not in written]
    packet = getattr(torch.ops.aten, name, None)
    for overload in packet.overloads() if packet is not None else ():
        cand = getattr(packet, overload)
        if not _mutates(cand) and [(a.name, str(a.type)) for a in cand._schema.arguments] == want:
            return cand
    return None


def _returning_form(op: torch._ops.OpOverload) -> torch._ops.OpOverload | None:
    """`<op>_functional`: the form of an op that writes operands which returns their new
    values after its own results instead (`_native_batch_norm_legit` ->
    `_native_batch_norm_legit_functional`, which returns the running statistics), or None."""
    packet = getattr(torch.ops.aten, op._schema.name.split("::")[1] + "_functional", None)
    cand = getattr(packet, op._overloadname, None) if packet is not None else None
    if cand is None or _mutates(cand):
        return None
    same_arguments = [a.name for a in cand._schema.arguments] == [a.name for a in op._schema.arguments]
    extra = len(cand._schema.returns) - len(op._schema.returns)
    return cand if same_arguments and extra == len(_written(op)) else None


def is_view(op: torch._ops.OpOverload) -> bool:
    return any(r.alias_info is not None and not r.alias_info.is_write for r in op._schema.returns)


def _mutates(op: torch._ops.OpOverload) -> bool:
    return any(a.alias_info is not None and a.alias_info.is_write for a in op._schema.arguments)


def _reason(op: torch._ops.OpOverload, flat: list[Any]) -> str | None:
    tensors = [x for x in flat if isinstance(x, torch.Tensor)]
    if not tensors:
        return "no tensor operand"
    if not all(_spyre(x) for x in tensors):
        return "an operand is a CPU tensor"
    if not any(x.is_floating_point() for x in tensors):
        return "no floating-point operand"
    if any(x.numel() == 0 for x in tensors):
        return "an empty operand"
    return None


def view(op: torch._ops.OpOverload, args: tuple, kwargs: dict) -> Any:
    """A view op without a kernel of its own: its geometry from the meta device, then an
    `as_strided` of the spyre operand (the result aliases it, as PyTorch's views do)."""
    flat, spec = tree_flatten((args, kwargs))
    base = next(x for x in flat if _spyre(x))

    def meta(x: Any) -> Any:
        if not _spyre(x):
            return x
        n = x.untyped_storage().nbytes() // x.element_size()
        return torch.empty(n, dtype=x.dtype, device="meta").as_strided(x.shape, x.stride(), x.storage_offset())

    margs, mkwargs = tree_unflatten([meta(x) for x in flat], spec)
    out = op(*margs, **mkwargs)
    leaves, ospec = tree_flatten(out)
    views = [
        torch.as_strided(base, o.shape, o.stride(), o.storage_offset()) if isinstance(o, torch.Tensor) else o
        for o in leaves
    ]
    return tree_unflatten(views, ospec)


@dataclass(frozen=True)
class _Number:
    """A number where the schema has a tensor (PyTorch hands a wrapped scalar, as in `1 - x`,
    to a fallback as a number): traced as a 0-d constant of the operands' float dtype, as type
    promotion makes it."""

    value: int | float


def _wrap_numbers(op: torch._ops.OpOverload, args: tuple) -> tuple:
    params = op._schema.arguments
    return tuple(
        _Number(a) if i < len(params) and str(params[i].type) == "Tensor" and type(a) in (int, float) else a
        for i, a in enumerate(args)
    )


def run(op: torch._ops.OpOverload, args: tuple, kwargs: dict) -> Any:
    args = _wrap_numbers(op, args)
    flat, spec = tree_flatten((args, kwargs))
    if is_view(op) and any(_spyre(x) for x in flat):
        return view(op, args, kwargs)
    if _mutates(op):
        functional = _functional(op)
        if functional is None:
            return NotImplemented
        written = _written(op)
        if functional is _returning_form(op):  # its own results, then the written operands' new values
            result = run(functional, args, kwargs)
            if result is NotImplemented:
                return NotImplemented
            names = [a.name for a in op._schema.arguments]
            dests = [args[names.index(n)] if names.index(n) < len(args) else kwargs[n] for n in written]
            own, new = list(result[: -len(written)]), list(result[-len(written) :])
            _write(dests, new)
            return tuple(own) if len(own) > 1 else own[0]
        inputs = {k: v for k, v in kwargs.items() if k not in written}
        result = run(functional, args, inputs)
        if result is NotImplemented:
            return NotImplemented
        dests = [args[0]] if written == ["self"] else [kwargs[n] for n in written]
        _write(dests, list(result) if isinstance(result, tuple | list) else [result])
        return dests[0] if len(dests) == 1 else tuple(dests)
    if _empty_operand(flat) and _reason(op, flat) == "an empty operand":
        return _empty_results(op, flat, spec)
    if _reason(op, flat) is not None:
        return NotImplemented
    key = _signature(op, flat, spec)
    entry = _CACHE.get(key)
    if entry is None:
        entry = _CACHE[key] = _compile(op, flat, spec)
    if isinstance(entry, str):
        return NotImplemented
    fn, out_spec = entry
    tensors = [x for x in flat if isinstance(x, torch.Tensor)]
    STATS["device_runs"] += 1
    with torch.no_grad():
        outs = fn(*tensors)
    return tree_unflatten(list(outs), out_spec)


def _empty_operand(flat: list[Any]) -> bool:
    return any(_spyre(x) and x.numel() == 0 for x in flat)


def _empty_results(op: torch._ops.OpOverload, flat: list[Any], spec: TreeSpec) -> Any:
    """An op with an empty operand whose results are all empty: no work, new spyre tensors of
    the results' shapes, strides and dtypes (from the meta device); NotImplemented when a
    result holds elements (a sum over an empty dim: values_free in eager.py says whether the
    host makes it from shapes alone)."""
    try:
        leaves, out_spec = tree_flatten(_on_meta(op, flat, spec))
    except UNTRACEABLE:
        return NotImplemented
    if not leaves or not all(isinstance(o, torch.Tensor) and o.numel() == 0 for o in leaves):
        return NotImplemented
    made = [torch.empty_strided(o.shape, o.stride(), dtype=o.dtype, device="spyre") for o in leaves]
    return tree_unflatten(made, out_spec)


def values_free(op: torch._ops.OpOverload, args: tuple, kwargs: dict) -> bool:
    """Whether the op's results depend on no value of a spyre tensor: every floating-point
    spyre operand it reads is empty (a sum over an empty dim is zeros, whatever the card
    holds). The host makes such a result from shapes alone, as it makes a constant."""
    read = [a.name for a in op._schema.arguments if not (a.alias_info is not None and a.alias_info.is_write)]
    named = list(zip((a.name for a in op._schema.arguments), args)) + list(kwargs.items())
    floats = [t for n, v in named if n in read for t in tree_flatten(v)[0] if _spyre(t) and t.is_floating_point()]
    return bool(floats) and all(t.numel() == 0 for t in floats)


def _on_meta(op: torch._ops.OpOverload, flat: list[Any], spec: TreeSpec) -> Any:
    """The op's result on meta tensors of its operands' shapes (no values computed)."""

    def meta(x: Any) -> Any:
        if isinstance(x, torch.Tensor):
            return torch.empty_strided(x.shape, x.stride(), dtype=x.dtype, device="meta")
        if isinstance(x, torch.device) and x.type == "spyre":
            return torch.device("meta")
        if isinstance(x, _Number):
            return x.value
        return x

    a, k = tree_unflatten([meta(x) for x in flat], spec)
    return op(*a, **k)


def _write(dests: list[torch.Tensor], results: list[torch.Tensor]) -> None:
    """Each result into its destination on the device (a copy within DDR), resized first."""
    with torch.no_grad():
        for d, r in zip(dests, results):
            if tuple(d.shape) != tuple(r.shape):
                d.resize_(r.shape)
            d.copy_(r)


def why_not(op: torch._ops.OpOverload, args: tuple, kwargs: dict) -> str:
    if _mutates(op) and _functional(op) is None:
        return "an in-place or out= op without a functional form"
    target = _functional(op) if _mutates(op) else op
    assert target is not None
    written = _written(op)
    inputs = {k: v for k, v in kwargs.items() if k not in written}
    flat, spec = tree_flatten((_wrap_numbers(target, args), inputs))
    reason = _reason(target, flat)
    if reason is not None:
        return reason
    entry = _CACHE.get(_signature(target, flat, spec))
    return entry if isinstance(entry, str) else "no device lowering"


def _compile(op: torch._ops.OpOverload, flat: list[Any], spec: TreeSpec) -> tuple[Callable[..., Any], TreeSpec] | str:
    from torch.fx.experimental.proxy_tensor import make_fx

    from spyre_mlir.frontend.backend import BackendOptions, SpyreCompileError, compile_graph
    from spyre_mlir.frontend.decompositions import decompositions

    positions = [i for i, x in enumerate(flat) if isinstance(x, torch.Tensor)]

    dtype = next(x.dtype for x in flat if isinstance(x, torch.Tensor) and x.is_floating_point())

    def traced(x: Any) -> Any:
        """An argument as the trace takes it: the host device for spyre's, a number in a tensor's
        place (see _Number) as a 0-d constant, made inside the trace (a real tensor may not
        meet the tracer's fake ones)."""
        if isinstance(x, torch.device) and x.type == "spyre":
            return torch.device("cpu")
        return torch.full((), x.value, dtype=dtype) if isinstance(x, _Number) else x

    def call(*tensors: torch.Tensor) -> Any:
        filled = [traced(x) for x in flat]
        for i, t in zip(positions, tensors):
            filled[i] = t
        a, k = tree_unflatten(filled, spec)
        return op(*a, **k)

    # the output's structure, from the meta device (no values computed)
    metas = [torch.empty(flat[i].shape, dtype=flat[i].dtype, device="meta") for i in positions]
    try:
        leaves, out_spec = tree_flatten(call(*metas))
    except Exception as e:
        return f"its result's shape is not known before it runs ({type(e).__name__})"
    if not leaves or not all(isinstance(o, torch.Tensor) for o in leaves):
        return "it returns a value that is not a tensor"

    def flat_call(*tensors: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return tuple(tree_flatten(call(*tensors))[0])

    examples = [torch.zeros(flat[i].shape, dtype=flat[i].dtype) for i in positions]
    STATS["compiles"] += 1
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            gm = make_fx(flat_call, decomposition_table=decompositions(), tracing_mode="fake")(*examples)
    except UNTRACEABLE as e:  # PyTorch's tracer refuses the op: a form the graph path cannot take
        return f"it cannot be traced as a graph ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})"
    try:
        fn = compile_graph(gm, examples, state.config(), BackendOptions(strict=True))
    except SpyreCompileError as e:  # the device path has no lowering for it (diagnostics.Unsupported)
        return str(e).removeprefix("spyre (strict): ")
    # any other exception is the compiler's bug: it propagates, naming the pass and the op
    return fn, out_spec


UNTRACEABLE: tuple[type[BaseException], ...] = (
    torch._subclasses.fake_tensor.DynamicOutputShapeException,  # nonzero, unique, masked_select ...
    torch._subclasses.fake_tensor.DataDependentOutputException,  # item(), a value the shape needs
    torch._subclasses.fake_tensor.UnsupportedOperatorException,  # no fake kernel
    torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode,
    NotImplementedError,  # an op with no kernel for a traced form (a decomposition refusing it)
)
"""What PyTorch's tracer raises for an op whose graph cannot be traced: the op runs on the CPU,
saying why. Anything else raised while tracing is the op's own error, which the CPU would raise
too: it propagates."""
