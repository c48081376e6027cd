"""PyTorch's ATen operators as the torch dialect names them, for the host executor
(runtime/host.py) and the numpy reference (reference/evaluate.py).

    aten_overload("torch.aten.add.Tensor")    torch.ops.aten.add.Tensor
    SCALAR_TYPES, LAYOUTS, MEMORY_FORMATS      the int codes torch-mlir gives dtype, layout and
                                               memory-format arguments, as torch objects
    check_enum_arguments                       refuse a code PyTorch does not know (it would
                                               crash the process)
    ELEMENT_DTYPES, torch_dtype                torch-mlir element types (f32, si64, i1 ...) as torch dtypes
    HostOp                                     a torch op run on the CPU, its operands rebuilt from
                                               the operator's schema
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from xdsl.ir import Operation

from spyre_mlir.dialects import torch as t
from spyre_mlir.sim.memory import DeviceError

SCALAR_TYPES = {
    0: torch.uint8,
    1: torch.int8,
    2: torch.int16,
    3: torch.int32,
    4: torch.int64,
    5: torch.float16,
    6: torch.float32,
    7: torch.float64,
    9: torch.complex64,
    10: torch.complex128,
    11: torch.bool,
    15: torch.bfloat16,
}
LAYOUTS = {0: torch.strided}
MEMORY_FORMATS = {
    0: torch.contiguous_format,
    1: torch.preserve_format,
    2: torch.channels_last,
    3: torch.channels_last_3d,
}


def aten_overload(name: str) -> Any:
    """`torch.aten.add.Tensor` -> torch.ops.aten.add.Tensor (`.default` when no overload);
    AttributeError if PyTorch has no such operator."""
    parts = name.split(".")
    packet = getattr(getattr(torch.ops, parts[1]), parts[2])
    return getattr(packet, parts[3] if len(parts) > 3 else "default")


def check_enum_arguments(op_name: str, fn: Any, args: Sequence[Any]) -> None:
    """PyTorch takes dtype, layout and memory format as int codes (the schema's `type` says
    int, its `real_type` says ScalarType...) and crashes the process (a segfault) on a code it
    does not know: refuse those, naming the op."""
    for i, arg_name, kind, codes in _enum_arguments(fn):
        value = args[i] if i < len(args) else None
        if isinstance(value, int) and not isinstance(value, bool) and value not in codes:
            raise DeviceError(
                f"'{op_name}': {arg_name} = {value} is not a {kind} code this runtime knows ({sorted(codes)})"
            )


@functools.cache
def _enum_arguments(fn: Any) -> tuple[tuple[int, str, str, dict[int, Any]], ...]:
    """The arguments of an ATen overload that take an enum code: (position, name, enum, codes)."""
    codes_of: tuple[tuple[str, dict[int, Any]], ...] = (
        ("ScalarType", SCALAR_TYPES),
        ("MemoryFormat", MEMORY_FORMATS),
        ("Layout", LAYOUTS),
    )
    return tuple(
        (i, a.name, name, codes)
        for i, a in enumerate(fn._schema.arguments)
        for name, codes in codes_of
        if name in str(a.real_type)
    )


ELEMENT_DTYPES = {
    "f32": torch.float32,
    "f16": torch.float16,
    "bf16": torch.bfloat16,
    "f64": torch.float64,
    "complex<f32>": torch.complex64,
    "complex<f64>": torch.complex128,
    "si64": torch.int64,
    "si32": torch.int32,
    "si16": torch.int16,
    "si8": torch.int8,
    "ui8": torch.uint8,
    "i1": torch.bool,
}


def torch_dtype(element_type: Any) -> torch.dtype:
    """The torch dtype of a torch-mlir element type (float32 for one it does not name)."""
    return ELEMENT_DTYPES.get(str(element_type), torch.float32)


def to_numpy(x: torch.Tensor) -> np.ndarray:
    """Host tensors are numpy arrays; bf16 has no numpy type, so it is widened to f32."""
    x = x.detach()
    if x.dtype == torch.bfloat16:
        x = x.float()
    return x.contiguous().numpy()


class HostOp:
    """A torch op prepared for eager execution on the CPU."""

    def __init__(self, op: Operation):
        try:
            self.fn = aten_overload(op.name)
        except AttributeError:
            raise DeviceError(f"'{op.name}' has no PyTorch operator to run it on the host") from None
        schema = self.fn._schema
        self.kinds = [str(a.type) for a in schema.arguments]
        self.keywords = [a.name if a.kwarg_only else None for a in schema.arguments]
        self.dtypes = [
            torch_dtype(v.type.get_dtype()) if isinstance(v.type, t.ValueTensorType) else None for v in op.operands
        ]
        self.name = op.name

    def run(self, args: list[Any]) -> tuple[Any, ...]:
        check_enum_arguments(self.name, self.fn, args)
        call: list[Any] = []
        kwargs: dict[str, Any] = {}
        for kind, keyword, dtype, value in zip(self.kinds, self.keywords, self.dtypes, args):
            if isinstance(value, np.ndarray):
                value = (
                    torch.from_numpy(np.array(value)).to(dtype)
                    if dtype is not None
                    else torch.from_numpy(np.array(value))
                )
            elif isinstance(value, list):
                value = [torch.from_numpy(np.array(v)) if isinstance(v, np.ndarray) else v for v in value]
            elif value is not None and "ScalarType" in kind:
                value = SCALAR_TYPES[value]
            elif value is not None and "Layout" in kind:
                value = LAYOUTS[value]
            elif value is not None and "MemoryFormat" in kind:
                value = MEMORY_FORMATS[value]
            elif value is not None and "Device" in kind:
                value = torch.device(value)
                if value.type != "cpu":  # (a graph traced on device tensors) the host part runs on the host
                    value = torch.device("cpu")
            if keyword is None:
                call.append(value)
            else:
                kwargs[keyword] = value
        try:
            out = self.fn(*call, **kwargs)
        except (
            RuntimeError,
            IndexError,
            TypeError,
            ValueError,
            NotImplementedError,
        ) as e:  # PyTorch's own argument checks
            raise DeviceError(
                f"'{self.name}': PyTorch rejects its operands on the host: {str(e).splitlines()[0] if str(e) else type(e).__name__}"
            ) from None
        outs = out if isinstance(out, tuple) else (out,)
        return tuple(
            to_numpy(o) if isinstance(o, torch.Tensor) else [to_numpy(x) for x in o] if isinstance(o, list) else o
            for o in outs
        )
