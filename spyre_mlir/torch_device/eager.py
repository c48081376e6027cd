"""Eager ops on spyre tensors: the PrivateUse1 fallback.

Every aten op without a kernel of its own (kernels.py, the C++ view kernels) comes here:

1. On the device, when it can: the op alone as a graph (traced with core-ATen decompositions,
   as `torch.compile` traces), compiled through the normal pipeline once per signature (op,
   shapes, dtypes, the other arguments) and cached, run by the device model on the operands
   where they are, its kernels charged to the current stream. An in-place or `out=` op runs
   its functional form and copies the result into its destination on the device.
2. Else on the CPU: operands copied to the host, the op run by PyTorch, results copied back
   (written into the operands an in-place op writes), with one warning per op name. Strict
   mode raises instead, naming the op. Ops on integer and boolean tensors only (index and mask
   building), `item()` and random numbers run on the host by design, without a warning.

`placements()` records where each op that reaches the fallback runs (what the OpInfo
conformance test counts a sample by).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

import torch
from torch.utils._pytree import tree_flatten, tree_unflatten

from spyre_mlir.torch_device import on_device, state

_WARNED: set[str] = set()


@dataclass(frozen=True)
class Placement:
    """Where one op that reached the fallback ran."""

    op: str
    where: Literal["device", "view", "host", "cpu"]
    """device: compiled and run by the device model; view: an alias of a spyre operand; host:
    on the host by design (integer work, item(), random numbers); cpu: a fallback."""
    reason: str = ""
    """Why a fallback ran on the CPU."""


_RECORDINGS: list[list[Placement]] = []


@contextmanager
def placements() -> Iterator[list[Placement]]:
    """The placement of every op that reaches the fallback while the block runs, in order."""
    record: list[Placement] = []
    _RECORDINGS.append(record)
    try:
        yield record
    finally:
        _RECORDINGS.remove(record)


def _record(op: torch._ops.OpOverload, where: Literal["device", "view", "host", "cpu"], reason: str = "") -> None:
    for record in _RECORDINGS:
        record.append(Placement(str(op), where, reason))


class SpyreDeviceError(RuntimeError):
    """An op the device cannot take, in strict mode; the message names it."""


def _is_spyre(x: Any) -> bool:
    return isinstance(x, torch.Tensor) and x.device.type == "spyre"


def _draws_random_numbers(op: torch._ops.OpOverload) -> bool:
    return torch.Tag.nondeterministic_seeded in op.tags


def _by_design(op: torch._ops.OpOverload, args: tuple, kwargs: dict) -> bool:
    """Host ops by design: no floating-point tensor in or out, item(), random numbers, values
    made from numbers into an `out=` tensor (arange, linspace, eye: constants, as the compiled
    path makes them on the host), and results that no value of the card decides (every float
    operand empty: a sum over an empty dim is zeros)."""
    name = op._schema.name
    if name in ("aten::_local_scalar_dense", "aten::equal", "aten::is_nonzero") or _draws_random_numbers(op):
        return True
    flat, _ = tree_flatten((args, kwargs))
    writes_out = any(a.kwarg_only and a.alias_info is not None and a.alias_info.is_write for a in op._schema.arguments)
    if writes_out and not _tensors_read(op, args, kwargs):
        return True
    if on_device.values_free(op, args, kwargs):
        return True
    tensors = [x for x in flat if isinstance(x, torch.Tensor)]
    return all(not x.is_floating_point() for x in tensors) and not any(
        isinstance(x, torch.dtype) and x.is_floating_point for x in flat
    )


def _tensors_read(op: torch._ops.OpOverload, args: tuple, kwargs: dict) -> list[torch.Tensor]:
    """The tensor operands the op reads (not only writes)."""
    named = list(zip((a.name for a in op._schema.arguments), args)) + list(kwargs.items())
    written = {a.name for a in op._schema.arguments if a.alias_info is not None and a.alias_info.is_write}
    return [t for n, v in named if n not in written for t in _tensors(v)]


def check_devices(op: torch._ops.OpOverload, args: tuple, kwargs: dict) -> None:
    """PyTorch's device check: an op takes tensors of one device, except 0-d CPU tensors
    (scalars) and the CPU indices that indexing accepts."""
    if op._schema.name in ("aten::index.Tensor", "aten::index_put_", "aten::index_put", "aten::_index_put_impl_"):
        return
    named = list(zip((a.name for a in op._schema.arguments), args)) + list(kwargs.items())
    tensors = [(n, t) for n, v in named for t in _tensors(v)]
    if not any(_is_spyre(t) for _, t in tensors):
        return
    for name, t in tensors:
        if not _is_spyre(t) and t.dim() > 0:
            raise RuntimeError(
                f"Expected all tensors to be on the same device, but found at least two devices, spyre:0 and "
                f"{t.device}! (when checking argument '{name}' of {op}: a {t.dtype} tensor of shape {tuple(t.shape)})"
            )


def fallback(op: torch._ops.OpOverload, *args: Any, **kwargs: Any) -> Any:
    check_devices(op, args, kwargs)
    # random numbers are drawn by the host's generator (never compiled)
    result = NotImplemented if _draws_random_numbers(op) else on_device.run(op, args, kwargs)
    if result is not NotImplemented:
        if _RECORDINGS:
            _record(op, "view" if on_device.is_view(op) else "device")
        return result
    if _by_design(op, args, kwargs):
        if _RECORDINGS:
            _record(op, "host")
    else:
        name = str(op)
        if state.strict():
            raise SpyreDeviceError(
                f"spyre (strict): {name} has no device lowering for these operands "
                f"({on_device.why_not(op, args, kwargs)}); it would run on the CPU"
            )
        if _RECORDINGS:
            _record(op, "cpu", on_device.why_not(op, args, kwargs))
        if name not in _WARNED:
            _WARNED.add(name)
            warnings.warn(
                f"spyre: {name} runs on the CPU ({on_device.why_not(op, args, kwargs)}): its spyre operands are "
                f"copied to the host and its results back (warned once per op)",
                stacklevel=2,
            )
    return cpu_fallback(op, args, kwargs)


def cpu_fallback(op: torch._ops.OpOverload, args: tuple, kwargs: dict) -> Any:
    """Run `op` by PyTorch on the CPU with host copies of the spyre operands; results back."""
    params = op._schema.arguments
    # a number where the schema has a tensor (a wrapped scalar, as PyTorch hands it over): a
    # 0-d tensor, as the scalar's wrapping makes it
    args = tuple(
        torch.tensor(a) if i < len(params) and str(params[i].type) == "Tensor" and type(a) in (int, float) else a
        for i, a in enumerate(args)
    )
    flat, spec = tree_flatten((args, kwargs))
    made_here = any(isinstance(x, torch.device) and x.type == "spyre" for x in flat)
    host = [x.to("cpu") if _is_spyre(x) else (torch.device("cpu") if _is_spyre_device(x) else x) for x in flat]
    cargs, ckwargs = tree_unflatten(host, spec)
    out = op(*cargs, **ckwargs)
    schema = op._schema
    # the operands the op writes: their new contents back into the spyre tensors
    positional = list(schema.arguments)
    for i, a in enumerate(positional):
        if a.alias_info is None or not a.alias_info.is_write:
            continue
        orig = args[i] if i < len(args) else kwargs.get(a.name)
        new = cargs[i] if i < len(args) else ckwargs.get(a.name)
        for o, n in zip(_tensors(orig), _tensors(new)):
            if _is_spyre(o):
                if tuple(o.shape) != tuple(n.shape):
                    o.resize_(n.shape)
                o.copy_(n)
    flat_in = {id(x) for x in flat if isinstance(x, torch.Tensor)}
    on_spyre = made_here or any(_is_spyre(x) for x in flat)

    def back(r: Any, ret: Any) -> Any:
        if not isinstance(r, torch.Tensor):
            return r
        if ret is not None and ret.alias_info is not None:  # returns (a view of) an operand: the spyre one
            for i, a in enumerate(positional):
                if a.alias_info is not None and a.alias_info.before_set == ret.alias_info.before_set:
                    orig = args[i] if i < len(args) else kwargs.get(a.name)
                    if isinstance(orig, torch.Tensor):
                        return orig
        if id(r) in flat_in or not on_spyre:
            return r
        return r.to("spyre")

    rets = list(schema.returns)
    if isinstance(out, tuple):
        return tuple(back(r, rets[i] if i < len(rets) else None) for i, r in enumerate(out))
    if isinstance(out, list):
        return [back(r, None) for r in out]
    return back(out, rets[0] if rets else None)


def _is_spyre_device(x: Any) -> bool:
    return isinstance(x, torch.device) and x.type == "spyre"


def _tensors(x: Any) -> list[torch.Tensor]:
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, list | tuple):
        return [t for t in x if isinstance(t, torch.Tensor)]
    return []
