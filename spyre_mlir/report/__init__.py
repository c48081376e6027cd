"""The explorer report of a compiled model, and design-space sweeps (docs/report.md).

    spyre_mlir.report(model, x)                   # torch.compile(backend="spyre"), one call: spyre_report.html
    torch.compile(model, backend="spyre", options={"report": "r.html"})   # each graph at its first call
    spyre-report FILE.mlir -o r.html              # a torch-level module (tools/spyre_report.py)
    spyre-sweep FILE.mlir --set cores=8,16,32     # compile and simulate each point (tools/spyre_sweep.py)

A report is one HTML file that opens with no network access: the model's graph with its ops in
the kernels they became (`#spyre.origin`), coloured by simulated time, placement or DL16 error;
each kernel's spyre op, spyre_isa program, plan and time; the per-core timeline, LX occupancy,
roofline and host round trips; the IR after every stage.

The package is callable: `spyre_mlir.report(model, *inputs, path=..., **options)`.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any


def report(model: Any, *inputs: Any, path: str | Path = "spyre_report.html", **options: Any) -> list[Path]:
    """Compile `model` with torch.compile(backend="spyre", options={**options, "report": path})
    and call it once on `inputs` (under torch.no_grad()): each graph compiled writes its report
    (the first to `path`, any other beside it, named after the graph). The paths written."""
    import torch

    from spyre_mlir.report.write import written_since

    mark = written_since()
    compiled = torch.compile(model, backend="spyre", options={**options, "report": str(path)})
    with torch.no_grad():
        compiled(*inputs)
    return written_since(mark)


class _CallableModule(types.ModuleType):
    """`spyre_mlir.report` is this package and `report` at once (a module's class may be a
    subclass of ModuleType: the Python reference, "Customizing module attribute access")."""

    def __call__(self, model: Any, *inputs: Any, path: str | Path = "spyre_report.html", **options: Any) -> list[Path]:
        return report(model, *inputs, path=path, **options)


sys.modules[__name__].__class__ = _CallableModule
