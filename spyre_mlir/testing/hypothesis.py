"""Hypothesis draws that do not depend on what else the process has loaded.

Hypothesis draws part of its values from the literal constants of the local (not installed,
not test) modules in `sys.modules` at the time of each draw (`hypothesis.internal.constants_ast`).
A property's examples, and a fuzz recipe drawn from a seed, would then change with the modules
a test run or a script happened to import before. `load_every_module()` loads all of
spyre_mlir first, so the pool of constants is the same in every process.
"""

from __future__ import annotations

import importlib
import os
import pkgutil

import spyre_mlir

__all__ = ["FULL_TIER", "example_count", "load_every_module"]

FULL_TIER = os.environ.get("SPYRE_TEST_TIER") == "full"
"""`make test-full` (SPYRE_TEST_TIER=full): property tests draw their full example counts."""


def example_count(full: int, every_commit: int) -> int:
    """A property's hypothesis example count: `full` under `make test-full`, `every_commit` in
    `make test` and `make quick` (sized to what the property has found: the draws that found
    bugs are kept as explicit examples or regression tests, so the smaller count still covers
    them)."""
    return full if FULL_TIER else every_commit


def load_every_module() -> None:
    """Import every module of the spyre_mlir package (each once; later calls cost a lookup each),
    but the vLLM plugin's (spyre_mlir.vllm needs the `vllm` extra, in its own environment)."""
    for module in pkgutil.walk_packages(spyre_mlir.__path__, "spyre_mlir."):
        if not module.name.startswith("spyre_mlir.vllm."):
            importlib.import_module(module.name)
