"""The report page: one HTML file with everything inlined (plotly.js from the plotly package,
cytoscape.js and its dagre layout from vendor/, the page's own script and style from assets/,
the data as JSON), so that it opens with no network access.

    write_html(data, "report.html")
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import plotly.io as pio
from plotly.offline import get_plotlyjs

from spyre_mlir.report.figures import FIGURES


def _asset(*parts: str) -> str:
    return resources.files("spyre_mlir.report").joinpath(*parts).read_text()


def _script_json(value: Any) -> str:
    """JSON safe inside a <script> element."""
    return json.dumps(value, separators=(",", ":")).replace("</", "<\\/")


def page(data: dict[str, Any]) -> str:
    figures = {name: json.loads(pio.to_json(make(data), validate=False)) for name, make in FIGURES.items()}
    title = data.get("title") or "spyre report"
    head = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_escape(title)}</title>",
        f"<style>{_asset('assets', 'report.css')}</style>",
        "</head><body>",
        _asset("assets", "report.html"),
        f'<script type="application/json" id="report-data">{_script_json(data)}</script>',
        f'<script type="application/json" id="report-figures">{_script_json(figures)}</script>',
    ]
    scripts = [get_plotlyjs(), _asset("vendor", "cytoscape.min.js"), _asset("vendor", "cytoscape-dagre.min.js")]
    body = [f"<script>{s}</script>" for s in scripts]
    body.append(f"<script>{_asset('assets', 'report.js')}</script>")
    return "\n".join([*head, *body, "</body></html>"])


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def write_html(data: dict[str, Any], path: str | Path) -> Path:
    path = Path(path)
    path.write_text(page(data), encoding="utf-8")
    return path
