"""Weights: `dense_resource` blobs, which live in a context's builtin dialect (`fresh_builtin`
gives each context its own), to and from numpy arrays.
"""

import math
import struct

import numpy as np
from xdsl.context import Context
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseResourceAttr,
    IntegerType,
    Signedness,
    TensorType,
    f16,
    f32,
    f64,
    i1,
)
from xdsl.ir import Attribute

_FLOAT_DTYPES: dict[Attribute, np.dtype] = {
    f16: np.dtype(np.float16),
    f32: np.dtype(np.float32),
    f64: np.dtype(np.float64),
}
_ELEMENT_OF_NUMPY: dict[np.dtype, Attribute] = {
    **{d: e for e, d in _FLOAT_DTYPES.items()},
    np.dtype(np.bool_): i1,
    **{np.dtype(f"int{w}"): IntegerType(w, Signedness.SIGNED) for w in (8, 16, 32, 64)},
    **{np.dtype(f"uint{w}"): IntegerType(w, Signedness.UNSIGNED) for w in (8, 16, 32, 64)},
}


def _numpy_dtype(element: Attribute) -> np.dtype | None:
    """The numpy dtype of a tensor element type (`si64`, `i64` -> int64; `i1` -> bool)."""
    if isinstance(element, IntegerType):
        width, unsigned = element.width.data, element.signedness.data == Signedness.UNSIGNED
        if width == 1:
            return np.dtype(np.bool_)
        return np.dtype(f"{'u' if unsigned else ''}int{width}") if width in (8, 16, 32, 64) else None
    return _FLOAT_DTYPES.get(element)


def _blob_store(ctx: Context) -> OpAsmDialectInterface:
    store = ctx.get_dialect("builtin").get_interface(OpAsmDialectInterface)
    assert store is not None, "the builtin dialect has no OpAsmDialectInterface"
    return store


def resource_to_numpy(ctx: Context, attr: DenseResourceAttr) -> np.ndarray:
    """The contents of a `dense_resource` blob held by `ctx`'s builtin dialect, as a read-only
    array of the attribute's shape (bf16 is widened to float32).

    An MLIR blob is a 4-byte little-endian alignment header followed by the raw little-endian
    elements. Raises KeyError if the context has no data for the handle, ValueError if the
    blob is not hex or does not hold exactly the elements of the type."""
    handle = attr.resource_handle.data
    blob = _blob_store(ctx).lookup(handle)
    if not blob:
        raise KeyError(f"no blob for dense_resource<{handle}> in this context")
    try:
        raw = bytes.fromhex(blob[2:])[4:]
    except ValueError:
        raise ValueError(f"the blob of dense_resource<{handle}> is not hexadecimal bytes") from None
    t = attr.type
    assert isinstance(t, TensorType)
    element = t.get_element_type()
    width = (
        2 if isinstance(element, BFloat16Type) else (d.itemsize if (d := _numpy_dtype(element)) is not None else None)
    )
    if width is not None and len(raw) != math.prod(t.get_shape()) * width:
        raise ValueError(
            f"the blob of dense_resource<{handle}> holds {len(raw)} bytes after its header, {t} needs {math.prod(t.get_shape()) * width}"
        )
    if isinstance(element, BFloat16Type):
        bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
        return bits.view(np.float32).reshape(t.get_shape())
    if (dtype := _numpy_dtype(element)) is None:
        raise ValueError(f"no numpy dtype for dense_resource element type {element}")
    return np.frombuffer(raw, dtype=dtype.newbyteorder("<")).reshape(t.get_shape())


def numpy_to_resource(
    ctx: Context, name_hint: str, array: np.ndarray, element_type: Attribute | None = None
) -> DenseResourceAttr:
    """Store `array` as a new blob in `ctx`'s builtin dialect and return its
    `dense_resource<...> : tensor<...>`; the handle is `name_hint`, suffixed `_0`, `_1`, ...
    if taken. The element type follows torch-mlir (int64 -> si64, bool -> i1) unless
    `element_type` overrides it (e.g. bf16 for the bits of a uint16 array)."""
    if element_type is None:
        if (element_type := _ELEMENT_OF_NUMPY.get(array.dtype.newbyteorder("="))) is None:
            raise ValueError(f"no element type for numpy dtype {array.dtype}")
    data = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))
    store = _blob_store(ctx)
    handle = store.declare_resource(name_hint)
    header = struct.pack("<I", data.itemsize)
    store.parse_resource(handle, "0x" + (header + data.tobytes()).hex().upper())
    return DenseResourceAttr.from_params(handle, TensorType(element_type, data.shape))
