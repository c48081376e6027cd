"""A numpy reference for the `torch` dialect, with the error bound the device may show.

`evaluate(module, inputs, numerics)` runs the torch-level function exactly (float64, through
PyTorch's own operators) and, beside every float tensor, propagates a first-order bound on how
far the device's result may be from it, from the device format's unit roundoff u (every
device store rounds) and the f32 unit roundoff u32 = 2^-24 of PT sums and SFP intermediates:

    host -> device           e = u|x| + tiny                    (tiny: flush below the smallest normal)
    every op's result         + u|r| + tiny (the store) + 8 u32 |r| (f32 intermediates)
    matmul  C = A @ B         e_C = 6 sqrt(A^2 @ e_B^2 + e_A^2 @ B^2) + e_A @ e_B + K u32 (|A| @ |B|)
    softmax y                 e_y = min(1, y expm1(D) + 4u y e^D),  D = e + max(e)  (along the dim;
                              y e^-D <= y' <= y e^D exactly, ~ y (e + max e + 4u) for small D)
    layer norm z = (x-m) r    e_z = r (e + mean e) + |z| r^2 mean(|x-m| (e + mean e)),
                              y = z w + b: e_y = |w| e_z + |z| e_w + e_b + 5u |w z|
    gelu                      e = 1.13 e_x                       (sup |gelu'| = 1.1289, both forms)
    sin, cos                  e = min(e_x, 2)                    (1-Lipschitz; the corners of a box
                                                                  wider than a period miss its swings)
    any other op f            the largest deviation of f at the corners X +- E of the inputs'
                              error boxes (exact for monotone element-wise ops, sums, views)
    a float copy of integers  u|r| + tiny (exact on the host; rounded once where it crosses to the device)
    integer / boolean ops     exact (they run on the host); a comparison with a Scalar compares
                              with it in the tensor's dtype, as PyTorch does (x_bf16 > 0.3 is
                              x > bf16(0.3))

Inside one dot product the K rounding errors are independent and zero-mean (round to nearest
even), so they add in quadrature: e_k is an upper bound of a uniform error, i.e. at least
sqrt(3) standard deviations, and the factor 6 puts the bound beyond 10 sigma. The worst case
(all K errors aligned) is ~sqrt(K) times looser and would hide a lost bias; every other term
is a worst case.

Tests assert |device - reference| <= bound element by element: the tolerance follows from
the format, and a wrong answer (a misplaced element, a lost bias) exceeds it. The reference of
a torch model (its FX graph imported, then evaluated here) is `reference/model.py`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, DenseResourceAttr, ModuleOp
from xdsl.ir import Operation, SSAValue

from spyre_mlir.dialects import torch as t
from spyre_mlir.runtime.aten import aten_overload, check_enum_arguments, torch_dtype
from spyre_mlir.sim.numerics import Numerics

U32 = 2.0**-24
GELU_LIPSCHITZ = 1.13
MATMULS = ("torch.aten.mm", "torch.aten.bmm", "torch.aten.addmm", "torch.aten.linear")


class ReferenceError(ValueError):
    pass


class _Tensor:
    """A float64 value and its error bound (zero for integer/boolean tensors)."""

    __slots__ = ("value", "bound")

    def __init__(self, value: np.ndarray, bound: np.ndarray):
        self.value = value
        self.bound = bound

    @property
    def is_float(self) -> bool:
        return self.value.dtype.kind == "f"


def evaluate(
    module: ModuleOp,
    inputs: Sequence[np.ndarray],
    numerics: Numerics,
    ctx: Any = None,
    entry: str = "main",
    range_notes: list[str] | None = None,
    on_op: Callable[[Operation, list[tuple[np.ndarray, np.ndarray] | None]], None] | None = None,
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """(values, bounds) of the function's results, in float64.

    The bounds hold while values stay within the device format's range; with `range_notes`,
    the values that leave it (where the device saturates) are listed there. `on_op(op, results)`
    is told every aten op's results: (value, bound) of each float tensor, None for the others."""
    fn = next((op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == entry), None)
    if fn is None:
        raise ReferenceError(f"no function @{entry}")
    if len(fn.body.blocks) != 1:
        raise ReferenceError(
            f"@{entry} has {len(fn.body.blocks)} blocks; the reference runs straight-line functions (one block)"
        )
    u, tiny = numerics.unit_roundoff, numerics.min_normal
    env: dict[SSAValue, Any] = {}

    def watch(what: str, values: list[Any], types: Sequence[Any]) -> None:
        for r, rt in zip(values, types):
            if range_notes is None or len(range_notes) >= 3 or not isinstance(r, _Tensor) or not r.is_float:
                continue
            top = min(numerics.max_value, _HOST_MAX.get(_element(rt), np.inf))
            mag = np.abs(r.value[~np.isnan(r.value)])
            if mag.size and mag.max() > top:
                range_notes.append(f"{what} (|x| up to {mag.max():.3g})")

    def transferred(x: np.ndarray, rt: Any) -> _Tensor:
        x = np.asarray(x)
        if x.dtype.kind == "f":
            x = x.astype(np.float64)
            return _Tensor(x, max(u, _HOST_U.get(_element(rt), 0.0)) * np.abs(x) + tiny)
        return _Tensor(x, np.zeros(x.shape))

    for i, (arg, x) in enumerate(zip(fn.body.block.args, inputs)):
        env[arg] = transferred(x, arg.type)
        watch(f"input {i}", [env[arg]], [arg.type])
    for op in fn.body.block.ops:
        if isinstance(op, func.ReturnOp):
            vals = [env[v] for v in op.arguments]
            if not all(isinstance(v, _Tensor) for v in vals):
                raise ReferenceError(
                    f"@{entry} returns a value that is not a tensor; the reference compares tensors only"
                )
            return [v.value for v in vals], [v.bound for v in vals]
        if isinstance(op, t.ValueTensorLiteralOp):
            if isinstance(op.value, DenseResourceAttr):
                x = t.resource_to_numpy(ctx, op.value)
            else:
                assert isinstance(op.value, DenseIntOrFPElementsAttr)
                x = np.asarray(op.value.get_values()).reshape(op.result.type.get_shape())
            if str(op.result.type.get_dtype()) == "i1":  # dense<true>: booleans, not 0/1 ints
                x = x.astype(bool)
            env[op.result] = transferred(x, op.result.type)
            watch(f"'{op.name}'", [env[op.result]], [op.result.type])
            continue
        if isinstance(op, t.PrimListConstructOp):
            env[op.result] = [env[v] for v in op.elements]
            continue
        if op.name == "torch.prim.ListUnpack":
            env.update(zip(op.results, env[op.operands[0]]))
            continue
        if op.name == "torch.prim.NumToTensor.Scalar":
            x = np.asarray(env[op.operands[0]])
            env[op.results[0]] = _Tensor(x.astype(np.float64) if x.dtype.kind == "f" else x, np.zeros(()))
            continue
        if not op.name.startswith("torch.aten."):
            if not isinstance(
                op,
                t.ConstantIntOp
                | t.ConstantFloatOp
                | t.ConstantBoolOp
                | t.ConstantStrOp
                | t.ConstantNoneOp
                | t.ConstantDeviceOp,
            ):
                raise ReferenceError(f"the reference has no semantics for '{op.name}'")
            env[op.results[0]] = _constant(op)
            continue
        if op.name in _SCALAR_CONVERSIONS:  # a bool where the schema has an int or a float
            env[op.results[0]] = _SCALAR_CONVERSIONS[op.name](env[op.operands[0]])
            continue
        try:
            fn_aten = aten_overload(op.name)
        except AttributeError:
            raise ReferenceError(f"the reference has no semantics for '{op.name}'") from None
        u_op = max(
            [u] + [_HOST_U.get(_element(r.type), 0.0) for r in op.results]
        )  # a bf16 op rounds more than the device
        args = [env[v] for v in op.operands]
        if op.name in _SCALAR_COMPARISONS and isinstance(args[1], float):
            args[1] = _in_dtype_of(op.operands[0].type, args[1])
        results = _eval(op, fn_aten, args, u_op, tiny)
        watch(f"'{op.name}'", results, [r.type for r in op.results])
        env.update(zip(op.results, results))
        if on_op is not None:
            on_op(op, [(r.value, r.bound) if isinstance(r, _Tensor) and r.is_float else None for r in results])
    raise ReferenceError(f"@{entry} has no return")


