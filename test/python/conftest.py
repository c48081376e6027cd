"""Every module of spyre_mlir is loaded before any test runs: a property test then draws the
same examples under `-k`, `make quick` and `make test` alike (spyre_mlir.testing.hypothesis says why)."""

from spyre_mlir.testing.hypothesis import load_every_module

load_every_module()
