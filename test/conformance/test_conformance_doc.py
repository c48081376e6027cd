"""docs/conformance.md is generated from expectations.yaml and must not go stale."""

from pathlib import Path

from helpers import assert_generated_doc_current

from spyre_mlir.tools.gen_conformance_doc import COMMAND, render

DOC = Path(__file__).resolve().parents[2] / "docs" / "conformance.md"


def test_conformance_doc_is_up_to_date():
    assert_generated_doc_current(DOC, render(), COMMAND)