def _constant(op: Operation) -> Any:
    if isinstance(op, t.ConstantIntOp):
        return op.int_value
    if isinstance(op, t.ConstantFloatOp):
        return op.float_value
    if isinstance(op, t.ConstantBoolOp):
        return bool(op.value.value.data)
    if isinstance(op, t.ConstantStrOp | t.ConstantDeviceOp):
        return op.value.data
    return None


_SCALAR_TYPES = {
    0: torch.uint8,
    1: torch.int8,
    2: torch.int16,
    3: torch.int32,
    4: torch.int64,
    5: torch.float64,
    6: torch.float64,
    7: torch.float64,
    11: torch.bool,
    15: torch.float64,
}


_SCALAR_CONVERSIONS = {"torch.aten.Int.bool": int, "torch.aten.Float.bool": float}
"""Scalar ops the importer spells (fx_importer.py): their result is a number, not a tensor."""

_SCALAR_COMPARISONS = frozenset(f"torch.aten.{c}.Scalar" for c in ("eq", "ne", "lt", "le", "gt", "ge"))


def _in_dtype_of(rt: Any, scalar: float) -> float:
    """`scalar` rounded to the float element type of the tensor type `rt` (unchanged for
    others): the value PyTorch compares a tensor of that type with."""
    element = _element(rt)
    if _kind(element) != "float":
        return scalar
    return float(torch.tensor(scalar, dtype=torch.float64).to(torch_dtype(element)))


