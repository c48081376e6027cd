"""The report's plots, as plotly figures (their JSON goes into the page; plotly.js draws them):

    timeline     per core, each kernel from its start to that core's last instruction
    lx           LX bytes per core over time, against the LX size and the planner's budget
    roofline     kernels with MACs by arithmetic intensity against the PT peak and DDR bandwidth;
                 the others by DDR bytes against the bandwidth
    host         where the call's time goes (kernels, transfers, host round trips) and its steps

Every number comes from the report's data (run.py), which takes them from the profile.
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

US = 1e6
BOTTLENECK_COLOURS = {"pt": "#4c78a8", "sfp": "#f58518", "ddr": "#54a24b"}


def timeline(data: dict[str, Any]) -> go.Figure:
    """Per core, a bar per kernel from its start to the core's last instruction (the kernel's
    launch or dispatch overhead first); a row for the kernels themselves."""
    cores = data["config"]["cores"]
    fig = go.Figure()
    rows: dict[str, dict[str, list[Any]]] = {}
    for k in data["kernels"]:
        colour = k["bottleneck"] if k["instructions"] else "ddr"
        row = rows.setdefault(colour, {"y": [], "base": [], "x": [], "text": []})
        row["y"].append("kernels")
        row["base"].append(k["start_s"] * US)
        row["x"].append(k["time_s"] * US)
        row["text"].append(f"{k['name']}: {k['time_s'] * US:.2f} us, {k['bottleneck']}")
        body = (k["start_s"] + k["overhead_s"]) * US
        for core, end in k["core_ends_s"].items():
            row["y"].append(f"core {int(core):02d}")
            row["base"].append(body)
            row["x"].append(end * US)
            row["text"].append(f"{k['name']} on core {core}: {end * US:.2f} us")
    for colour, row in rows.items():
        fig.add_trace(
            go.Bar(
                name=f"bound by {colour}",
                orientation="h",
                y=row["y"],
                base=row["base"],
                x=row["x"],
                hovertext=row["text"],
                hoverinfo="text",
                marker_color=BOTTLENECK_COLOURS.get(colour, "#999"),
            )
        )
    order = ["kernels", *[f"core {c:02d}" for c in range(cores)]]
    fig.update_layout(
        barmode="overlay",
        title="Per-core timeline of the profiled call (every instruction: the Perfetto trace)",
        xaxis_title="simulated time (us)",
        yaxis={"categoryorder": "array", "categoryarray": order[::-1]},
        height=220 + 14 * cores,
        margin={"l": 70, "r": 20, "t": 50, "b": 40},
    )
    return fig


def lx_occupancy(data: dict[str, Any]) -> go.Figure:
    """Per core, the LX bytes each launch touches (with the values kept resident from earlier
    launches), held over the launch."""
    config = data["config"]
    fig = go.Figure()
    end = 0.0
    for core in range(config["cores"]):
        xs: list[float | None] = []
        ys: list[float | None] = []
        for k in data["kernels"]:
            if not k["lx_bytes"]:
                continue
            mb = k["lx_bytes"][core] / 2**20
            xs += [k["start_s"] * US, (k["start_s"] + k["time_s"]) * US]
            ys += [mb, mb]
            end = max(end, (k["start_s"] + k["time_s"]) * US)
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                mode="lines",
                name=f"core {core:02d}",
                line={"width": 1},
                hovertemplate=f"core {core:02d}: %{{y:.3f}} MiB at %{{x:.2f}} us<extra></extra>",
            )
        )
    for y, what, dash in (
        (config["lx_bytes"] / 2**20, "LX size", "solid"),
        (config["lx_bytes"] * config["lx_planner_fraction"] / 2**20, "planner budget", "dash"),
    ):
        fig.add_shape(type="line", x0=0, x1=max(end, 1e-3), y0=y, y1=y, line={"color": "#c00", "dash": dash})
        fig.add_annotation(x=max(end, 1e-3), y=y, text=what, showarrow=False, xanchor="right", yanchor="bottom")
    fig.update_layout(
        title="LX occupancy per core over time",
        xaxis_title="simulated time (us)",
        yaxis_title="LX in use (MiB)",
        height=420,
        margin={"l": 60, "r": 20, "t": 50, "b": 40},
    )
    return fig


def roofline(data: dict[str, Any]) -> go.Figure:
    """Kernels with MACs: achieved FLOP/s by arithmetic intensity, under min(PT peak, AI x DDR
    bandwidth). Beside it, kernels without: achieved DDR bytes/s by bytes moved."""
    from plotly.subplots import make_subplots

    config = data["config"]
    peak = 2 * config["pt_rows"] * config["pt_lanes"] * config["corelets_used"] * config["clock_hz"] * config["cores"]
    bw = config["ddr_bytes_per_s"]
    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=("kernels with MACs: FLOP/s by FLOP per DDR byte", "the others: DDR bytes/s by bytes"),
    )
    compute = [k for k in data["kernels"] if k["macs"] and k["arithmetic_intensity"]]
    memory = [k for k in data["kernels"] if not k["macs"] and k["ddr_read_bytes"] + k["ddr_write_bytes"]]
    if compute:
        ais = [k["arithmetic_intensity"] for k in compute]
        lo, hi = min(ais) / 4, max(ais) * 4
        ridge = peak / bw
        xs = sorted({lo, hi, min(max(ridge, lo), hi)})
        fig.add_trace(
            go.Scatter(x=xs, y=[min(peak, x * bw) for x in xs], mode="lines", name="roof", line={"color": "#c00"}),
            1,
            1,
        )
        for bottleneck, group in _by_bottleneck(compute):
            fig.add_trace(
                go.Scatter(
                    x=[k["arithmetic_intensity"] for k in group],
                    y=[2 * k["macs"] / k["time_s"] for k in group],
                    mode="markers",
                    name=f"kernels, {bottleneck.upper()}-bound",
                    legendgroup=bottleneck,
                    text=[k["name"] for k in group],
                    hovertemplate="%{text}: AI %{x:.1f}, %{y:.3g} FLOP/s<extra></extra>",
                    marker={"color": BOTTLENECK_COLOURS.get(bottleneck, "#999"), "size": 8},
                ),
                1,
                1,
            )
    if memory:
        sizes = [k["ddr_read_bytes"] + k["ddr_write_bytes"] for k in memory]
        fig.add_trace(
            go.Scatter(
                x=[min(sizes) / 2, max(sizes) * 2],
                y=[bw, bw],
                mode="lines",
                name="DDR bandwidth",
                line={"color": "#c00", "dash": "dash"},
            ),
            1,
            2,
        )
        for bottleneck, group in _by_bottleneck(memory):
            moved = [k["ddr_read_bytes"] + k["ddr_write_bytes"] for k in group]
            fig.add_trace(
                go.Scatter(
                    x=moved,
                    y=[b / k["time_s"] for b, k in zip(moved, group)],
                    mode="markers",
                    name=f"kernels without MACs, {bottleneck.upper()}-bound",
                    legendgroup=bottleneck,
                    text=[k["name"] for k in group],
                    hovertemplate="%{text}: %{x} bytes, %{y:.3g} B/s<extra></extra>",
                    marker={"color": BOTTLENECK_COLOURS.get(bottleneck, "#999"), "size": 8, "symbol": "diamond"},
                ),
                1,
                2,
            )
    fig.update_xaxes(type="log", title_text="FLOP per DDR byte", row=1, col=1)
    fig.update_yaxes(type="log", title_text="FLOP/s", row=1, col=1)
    fig.update_xaxes(type="log", title_text="DDR bytes", row=1, col=2)
    fig.update_yaxes(type="log", title_text="bytes/s", row=1, col=2)
    fig.update_layout(title="Roofline", height=440, margin={"l": 60, "r": 20, "t": 70, "b": 40})
    return fig


def _by_bottleneck(kernels: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """The kernels grouped by their bottleneck (a trace each: the legend names the colour)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for k in kernels:
        groups.setdefault(k["bottleneck"], []).append(k)
    return sorted(groups.items())


