"""docs/ops.md is generated from the code (DEVICE_OPS and the host policy of
convert-torch-to-spyre) and must not go stale."""

from pathlib import Path

import pytest
from helpers import assert_generated_doc_current

from spyre_mlir.tools.gen_ops_doc import COMMAND, render

DOC = Path(__file__).resolve().parents[3] / "docs" / "ops.md"


def test_ops_doc_is_up_to_date():
    assert_generated_doc_current(DOC, render(), COMMAND)


def test_device_ops_are_the_lowerings_ops_each_claimed_once():
    """DEVICE_OPS (the table of docs/ops.md) is what the registered lowerings take; an op two
    lowerings claim is refused, naming both."""
    from spyre_mlir.lowering.convert_torch_to_spyre import DEVICE_OPS, LOWERINGS, Lowering, LowerMatmul
    from spyre_mlir.lowering.convert_torch_to_spyre.convert import device_ops

    assert DEVICE_OPS == {name: what for cls in LOWERINGS for name, what in cls.lowers.items()}

    class AnotherMatmul(Lowering):
        lowers = {"torch.aten.mm": "a second lowering of mm"}

    with pytest.raises(ValueError, match="'torch.aten.mm' is lowered by both LowerMatmul and AnotherMatmul"):
        device_ops((LowerMatmul, AnotherMatmul))