_HOST_U = {"bf16": 2.0**-8}
"""Unit roundoff of host element types coarser than the device format: the CPU runs host ops
(and casts inputs) in the declared type."""
_HOST_MAX = {"f16": 65504.0}
"""Largest finite value of host element types with a narrower range than the device format."""


def _element(rt: Any) -> str:
    return str(rt.get_dtype()) if isinstance(rt, t.ValueTensorType) and rt.has_dtype else ""


def _kind(element: str) -> str | None:
    """float, int or bool for a torch-mlir element type (None: not a number type)."""
    if element == "i1":
        return "bool"
    if element in ("f16", "f32", "f64", "bf16"):
        return "float"
    if element.startswith(("si", "ui", "i")):
        return "int"
    return None


def _kind_of(x: np.ndarray) -> str:
    return {"b": "bool", "f": "float", "i": "int", "u": "int"}.get(np.asarray(x).dtype.kind, "other")


def _torch(x: np.ndarray) -> torch.Tensor:
    """A contiguous, writable tensor, as a value-semantics tensor is (aten.view needs the
    former; weights from blobs are read-only arrays)."""
    x = np.ascontiguousarray(x).reshape(np.shape(x))  # ascontiguousarray makes a 0-d array 1-d
    return torch.from_numpy(x if x.flags.writeable else x.copy())


def _call(fn_aten: Any, args: list[Any], values: Sequence[np.ndarray | None]) -> list[np.ndarray]:
    """Run the aten op in float64 (float tensors widened; dtype arguments kept float64)."""
    schema = fn_aten._schema.arguments
    call: list[Any] = []
    kwargs: dict[str, Any] = {}
    k = 0
    for a, arg in zip(schema, args):
        kind = str(a.real_type)  # `type` says int for a dtype, layout or memory format
        v: Any
        if isinstance(arg, _Tensor) and kind in ("Scalar", "number") and arg.value.ndim == 0 and not arg.bound.any():
            v = arg.value.item()  # an exact 0-d tensor where the schema takes a number (prim.NumToTensor's)
            k += 1
        elif isinstance(arg, _Tensor):
            given = values[k]
            v = _torch(given if given is not None else arg.value)
            k += 1
        elif isinstance(arg, list):
            v = [_torch(x.value) if isinstance(x, _Tensor) else x for x in arg]
        elif arg is not None and "ScalarType" in kind:
            v = _SCALAR_TYPES[arg]
        elif arg is not None and ("Layout" in kind or "MemoryFormat" in kind or "Device" in kind):
            v = None
        else:
            v = arg
        if a.kwarg_only:
            kwargs[a.name] = v
        else:
            call.append(v)
    out = fn_aten(*call, **kwargs)
    outs = out if isinstance(out, tuple | list) else (out,)
    return [o.detach().numpy() if isinstance(o, torch.Tensor) else np.asarray(o) for o in outs]


