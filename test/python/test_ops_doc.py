"""docs/ops.md is generated from the code (DEVICE_OPS and the host policy of
convert-torch-to-spyre) and must not go stale."""

from pathlib import Path

from spyre_mlir.tools.gen_ops_doc import COMMAND, render

DOC = Path(__file__).resolve().parents[2] / "docs" / "ops.md"


def test_ops_doc_is_up_to_date():
    expected = render()
    actual = DOC.read_text() if DOC.exists() else ""
    if actual != expected:
        old, new = actual.splitlines(), expected.splitlines()
        first = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))
        raise AssertionError(
            f"docs/ops.md is stale (first difference at line {first + 1}:\n"
            f"  file:      {old[first] if first < len(old) else '<end of file>'}\n"
            f"  generated: {new[first] if first < len(new) else '<end of output>'})\n"
            f"regenerate it from the repository root with:\n    {COMMAND}"
        )
