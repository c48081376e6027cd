"""A report opened in headless Chromium (selenium with Debian's chromium and chromium-driver),
with no network: what test_report_browser.py checks and `python -m spyre_mlir.tools.report_shots`
photographs.

    with Browser() as b:          # BrowserMissing (why) when selenium, chromium or its driver is absent
        b.open("report.html")
        b.click_kernel("k0")      # a real mouse click on the kernel's box in the graph
        b.panel_text()
        b.show("roofline"); b.plot_marks("roofline")
        b.screenshot("shot.png")
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

VIEWS = ("graph", "timeline", "lx", "roofline", "host", "ir")


class BrowserMissing(RuntimeError):
    """No way to drive a browser here (the message says what is missing)."""


def _find(*names: str) -> str | None:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    return None


class Browser:
    def __init__(self, width: int = 1400, height: int = 900):
        try:
            from selenium import webdriver
            from selenium.webdriver.chrome.service import Service
        except ImportError as e:
            raise BrowserMissing(f"the selenium package is not installed ({e})") from None
        chromium = _find("chromium", "chromium-browser", "google-chrome")
        driver = _find("chromedriver")
        if chromium is None or driver is None:
            raise BrowserMissing(
                "no chromium and chromedriver on PATH (Debian: apt-get install chromium chromium-driver)"
            )
        options = webdriver.ChromeOptions()
        options.binary_location = chromium
        for arg in (
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            f"--window-size={width},{height}",
            "--host-resolver-rules=MAP * ~NOTFOUND",  # no network: every host name fails to resolve
        ):
            options.add_argument(arg)
        self.driver = webdriver.Chrome(service=Service(driver), options=options)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.driver.quit()

    def js(self, script: str, *args: Any) -> Any:
        return self.driver.execute_script(script, *args)

    def wait(self, script: str, timeout: float = 60.0) -> Any:
        """Until `script` (an expression) is truthy; its value."""
        end = time.monotonic() + timeout
        while True:
            value = self.js(f"return ({script});")
            if value:
                return value
            if time.monotonic() > end:
                raise TimeoutError(f"still false after {timeout} s: {script}")
            time.sleep(0.1)

    def open(self, path: str | Path) -> None:
        self.driver.get(Path(path).resolve().as_uri())
        self.wait("window.spyreReport && window.spyreReport.ready")

    def network_requests(self) -> list[str]:
        """Resources the page asked any network for (it should ask none)."""
        return self.js(
            "return performance.getEntriesByType('resource').map(e => e.name).filter(n => /^https?:/.test(n));"
        )

    def show(self, view: str) -> None:
        self.driver.find_element("css selector", f'#tabs button[data-view="{view}"]').click()
        if view not in ("graph", "ir"):
            self.wait(f"document.querySelector('#plot-{view} .main-svg')")

    def click_kernel(self, name: str) -> None:
        """A real click inside kernel `name`'s box in the graph, clear of its ops."""
        from selenium.webdriver.common.action_chains import ActionChains

        self.show("graph")
        self.js(f"spyreReport.cy.center(spyreReport.cy.$id('k:{name}'));")
        x, y = self.js(
            f"""const b = spyreReport.cy.$id('k:{name}').renderedBoundingBox();
            return [b.x1 + 5, b.y1 + (b.y2 - b.y1) * 0.5];"""
        )
        canvas = self.driver.find_element("id", "cy")
        w, h = canvas.size["width"], canvas.size["height"]
        ActionChains(self.driver).move_to_element_with_offset(canvas, int(x - w / 2), int(y - h / 2)).click().perform()

    def panel_text(self) -> str:
        return self.driver.find_element("id", "panel").text

    def plot_marks(self, view: str) -> int:
        """Drawn marks (paths and points) in a plot's SVG: 0 for an empty plot."""
        return self.js(
            f"""const svg = document.querySelector('#plot-{view} .main-svg');
            return svg ? svg.querySelectorAll('.trace path, .point, .bars path').length : 0;"""
        )

    def graph_pixels(self) -> int:
        """Non-blank pixels the graph's canvases hold (cytoscape draws on canvas)."""
        return self.js(
            """let n = 0;
            for (const c of document.querySelectorAll('#cy canvas')) {
              if (!c.width || !c.height) continue;
              const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
              for (let i = 3; i < d.length; i += 4) if (d[i]) n++;
            }
            return n;"""
        )

    def screenshot(self, path: str | Path) -> Path:
        path = Path(path)
        self.driver.save_screenshot(str(path))
        return path