_SPLITS = frozenset({"torch.aten.split_with_sizes", "torch.aten.split.Tensor", "torch.aten.unbind.int"})
"""Ops whose one result is a list of pieces of their input."""


def _eval(op: Operation, fn_aten: Any, args: list[Any], u: float, tiny: float) -> list[Any]:
    check_enum_arguments(op.name, fn_aten, args)
    tensors = [a for a in args if isinstance(a, _Tensor)]
    try:
        exact = _call(fn_aten, args, [a.value for a in tensors])
    except (RuntimeError, IndexError, TypeError, ValueError, NotImplementedError) as err:  # PyTorch's own checks
        raise ReferenceError(
            f"'{op.name}': PyTorch rejects its operands: {str(err).splitlines()[0] if str(err) else type(err).__name__}"
        ) from None
    for r, res in zip(exact, op.results):  # a result type the op's verifier could not check
        rt = res.type
        if (
            isinstance(rt, t.ValueTensorType)
            and rt.has_sizes
            and -1 not in rt.get_shape()
            and tuple(r.shape) != tuple(rt.get_shape())
        ):
            raise ReferenceError(
                f"'{op.name}': PyTorch computes a result of shape {tuple(r.shape)}, the op declares {rt}"
            )
        if isinstance(rt, t.ValueTensorType) and rt.has_dtype and _kind(str(rt.get_dtype())) not in (None, _kind_of(r)):
            raise ReferenceError(f"'{op.name}': PyTorch computes a result of dtype {r.dtype}, the op declares {rt}")
    if op.name in _SPLITS and len(tensors) == 1:  # copies of parts of the input: their bounds the same parts
        return [[_Tensor(v, b) for v, b in zip(exact, _call(fn_aten, args, [tensors[0].bound]))]]
    if op.name == "torch.aten.cat":  # a copy: each element keeps its piece's bound
        pieces = [x for x in args[0] if isinstance(x, _Tensor)]
        dim = args[1] if len(args) > 1 else 0
        bound = torch.cat([_torch(x.bound) for x in pieces], dim=dim).numpy()
        return [_Tensor(exact[0].astype(np.float64) if exact[0].dtype.kind == "f" else exact[0], bound)]
    floats = [a for a in tensors if a.is_float]
    if not floats:  # floats made from integers (and constants) are exact, in float64 as all floats here;
        # a float copy of integers may cross to the device, which rounds it once
        crossing = u if op.name in t.DTYPE_CONVERSIONS else 0.0
        return [
            _Tensor(r.astype(np.float64), crossing * np.abs(r) + tiny if crossing else np.zeros(r.shape))
            if r.dtype.kind == "f"
            else _Tensor(r, np.zeros(r.shape))
            for r in exact
        ]

    def stored(r: np.ndarray, e: np.ndarray) -> _Tensor:
        return _Tensor(r, e + u * np.abs(r) + tiny + 8 * U32 * np.abs(r))

    name = op.name
    if name in MATMULS:
        return [stored(exact[0], _matmul_bound(name, args))]
    if name == "torch.aten.convolution":
        return [stored(exact[0], _convolution_bound(args, u))]
    if name == "torch.aten._softmax":
        (x,) = floats
        dim = args[1]
        y = exact[0]
        spread = x.bound + x.bound.max(axis=dim, keepdims=True)
        with np.errstate(over="ignore", invalid="ignore"):  # e^D overflows where D is large: the bound is then 1
            e = np.minimum(y * np.expm1(spread) + 4 * u * y * np.exp(spread), 1.0)
        return [_Tensor(y, np.nan_to_num(e, nan=1.0) + tiny)]
    if name == "torch.aten.native_layer_norm":
        return _layer_norm_bound(args, exact, u, tiny)
    if name in ("torch.aten.sin", "torch.aten.cos"):
        return [stored(exact[0], np.minimum(floats[0].bound, 2.0))]
    if name == "torch.aten.gelu":
        return [stored(exact[0], GELU_LIPSCHITZ * floats[0].bound)]
    # the corners of the inputs' error boxes
    dev = [np.zeros(r.shape) for r in exact]
    for signs in itertools.product((-1.0, 1.0), repeat=len(floats)):
        perturbed = []
        i = 0
        for a in tensors:
            if a.is_float:
                with np.errstate(invalid="ignore"):  # inf - inf at an infinite corner
                    perturbed.append(a.value + signs[i] * a.bound)
                i += 1
            else:
                perturbed.append(a.value)
        for j, r in enumerate(_call(fn_aten, args, perturbed)):
            if r.dtype.kind == "f":
                with np.errstate(invalid="ignore"):
                    dev[j] = np.maximum(dev[j], np.nan_to_num(np.abs(r - exact[j]), nan=0.0))
    return [stored(r, d) if r.dtype.kind == "f" else _Tensor(r, np.zeros(r.shape)) for r, d in zip(exact, dev)]


