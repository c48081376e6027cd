"""docs/passes.md is generated from the passes (their docstrings and options) and must not go
stale; every pass and every option it lists says what it is."""

import dataclasses
from pathlib import Path

from helpers import assert_generated_doc_current

from spyre_mlir.pipeline import Optimizations
from spyre_mlir.tools.gen_passes_doc import COMMAND, attribute_docs, registered_passes, render

DOC = Path(__file__).resolve().parents[3] / "docs" / "passes.md"


def test_passes_doc_is_up_to_date():
    assert_generated_doc_current(DOC, render(), COMMAND)


def test_every_pass_and_option_is_documented():
    missing = []
    for name, factory in registered_passes().items():
        cls = factory()
        if not (cls.__doc__ or "").strip():
            missing.append(f"{name}: no class docstring")
        docs = attribute_docs(cls)
        missing += [
            f"{name}{{{f.name}}}: no attribute docstring" for f in dataclasses.fields(cls) if f.name not in docs
        ]
    docs = attribute_docs(Optimizations)
    missing += [
        f"Optimizations.{f.name}: no attribute docstring"
        for f in dataclasses.fields(Optimizations)
        if f.name not in docs
    ]
    assert not missing, "\n".join(missing)


def test_attribute_docs_reads_the_string_after_a_field():
    @dataclasses.dataclass(frozen=True)
    class Options:
        width: int = 64
        """Lanes per stick."""
        undocumented: bool = True
        depth: int = 8
        """Rows of the array,
        over two lines."""

    assert attribute_docs(Options) == {"width": "Lanes per stick.", "depth": "Rows of the array,\nover two lines."}
