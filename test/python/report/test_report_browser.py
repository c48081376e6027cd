"""The report in a real browser: headless Chromium, no network, a kernel clicked, every plot
drawn. Needs the selenium package and Debian's chromium and chromium-driver (CI installs them);
skipped, saying what is missing, where they are not, unless SPYRE_REQUIRE_BROWSER is set (CI)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from spyre_mlir.report.browser import Browser, BrowserMissing
from spyre_mlir.tools.spyre_report import main as spyre_report

pytestmark = pytest.mark.slow  # a headless Chromium started for the module

MLP = Path(__file__).resolve().parents[2] / "fixtures" / "mlp_torch_mlir.mlir"
FALLBACK = """
func.func @main(%x: !torch.vtensor<[64,128],f32>, %w: !torch.vtensor<[128,128],f32>) -> !torch.vtensor<[64,128],f32> {
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  %0 = torch.aten.mm %x, %w : !torch.vtensor<[64,128],f32>, !torch.vtensor<[128,128],f32> -> !torch.vtensor<[64,128],f32>
  %1 = torch.aten.cumsum %0, %int1, %none : !torch.vtensor<[64,128],f32>, !torch.int, !torch.none -> !torch.vtensor<[64,128],f32>
  %2 = torch.aten.tanh %1 : !torch.vtensor<[64,128],f32> -> !torch.vtensor<[64,128],f32>
  return %2 : !torch.vtensor<[64,128],f32>
}
"""


@pytest.fixture(scope="module")
def browser():
    try:
        with Browser() as b:
            yield b
    except BrowserMissing as e:
        if os.environ.get("SPYRE_REQUIRE_BROWSER"):  # CI, which installs them: a failure, not a skip
            pytest.fail(f"SPYRE_REQUIRE_BROWSER is set and there is no browser to drive: {e}")
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


def test_a_cpu_fallback_is_marked_in_every_colouring(browser, tmp_path):
    from selenium.webdriver.support.ui import Select

    source = tmp_path / "fallback.mlir"
    source.write_text(FALLBACK)
    out = tmp_path / "fallback.html"
    assert spyre_report([str(source), "-o", str(out)]) == 0
    browser.open(out)
    cumsum = browser.js("return 'o' + spyreReport.data.ops.find(o => o.short === 'cumsum').id;")
    for level in ("ops", "kernels"):
        Select(browser.driver.find_element("id", "level")).select_by_value(level)
        browser.wait(f"spyreReport.cy.$id('{cumsum}').length")
        for overlay in ("time", "placement", "error"):
            Select(browser.driver.find_element("id", "overlay")).select_by_value(overlay)
            style = browser.js(
                f"""const n = spyreReport.cy.$id('{cumsum}');
                return [n.data('label'), n.style('border-style'), n.style('border-color'), n.style('border-width')];"""
            )
            assert style[0].startswith("CPU: cumsum") and style[1] == "dashed"
            assert style[2] == "rgb(204,0,0)" and style[3] == "4px", (level, overlay, style)
    browser.js(f"spyreReport.select('{cumsum}');")
    text = browser.panel_text()
    assert "on the CPU: a fallback" in text and "no device lowering" in text


@pytest.mark.full
@pytest.mark.parametrize("name", ["minilm", "smollm2-decode"])
def test_a_models_report_opens_offline_and_draws(browser, tmp_path, name):
    """The demo's models (their wheels): every view drawn, nothing fetched, a kernel clicked."""
    out = tmp_path / f"{name}.html"
    assert spyre_report([name, "-o", str(out)]) == 0
    browser.open(out)
    assert browser.network_requests() == []
    assert browser.graph_pixels() > 1000
    for view in ("timeline", "lx", "roofline", "host"):
        browser.show(view)
        assert browser.plot_marks(view) > 0, view
    longest = browser.js("return [...spyreReport.kernels.values()].sort((a, b) => b.time_s - a.time_s)[0].name;")
    browser.click_kernel(longest)
    assert f"kernel {longest}" in browser.panel_text()
    assert "spyre_isa.program" in browser.wait(
        "(document.querySelector('#panel pre.isa') || {}).textContent.includes('spyre_isa.')"
        " && document.querySelector('#panel pre.isa').textContent"
    )