def _matmul_bound(name: str, args: list[Any]) -> np.ndarray:
    if name == "torch.aten.linear":
        x, w, bias = args[0], args[1], args[2]
        a, ea = x.value, x.bound
        b, eb = np.swapaxes(w.value, -1, -2), np.swapaxes(w.bound, -1, -2)
        alpha, beta = 1.0, 1.0
    elif name == "torch.aten.addmm":
        bias, m1, m2, beta, alpha = args
        a, ea, b, eb = m1.value, m1.bound, m2.value, m2.bound
    else:
        m1, m2 = args[0], args[1]
        a, ea, b, eb = m1.value, m1.bound, m2.value, m2.bound
        bias, alpha, beta = None, 1.0, 1.0
    k = a.shape[-1]
    e = (
        6 * np.sqrt(np.square(a) @ np.square(eb) + np.square(ea) @ np.square(b))
        + ea @ eb
        + k * U32 * (np.abs(a) @ np.abs(b))
    )
    e = abs(alpha) * e
    if bias is not None:  # the matmul's own store, then the bias pointwise
        e = e + abs(alpha) * 2.0**-10 * np.abs(a @ b)
        if isinstance(bias, _Tensor):
            e = e + abs(beta) * bias.bound
    return e


def _convolution_bound(args: list[Any], u: float) -> np.ndarray:
    """A convolution is a matmul over its input's windows (each output a dot product of
    C/groups * prod(K) terms): the matmul bound with the products convolved, plus one rounding
    of the partial sums per tap (at most u of each: the device sums taps it computed apart) and
    the store before the bias is added."""
    x, w, bias = args[0], args[1], args[2]

    def conv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return torch.ops.aten.convolution(_torch(a), _torch(b), None, *args[3:]).numpy()

    terms = math.prod(w.value.shape[1:])
    magnitude = conv(np.abs(x.value), np.abs(w.value))
    e = (
        6 * np.sqrt(conv(np.square(x.value), np.square(w.bound)) + conv(np.square(x.bound), np.square(w.value)))
        + conv(x.bound, w.bound)
        + (terms * U32 + u) * magnitude
    )
    if isinstance(bias, _Tensor):
        e = e + u * magnitude + bias.bound.reshape(-1, *([1] * (x.value.ndim - 2)))
    return e


def _layer_norm_bound(args: list[Any], exact: list[np.ndarray], u: float, tiny: float) -> list[_Tensor]:
    x, shape, w, b = args[0], args[1], args[2], args[3]
    axes = tuple(range(x.value.ndim - len(shape), x.value.ndim))
    d = x.value - x.value.mean(axis=axes, keepdims=True)
    r = 1.0 / np.sqrt(np.mean(d * d, axis=axes, keepdims=True) + args[4])
    z = d * r
    e = x.bound + x.bound.mean(axis=axes, keepdims=True)
    ez = r * e + np.abs(z) * r * r * np.mean(np.abs(d) * e, axis=axes, keepdims=True)
    wv = w.value if isinstance(w, _Tensor) else 1.0
    ey = np.abs(wv) * ez + 5 * u * np.abs(wv * z)
    if isinstance(w, _Tensor):
        ey = ey + np.abs(z) * w.bound
    if isinstance(b, _Tensor):
        ey = ey + b.bound
    y = exact[0]
    return [
        _Tensor(y, ey + u * np.abs(y) + tiny),
        _Tensor(exact[1], np.abs(x.bound).mean(axis=axes, keepdims=True) + u * np.abs(exact[1]) + tiny),
        _Tensor(exact[2], np.abs(exact[2]) * (2 * u + r * r * np.mean(np.abs(d) * e, axis=axes, keepdims=True)) + tiny),
    ]
