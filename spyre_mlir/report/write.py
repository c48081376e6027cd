"""Writing a report: a compiled module, its capture and inputs -> the HTML file."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from spyre_mlir.report.capture import Capture
from spyre_mlir.report.html import write_html
from spyre_mlir.report.run import ReportData, report_data
from spyre_mlir.target.config import DeviceConfig

WRITTEN: list[Path] = []
"""Every report this process wrote, in order."""


def written_since(mark: int | None = None) -> Any:
    """With no argument, a mark; with one, the reports written since it."""
    return len(WRITTEN) if mark is None else list(WRITTEN[mark:])


def graph_report_path(path: str | Path, graph: str) -> Path:
    """Where a graph's report goes: `path` for the first graph written there, else `path` with
    the graph's name before the suffix (r.html, r-g2.html)."""
    p = Path(path)
    if p.resolve() not in {w.resolve() for w in WRITTEN}:
        return p
    return p.with_name(f"{p.stem}-{graph}{p.suffix}")


def write_report(
    compiled: ModuleOp,
    ctx: Any,
    capture: Capture,
    inputs: Sequence[np.ndarray],
    config: DeviceConfig,
    path: str | Path,
    title: str = "",
    entry: str = "main",
) -> ReportData:
    rd = report_data(compiled, ctx, capture, inputs, config, title, entry)
    written = write_html(rd.data, path)
    WRITTEN.append(written)
    return rd
