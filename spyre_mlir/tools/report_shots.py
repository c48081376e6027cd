"""Screenshots of a report's views, for docs/report.md (headless Chromium: spyre_mlir/report/browser.py).

    python -m spyre_mlir.tools.report_shots minilm.html docs/report --kernel g1_k5

Writes graph.png (the kernel clicked, its panel open), timeline.png, lx.png, roofline.png,
host.png and ir.png (the kernel's IR).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from spyre_mlir.report.browser import Browser, BrowserMissing


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="report_shots", description=__doc__.splitlines()[0])
    ap.add_argument("report", help="a report's HTML file")
    ap.add_argument("out", help="the folder for the PNG files")
    ap.add_argument("--kernel", help="the kernel to click (default: the longest)")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    try:
        with Browser() as b:
            b.open(args.report)
            kernel = args.kernel or b.js(
                "return spyreReport.data.kernels.filter(k => k.program).sort((a, c) => c.time_s - a.time_s)[0].name;"
            )
            b.click_kernel(kernel)
            b.wait("(document.querySelector('#panel pre.isa') || {}).textContent.includes('spyre_isa.')")
            b.screenshot(out / "graph.png")
            for view in ("timeline", "lx", "roofline", "host"):
                b.show(view)
                time.sleep(0.5)
                b.screenshot(out / f"{view}.png")
            b.show("graph")
            b.driver.find_elements("css selector", "#panel a.link")[-1].click()
            b.wait("document.querySelector('#ir-text .hit')")
            b.screenshot(out / "ir.png")
    except BrowserMissing as e:
        print(f"report_shots: {e}", file=sys.stderr)
        return 1
    for p in sorted(out.glob("*.png")):
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
