"""The report in a real browser: headless Chromium, no network, a kernel clicked, every plot
drawn. Needs the selenium package and Debian's chromium and chromium-driver (CI installs them);
skipped, saying what is missing, where they are not."""

from __future__ import annotations

from pathlib import Path

import pytest

from spyre_mlir.report.browser import Browser, BrowserMissing
from spyre_mlir.tools.spyre_report import main as spyre_report

MLP = Path(__file__).resolve().parents[2] / "fixtures" / "mlp_torch_mlir.mlir"


@pytest.fixture(scope="module")
def browser():
    try:
        with Browser() as b:
            yield b
    except BrowserMissing as e:
        pytest.skip(f"no browser to drive: {e}")


@pytest.fixture(scope="module")
def mlp_report(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report") / "mlp.html"
    assert spyre_report([str(MLP), "-o", str(out)]) == 0
    return out


def test_a_clicked_kernel_shows_its_isa_and_times(browser, mlp_report):
    browser.open(mlp_report)
    assert browser.network_requests() == []
    assert browser.graph_pixels() > 1000  # the graph is drawn
    browser.click_kernel("k0")
    text = browser.panel_text()
    time_us = browser.js("return spyreReport.kernels.get('k0').time_s * 1e6;")
    assert "kernel k0" in text and f"kernel time {time_us:.2f} us" in text
    for row in (
        "dispatch (start)",
        "DDR (busiest core)",
        "PT (busiest core)",
        "SFP (busiest core)",
        "ring (busiest core)",
    ):
        assert row in text
    isa = browser.wait(
        "(document.querySelector('#panel pre.isa') || {}).textContent.includes('spyre_isa.')"
        " && document.querySelector('#panel pre.isa').textContent"
    )
    assert "spyre_isa.program @k0" in isa and "spyre_isa.stream cores" in isa and "spyre_isa.pt_matmul" in isa
    assert "spyre.kernel" in browser.driver.find_element("css selector", "#panel pre.spyre").text


@pytest.mark.parametrize("view", ["timeline", "lx", "roofline", "host"])
def test_every_plot_is_drawn(browser, mlp_report, view):
    browser.open(mlp_report)
    browser.show(view)
    assert browser.plot_marks(view) > 0


def test_the_ir_of_a_kernel_is_one_click_away(browser, mlp_report):
    browser.open(mlp_report)
    browser.click_kernel("k1")
    link = browser.driver.find_elements("css selector", "#panel a.link")[-1]
    assert link.text == "show in the IR"
    link.click()
    browser.wait("document.querySelector('#ir-text .hit')")
    assert 'spyre.kernel "k1"' in browser.driver.find_element("css selector", "#ir-text .hit").text
