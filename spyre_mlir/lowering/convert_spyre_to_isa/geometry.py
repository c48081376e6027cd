"""Where an attention kernel stores its result: geometry only convert-spyre-to-isa needs.

An attention kernel (`spyre.Attention`) writes each stick of its context where the kernel's
result holds it: in the context's own layout, or, with a relayout, where the restickify would
put it (`Attention.relayout_coords`: through the views between them).
"""

from __future__ import annotations

from spyre_mlir.dialects import spyre
from spyre_mlir.layout import matrix_strides
from spyre_mlir.target.constants import F16_LANES


def out_stick(att: spyre.Attention, b: int, m: int, stick: int) -> int:
    """The result's stick holding the context's stick `stick` of row m of matrix b."""
    if att.relayout is None:
        sb, sm, sn = matrix_strides(spyre.device_layout(att.context.result.type))
        return b * sb + m * sm + stick * sn
    return spyre.device_layout(att.relayout.result.type).element_stick(att.relayout_coords(b, m, stick * F16_LANES))