def host_round_trips(data: dict[str, Any]) -> go.Figure:
    """The call's time by where it goes, and the call's steps in order (launches, host ops,
    transfers), host waits marked."""
    from plotly.subplots import make_subplots

    s = data["summary"]
    fig = make_subplots(
        rows=2, cols=1, row_heights=[0.45, 0.55], subplot_titles=("where the call's time goes", "the call's steps")
    )
    parts = [
        ("device kernels", s["total_time_s"]),
        ("host transfers", s["transfers_s"]),
        (f"host round trips ({s['host_round_trips']})", s["host_round_trip_s"]),
    ]
    fig.add_trace(
        go.Bar(
            x=[v * US for _, v in parts],
            y=[name for name, _ in parts],
            orientation="h",
            marker_color=["#4c78a8", "#72b7b2", "#e45756"],
            hovertemplate="%{y}: %{x:.2f} us<extra></extra>",
            showlegend=False,
        ),
        1,
        1,
    )
    kinds = {"launch": ("#4c78a8", 0), "to_device": ("#72b7b2", 1), "from_device": ("#72b7b2", 1)}
    kinds |= {"host": ("#b279a2", 2), "cpu": ("#e45756", 3)}
    for kind, (colour, y) in kinds.items():
        steps = [(i, st) for i, st in enumerate(data["host_sequence"]) if st["kind"] == kind]
        if not steps:
            continue
        fig.add_trace(
            go.Scatter(
                x=[i for i, _ in steps],
                y=[["device", "transfer", "host (by design)", "CPU fallback"][y]] * len(steps),
                mode="markers",
                name=kind,
                marker={"color": colour, "symbol": "line-ns-open" if kind == "launch" else "circle", "size": 9},
                text=[f"{st.get('name', kind)} {st.get('reason', '')}" for _, st in steps],
                hovertemplate="step %{x}: %{text}<extra></extra>",
            ),
            2,
            1,
        )
    fig.update_xaxes(title_text="simulated time (us)", row=1, col=1)
    fig.update_xaxes(title_text="step of the function", row=2, col=1)
    fig.update_layout(title="Host round trips", height=420, margin={"l": 130, "r": 20, "t": 70, "b": 40})
    return fig


FIGURES = {"timeline": timeline, "lx": lx_occupancy, "roofline": roofline, "host": host_round_trips}
