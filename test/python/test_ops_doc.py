"""docs/ops.md is generated from the code (DEVICE_OPS and the host policy of
convert-torch-to-spyre) and must not go stale."""

from pathlib import Path

from helpers import assert_generated_doc_current

from spyre_mlir.tools.gen_ops_doc import COMMAND, render

DOC = Path(__file__).resolve().parents[2] / "docs" / "ops.md"


def test_ops_doc_is_up_to_date():
    assert_generated_doc_current(DOC, render(), COMMAND)
