"""spyre-track-origins: number the torch ops, so that every later pass says which of them each
device op computes (dialects/spyre/origin.py)."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from spyre_mlir.dialects import spyre


@dataclass(frozen=True)
class SpyreTrackOriginsPass(ModulePass):
    """Number the module's torch compute ops 0, 1, ... in program order (constants, lists and
    literals aside), each `{spyre.origin = #spyre.origin<[i] -> [i, ...]>}`, and mark the module
    `spyre.origins = n`. Every later pass then gives the ops it makes the origin of what they
    replace, and the verifier holds them to it (explorer reports read the final module's
    origins: which kernels and host ops each torch op became)."""

    name = "spyre-track-origins"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if spyre.numbered(op) is not None:
            raise PassFailedException(
                f"spyre-track-origins: the module's torch ops are numbered already ({spyre.ORIGINS_ATTR})"
            )
        n = 0
        for inner in op.walk():
            if spyre.is_torch_compute(inner) and spyre.origin_of(inner) is None:
                spyre.set_origin(inner, spyre.OriginAttr([n], [n] * len(inner.results)))
                n += 1
        op.attributes[spyre.ORIGINS_ATTR] = IntegerAttr(n, i64)
