// The report page: the graph (cytoscape.js, laid out by dagre), the plots (plotly.js), the
// kernel panel and the IR of every stage. The data is the JSON of spyre_mlir/report/run.py.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const figures = JSON.parse(document.getElementById("report-figures").textContent);
  const US = 1e6;
  const kernels = new Map(data.kernels.map((k) => [k.name, k]));
  const ops = new Map(data.ops.map((o) => [o.id, o]));
  const total = data.summary.total_time_s || 1e-30;
  const report = (window.spyreReport = { data, kernels, ops, ready: false });

  // ------------------------------------------------------------------ helpers
  const el = (tag, attrs, ...children) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "onclick") e.addEventListener("click", v);
      else e.setAttribute(k, v);
    }
    for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    return e;
  };
  const us = (s) => (s * US).toFixed(2) + " us";
  const bytes = (b) => (b >= 1 << 20 ? (b / (1 << 20)).toFixed(2) + " MiB" : b >= 1024 ? (b / 1024).toFixed(1) + " KiB" : b + " B");
  const inflated = new Map();
  function inflate(b64) {
    if (!inflated.has(b64)) {
      const raw = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const stream = new Blob([raw]).stream().pipeThrough(new DecompressionStream("gzip"));
      inflated.set(b64, new Response(stream).text());
    }
    return inflated.get(b64);
  }

  // ------------------------------------------------------------------ header and tabs
  document.getElementById("title").textContent = data.title || "spyre report";
  const s = data.summary;
  const cpuOps = data.ops.filter((o) => o.placement === "cpu").length;
  document.getElementById("summary").append(
    el("span", {}, `simulated ${us(s.total_time_s)} in ${s.launches} launches`),
    el("span", {}, `DDR ${bytes(s.ddr_bytes)}`),
    el("span", {}, `${(s.macs / 1e6).toFixed(1)} M MACs`),
    el("span", {}, `host transfers ${us(s.transfers_s)}`),
    el("span", {}, `host round trips ${s.host_round_trips} (${us(s.host_round_trip_s)})`),
    el("span", { class: cpuOps ? "cpu" : "" }, `torch ops ${s.torch_ops}, on the CPU ${cpuOps}`),
  );
  const compared = data.kernels.flatMap((k) => k.errors.filter((e) => e.compared));
  const within = compared.filter((e) => e.within).length;
  document.getElementById("summary").append(
    el("span", { class: within < compared.length ? "cpu" : "", title: s.reference }, `kernel outputs within the DL16 bound: ${within} of ${compared.length} compared`),
  );
  const shown = new Set();
  function show(view) {
    for (const b of document.querySelectorAll("#tabs button")) b.classList.toggle("active", b.dataset.view === view);
    for (const v of document.querySelectorAll(".view")) v.classList.toggle("active", v.id === "view-" + view);
    if (figures[view] && !shown.has(view)) {
      shown.add(view);
      const fig = figures[view];
      Plotly.newPlot("plot-" + view, fig.data, fig.layout, { responsive: true, displaylogo: false });
    }
    if (view === "graph" && report.cy) report.cy.resize();
    if (view === "ir") renderIR();
  }
  report.show = show;
  for (const b of document.querySelectorAll("#tabs button")) b.addEventListener("click", () => show(b.dataset.view));

  // ------------------------------------------------------------------ overlays
  const RAMP = ["#ffffcc", "#ffeda0", "#fed976", "#feb24c", "#fd8d3c", "#fc4e2a", "#e31a1c", "#b10026"];
  const ramp = (x) => RAMP[Math.max(0, Math.min(RAMP.length - 1, Math.floor(x * RAMP.length)))];
  const PLACEMENT = { device: "#9ecae1", view: "#deebf7", host: "#c7b3e6", cpu: "#ff6b6b", folded: "#e0e0e0", kernel: "#9ecae1" };
  const maxTime = Math.max(...data.kernels.map((k) => k.time_s), 1e-30);
  function timeColour(t) {
    return t == null ? "#eeeeee" : ramp(Math.sqrt(t / maxTime));
  }
  function errorColour(e) {
    if (!e) return "#eeeeee";
    if (!e.within || e.worst_ratio == null || e.worst_ratio > 1) return "#e31a1c";
    return e.worst_ratio > 0.25 ? "#fed976" : "#74c476";
  }
  function kernelError(k) {
    const compared = (k.errors || []).filter((e) => e.compared);
    if (!compared.length) return null;
    return compared.reduce((a, b) => (!b.within || (b.worst_ratio || 0) > (a.worst_ratio || 0) ? b : a));
  }
  const LEGENDS = {
    time: [["#ffffcc", "short"], ["#fd8d3c", ""], ["#b10026", "longest kernel"], ["#eeeeee", "no kernel"]],
    placement: [["#9ecae1", "device"], ["#deebf7", "free view"], ["#c7b3e6", "host by design"], ["#ff6b6b", "CPU fallback"], ["#e0e0e0", "folded away"]],
    error: [["#74c476", "error < 1/4 of the DL16 bound"], ["#fed976", "within the bound"], ["#e31a1c", "past the bound"], ["#eeeeee", "not compared"]],
  };
  function overlay(kind) {
    const cy = report.cy;
    if (!cy) return;
    cy.batch(() => {
      cy.nodes().forEach((n) => {
        const d = n.data();
        let c;
        if (kind === "time") c = timeColour(d.time);
        else if (kind === "placement") c = PLACEMENT[d.placement] || "#eeeeee";
        else c = errorColour(d.error);
        n.data("colour", c);
      });
    });
    const legend = document.getElementById("legend");
    legend.replaceChildren(...LEGENDS[kind].flatMap(([c, t]) => [el("span", { class: "sw", style: "background:" + c }), t]));
  }
  document.getElementById("overlay").addEventListener("change", (e) => overlay(e.target.value));

  // ------------------------------------------------------------------ graph
  // Free views and folded ops are passed through (their producers feed their consumers) unless
  // shown; at the kernel level each kernel is one node and ops on the host are their own.
  const transparent = (o) => !o.home && (o.placement === "view" || o.placement === "folded");
  const preds = new Map();
  for (const [a, b] of data.edges) {
    if (!preds.has(b)) preds.set(b, []);
    preds.get(b).push(a);
  }
  const resolved = new Map();
  function sources(id, hide) {
    // the visible nodes an edge from `id` comes from
    const o = id[0] === "o" ? ops.get(Number(id.slice(1))) : null;
    if (!o || !hide || !transparent(o)) return [id];
    if (!resolved.has(id)) {
      resolved.set(id, []);
      resolved.set(id, [...new Set((preds.get(id) || []).flatMap((p) => sources(p, hide)))]);
    }
    return resolved.get(id);
  }
  function elements(level, showAll) {
    const hide = !showAll;
    resolved.clear();
    const nodes = [];
    const edges = new Map();
    const group = (id) => {
      if (level !== "kernels" || id[0] !== "o") return id;
      const o = ops.get(Number(id.slice(1)));
      return o && o.home ? "k:" + o.home : id;
    };
    const parents = new Set(level === "ops" ? data.ops.filter((o) => o.home).map((o) => o.home) : []);
    for (const k of data.kernels) {
      if (!k.program && !k.ops.length) continue; // a copy the host made (no launch)
      nodes.push({
        data: {
          id: "k:" + k.name,
          label: `${k.name}  ${us(k.time_s)}` + (k.relayout ? "  relayout" : ""),
          kind: "kernel",
          kernel: k.name,
          time: k.time_s,
          placement: "kernel",
          error: kernelError(k),
        },
        classes: parents.has(k.name) ? "kernel" : "kernel lone",
      });
      const held = k.values.filter((v) => v >= 0);
      const serve = (f, t) => {
        if (f !== t) edges.set(`${f}>${t}`, { data: { id: `s:${f}:${t}`, source: f, target: t }, classes: "serves" });
      };
      if (!parents.has(k.name) && held.length) {
        // a relayout (or a kernel whose op lives elsewhere): from the op whose value it holds
        for (const v of new Set(held)) for (const f of ops.has(v) ? sources("o" + v, hide).map(group) : []) serve(f, "k:" + k.name);
      } else if (!parents.has(k.name)) {
        // part of its ops' work, which their own kernels finish
        for (const i of new Set(k.ops)) if (ops.has(i)) serve("k:" + k.name, group("o" + i));
      }
    }
    for (const o of data.ops) {
      if (hide && transparent(o)) continue;
      if (level === "kernels" && o.home) continue;
      const k = o.home ? kernels.get(o.home) : null;
      nodes.push({
        data: {
          id: "o" + o.id,
          parent: k && level === "ops" ? "k:" + k.name : undefined,
          label: (o.placement === "cpu" ? "CPU: " : "") + o.short + "\n" + (o.types[0] || ""),
          kind: "op",
          op: o.id,
          kernel: k ? k.name : null,
          time: k ? k.time_s : null,
          placement: o.placement,
          error: o.error,
        },
        classes: "op " + o.placement,
      });
    }
    const ends = new Set(data.edges.flat());
    for (const id of ends) {
      if (id[0] === "a" && level === "ops") nodes.push({ data: { id, label: "input " + id.slice(1), kind: "io", placement: "io" }, classes: "io" });
      if (id[0] === "r") nodes.push({ data: { id, label: "output " + id.slice(1), kind: "io", placement: "io" }, classes: "io" });
    }
    const present = new Set(nodes.map((n) => n.data.id));
    for (const [a, b] of data.edges) {
      if (!present.has(group(b)) && !(b[0] === "o" && level === "kernels")) continue;
      const to = group(b);
      if (!present.has(to)) continue;
      for (const f of sources(a, hide).map(group)) {
        if (f === to || !present.has(f)) continue;
        const key = `${f}>${to}`;
        if (!edges.has(key)) edges.set(key, { data: { id: "d" + edges.size, source: f, target: to } });
      }
    }
    return nodes.concat([...edges.values()].filter((e) => present.has(e.data.source) && present.has(e.data.target)));
  }
  report.visibleOps = () => data.ops.filter((o) => !transparent(o)).length;

  const LAYOUT = { name: typeof cytoscapeDagre !== "undefined" ? "dagre" : "breadthfirst", rankDir: "TB", nodeSep: 12, rankSep: 22, animate: false };
  function buildGraph() {
    if (typeof cytoscapeDagre !== "undefined") cytoscape.use(cytoscapeDagre);
    const levelSelect = document.getElementById("level");
    if (report.visibleOps() > 400) levelSelect.value = "kernels"; // a large graph opens at the kernel level
    const cy = cytoscape({
      container: document.getElementById("cy"),
      elements: elements(levelSelect.value, document.getElementById("all-ops").checked),
      wheelSensitivity: 0.3,
      style: [
        { selector: "node", style: { "background-color": "data(colour)", label: "data(label)", "font-size": 9, "text-wrap": "wrap", "text-valign": "center", "border-width": 1, "border-color": "#666", shape: "round-rectangle", width: 110, height: 30 } },
        { selector: "node.kernel", style: { "text-valign": "top", "text-halign": "center", "font-size": 10, "font-weight": "bold", "background-opacity": 0.55, "border-width": 2, "border-color": "#2b5d8c", padding: 8 } },
        { selector: "node.lone", style: { "text-valign": "center", width: 130, height: 26, "background-opacity": 1 } },
        { selector: "node.io", style: { "background-color": "#fff", shape: "ellipse", width: 70, height: 22, "border-style": "dotted" } },
        { selector: "node.folded", style: { "border-style": "dotted", color: "#888" } },
        { selector: "node.cpu", style: { "border-width": 4, "border-color": "#c00", "border-style": "dashed", color: "#900", "font-weight": "bold" } },
        { selector: "node.host", style: { "border-color": "#6a3d9a", "border-width": 2 } },
        { selector: "node:selected", style: { "border-width": 4, "border-color": "#000", "overlay-opacity": 0.08 } },
        { selector: "edge", style: { width: 1, "line-color": "#999", "target-arrow-color": "#999", "target-arrow-shape": "triangle", "curve-style": "bezier", "arrow-scale": 0.7 } },
        { selector: "edge.serves", style: { "line-style": "dashed", "line-color": "#2b5d8c", "target-arrow-color": "#2b5d8c" } },
      ],
      layout: LAYOUT,
    });
    report.cy = cy;
    const relayout = () => {
      cy.elements().remove();
      cy.add(elements(levelSelect.value, document.getElementById("all-ops").checked));
      cy.layout(LAYOUT).run();
      overlay(document.getElementById("overlay").value);
      cy.fit(undefined, 20);
    };
    levelSelect.addEventListener("change", relayout);
    document.getElementById("all-ops").addEventListener("change", relayout);
    if (cy.nodes().length > 60) {
      // a large graph opens readable at its start; "fit" shows the whole
      const top = cy.nodes(":childless").min((n) => n.position("y")).ele;
      cy.zoom(0.9);
      cy.center(top);
      cy.panBy({ x: 0, y: -(cy.height() / 2 - 60) });
    } else cy.fit(undefined, 20);
    overlay(document.getElementById("overlay").value);
    cy.on("tap", "node", (e) => select(e.target));
    document.getElementById("fit").addEventListener("click", () => cy.fit(undefined, 20));
    report.ready = true;
  }

  // ------------------------------------------------------------------ the panel
  function row(name, value, num) {
    return el("tr", {}, el("th", {}, name), el("td", num ? { class: "num" } : {}, value));
  }
  function opLink(i) {
    const o = ops.get(i);
    return el("a", { class: "link", onclick: () => select(report.cy.$id("o" + i)) }, o ? `${o.short} #${i}` : `#${i}`);
  }
  function select(node) {
    if (!node || !node.length) return;
    report.cy.elements().unselect();
    node.select();
    const d = node.data();
    const panel = document.getElementById("panel");
    panel.replaceChildren();
    if (d.kind === "op") {
      const o = ops.get(d.op);
      panel.append(
        el("h2", { class: o.placement === "cpu" ? "cpu" : "" }, `${o.name} #${o.id}`),
        el("table", {}, row("result", o.types.join(", ")), row("runs", placementText(o)), o.reason ? row("why", o.reason) : "", row("kernels", o.kernels.join(", ") || "-")),
        o.error ? el("p", {}, errorText(o.error)) : "",
        el("pre", {}, o.text),
        el("a", { class: "link", onclick: () => findInIR("input", originPattern(o.id)) }, "show in the IR"),
      );
      if (d.kernel) kernelPanel(panel, kernels.get(d.kernel));
    } else if (d.kind === "kernel") {
      kernelPanel(panel, kernels.get(d.kernel));
    } else {
      panel.append(el("h2", {}, d.label));
    }
  }
  report.select = (id) => select(report.cy.$id(id));
  function placementText(o) {
    return { device: "on the device", view: "a free view on the device", host: "on the host, by design", cpu: "on the CPU: a fallback", folded: "folded away by the compiler" }[o.placement];
  }
  function errorText(e) {
    return `DL16 error against the float64 reference: max |error| ${e.max_abs_error.toPrecision(3)}, bound ${e.max_bound.toPrecision(3)}, worst error/bound ${e.worst_ratio == null ? "inf" : e.worst_ratio.toPrecision(3)}: ${e.within ? "within the bound" : "PAST the bound"}`;
  }
  function kernelPanel(panel, k) {
    if (!k) return;
    const e = k.engines_s;
    const busy = el(
      "table",
      { class: "times" },
      row("kernel time", us(k.time_s), true),
      row("dispatch (start)", us(k.overhead_s), true),
      row("critical path", us(k.cycles / data.config.clock_hz), true),
      row("DDR (busiest core)", us(e.ddr), true),
      row("PT (busiest core)", us(e.pt), true),
      row("SFP (busiest core)", us(e.sfp), true),
      row("ring (busiest core)", us(e.ring), true),
      row("DDR bytes at full bandwidth", us(k.ddr_at_bandwidth_s), true),
    );
    const facts = el(
      "table",
      {},
      row("cores", k.cores, true),
      row("instructions", k.instructions, true),
      row("DDR read / written", `${bytes(k.ddr_read_bytes)} / ${bytes(k.ddr_write_bytes)}`),
      row("ring", bytes(k.ring_bytes)),
      row("MACs", k.macs, true),
      row("PT / SFP / DDR use", `${(100 * k.pt_utilization).toFixed(1)}% / ${(100 * k.sfp_utilization).toFixed(1)}% / ${(100 * k.ddr_utilization).toFixed(1)}%`),
      row("roofline attainment", (100 * k.attainment).toFixed(1) + "%"),
      row("bottleneck", k.bottleneck),
    );
    const plan = el("table", {});
    for (const [key, v] of Object.entries(k.plan || {})) {
      plan.append(row(key, typeof v === "string" ? v : Object.entries(v).map(([a, b]) => `${a} = ${b}`).join(", ")));
    }
    const torch = el("p", {}, "torch ops: ");
    k.ops.forEach((i, n) => torch.append(n ? ", " : "", opLink(i)));
    const errors = el("ul", {});
    for (const err of k.errors) errors.append(el("li", {}, `output ${err.output} (${err.value >= 0 ? "torch op #" + err.value : "no torch value"}): ` + (err.compared ? errorText(err) : err.why || "not compared")));
    const isa = el("pre", { class: "isa" }, "inflating ...");
    if (k.program && data.programs[k.program]) inflate(data.programs[k.program]).then((t) => (isa.textContent = t));
    else isa.textContent = "no program (a copy the host made)";
    panel.append(
      el("h2", {}, `kernel ${k.name}` + (k.relayout ? " (relayout)" : "")),
      el("h3", {}, "time (engines overlap: the rows do not add up)"),
      busy,
      facts,
      torch,
      el("h3", {}, "plan"),
      plan,
      el("h3", {}, "DL16 error of its outputs"),
      errors,
      el("h3", {}, "spyre op"),
      el("pre", { class: "spyre" }, k.spyre || "(not captured)"),
      el("h3", {}, `spyre_isa program @${k.program || "-"} (its per-core streams)`),
      isa,
      el("a", { class: "link", onclick: () => findInIR(lastSpyreStage(), `"${k.name}"`) }, "show in the IR"),
    );
  }

  // ------------------------------------------------------------------ IR
  const stageSelect = document.getElementById("ir-stage");
  data.stages.forEach((st, i) => stageSelect.append(el("option", { value: i }, st.name)));
  const irText = document.getElementById("ir-text");
  const ir = { stage: 0, lines: [], focus: 0, search: "" };
  const WINDOW = 400;
  function lastSpyreStage() {
    const i = data.stages.findIndex((st) => st.name === "convert-spyre-to-isa");
    return i > 0 ? data.stages[i - 1].name : data.stages[data.stages.length - 1].name;
  }
  function originPattern(id) {
    return new RegExp(`origin<\\[(?:[0-9, ]*, )?${id}(?:, [0-9, ]*)?\\]`);
  }
  async function loadStage(i) {
    ir.stage = i;
    stageSelect.value = String(i);
    ir.lines = (await inflate(data.stages[i].text)).split("\n");
  }
  function renderIR() {
    const lo = Math.max(0, ir.focus - 8);
    const hi = Math.min(ir.lines.length, lo + WINDOW);
    const frag = document.createDocumentFragment();
    if (lo > 0) frag.append(`// ... ${lo} lines above\n`);
    for (let i = lo; i < hi; i++) {
      const line = el("span", i === ir.focus && ir.search ? { class: "hit" } : {}, ir.lines[i] + "\n");
      line.addEventListener("click", () => irClick(ir.lines[i]));
      frag.append(line);
    }
    if (hi < ir.lines.length) frag.append(`// ... ${ir.lines.length - hi} lines below`);
    irText.replaceChildren(frag);
    irText.scrollTop = 0;
    document.getElementById("ir-status").textContent = `${data.stages[ir.stage].name}: ${ir.lines.length} lines, from line ${lo + 1}`;
  }
  function find(pattern, from) {
    const test = pattern instanceof RegExp ? (l) => pattern.test(l) : (l) => l.includes(pattern);
    for (let n = 0; n < ir.lines.length; n++) {
      const i = (from + n) % ir.lines.length;
      if (test(ir.lines[i])) return i;
    }
    return -1;
  }
  async function findInIR(stageName, pattern) {
    const i = Math.max(0, data.stages.findIndex((st) => st.name === stageName));
    await loadStage(i);
    ir.search = pattern;
    const at = find(pattern, 0);
    ir.focus = Math.max(0, at);
    show("ir");
    renderIR();
  }
  report.findInIR = findInIR;
  function irClick(line) {
    const k = /spyre\.kernel "([\w.]+)"|kernel = "([\w.]+)"/.exec(line);
    const name = k && (k[1] || k[2]);
    if (name && kernels.has(name)) {
      show("graph");
      select(report.cy.$id("k:" + name));
      return;
    }
    const o = /origin<\[([0-9]+)/.exec(line);
    if (o) {
      show("graph");
      select(report.cy.$id("o" + o[1]));
    }
  }
  stageSelect.addEventListener("change", async () => {
    await loadStage(Number(stageSelect.value));
    ir.focus = 0;
    ir.search = "";
    renderIR();
  });
  document.getElementById("ir-next").addEventListener("click", () => {
    const q = document.getElementById("ir-search").value;
    if (!q) return;
    ir.search = q;
    const at = find(q, ir.focus + 1);
    if (at >= 0) ir.focus = at;
    renderIR();
  });

  // ------------------------------------------------------------------ the trace
  async function traceBlob() {
    return new Blob([await inflate(data.trace)], { type: "application/json" });
  }
  document.getElementById("trace-download").addEventListener("click", async () => {
    const a = el("a", { href: URL.createObjectURL(await traceBlob()), download: "spyre_trace.json" });
    document.body.append(a);
    a.click();
    a.remove();
  });
  document.getElementById("trace-perfetto").addEventListener("click", async () => {
    const buffer = await (await traceBlob()).arrayBuffer();
    const win = window.open("https://ui.perfetto.dev/#!/");
    if (!win) return;
    const timer = setInterval(() => win.postMessage("PING", "https://ui.perfetto.dev"), 250);
    window.addEventListener("message", function onPong(e) {
      if (e.data !== "PONG") return;
      clearInterval(timer);
      window.removeEventListener("message", onPong);
      win.postMessage({ perfetto: { buffer, title: data.title || "spyre trace" } }, "https://ui.perfetto.dev");
    });
  });

  loadStage(0).then(() => renderIR());
  buildGraph();
})();
