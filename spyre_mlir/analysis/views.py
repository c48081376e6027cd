"""Host transfers seen through views: the `spyre.to_device` and the `spyre.permute` /
`spyre.reshape` chain that a device value is, and the one host permutation such a chain
amounts to (spyre-propagate-layouts and convert-torch-to-spyre fold it into the transfer)."""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from spyre_mlir.dialects import spyre


def view_chain(v: SSAValue) -> tuple[spyre.ToDeviceOp, list[Operation]] | None:
    """to_device and the views (outermost last) that lead to v, if v is such a chain."""
    views: list[Operation] = []
    while isinstance(v.owner, spyre.PermuteOp | spyre.ReshapeOp):
        views.append(v.owner)
        v = v.owner.input
    if not isinstance(v.owner, spyre.ToDeviceOp):
        return None
    return v.owner, list(reversed(views))


def transfer_permutation(v: SSAValue) -> tuple[spyre.ToDeviceOp, list[int]] | None:
    """If v is a host transfer seen through views that one transfer can do (permutes before
    any reshape compose), the transfer and the host permutation; else None."""
    chain = view_chain(v)
    if chain is None:
        return None
    transfer, views = chain
    src = transfer.input.type
    assert isinstance(src, TensorType)
    perm = list(transfer.permutation.as_tuple()) if transfer.permutation else list(range(len(src.get_shape())))
    reshaped = spyre.device_layout(transfer.result.type).shape != tuple(src.get_shape()[p] for p in perm)
    for view in views:
        if isinstance(view, spyre.PermuteOp):
            if reshaped:
                return None  # a permute after a reshape is not one host transpose
            perm = [perm[p] for p in view.permutation.as_tuple()]
        else:
            reshaped = True
    return transfer, perm
