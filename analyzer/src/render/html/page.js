// profil-rs interactive report. Written for profil-rs (no library). The data is the report's
// JSON as `--json` writes it, the call tree of the sampled stacks, source lines, processes and
// diff rows (analyzer/src/render/html.rs); this script lays them out, sorts, filters and sums
// the call tree into frames. `window.profil` exposes the state for the browser tests.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const el = (tag, attrs, ...kids) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v;
      else if (k === "text") e.textContent = v;
      else e.setAttribute(k, v);
    }
    for (const k of kids) e.append(k);
    return e;
  };
  // Seconds as the text report writes them (crate::units::human_seconds).
  function secs(s) {
    if (s === null || s === undefined) return "";
    if (s === 0) return "0.00 s";
    const a = Math.abs(s);
    let v = s, unit = "s";
    if (a >= 1) { v = s; unit = "s"; }
    else if (a >= 1e-3) { v = s * 1e3; unit = "ms"; }
    else if (a >= 1e-6) { v = s * 1e6; unit = "us"; }
    else { v = s * 1e9; unit = "ns"; }
    const av = Math.abs(v);
    const digits = av >= 100 ? 0 : av >= 10 ? 1 : 2;
    return v.toFixed(digits) + " " + unit;
  }
  // An interval as the text report writes it (crate::render::text::interval).
  function interval(lo, hi) {
    if (lo === null || lo === undefined || hi === null || hi === undefined) return "";
    const l = secs(lo), h = secs(hi);
    if (lo === 0) return "0–" + h;
    const [lv, lu] = l.split(" "), [hv, hu] = h.split(" ");
    return lu === hu ? lv + "–" + hv + " " + hu : l + "–" + h;
  }
  // Two decimals as the text report prints them (Rust's round-half-to-even on the exact
  // value), where toFixed rounds an exact tie up: a tie at two decimals is an odd number of
  // eighths (12.625 is "12.62" in the report, "12.63" by toFixed).
  const fixed2 = (x) => {
    const e = x * 8;
    if (Number.isInteger(e) && Math.abs(e) % 2 === 1 && Math.abs(x) < 1e12) {
      const f = Math.floor(Math.abs(x) * 100);
      return (x < 0 ? "-" : "") + ((f % 2 === 0 ? f : f + 1) / 100).toFixed(2);
    }
    return x.toFixed(2);
  };
  const pct = (x) => (x === null || x === undefined) ? "" : fixed2(x);

  async function load() {
    const b64 = $("profile-data").textContent.trim();
    const raw = atob(b64);
    const bytes = new Uint8Array(raw.length);
    for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return JSON.parse(await new Response(stream).text());
  }

  const state = { ready: false, selected: null, zoom: null, search: "", matchShare: null };
  window.profil = state;

  // ---- a sortable, filterable table ------------------------------------------------------
  // cols: {key, label, num, fmt(row), value(row), cls}
  function makeTable(table, cols, rows, opts) {
    const t = { cols, rows, shown: rows, sortKey: null, desc: true, limit: opts.limit || 500, filter: "" };
    const thead = el("thead"), tbody = el("tbody"), tfoot = el("tfoot");
    table.replaceChildren(thead, tbody, tfoot);
    const hr = el("tr");
    cols.forEach((c) => {
      const b = el("button", { type: "button", text: c.label });
      const th = el("th", { scope: "col", class: (c.num ? "num " : "") + (c.cls || ""), "data-key": c.key }, b);
      b.addEventListener("click", () => t.sort(c.key));
      hr.append(th);
    });
    thead.append(hr);
    t.render = function () {
      const f = t.filter.toLowerCase();
      t.shown = f ? rows.filter((r) => opts.text(r).toLowerCase().includes(f)) : rows.slice();
      if (t.sortKey !== null) {
        const c = cols.find((c) => c.key === t.sortKey);
        const dir = t.desc ? -1 : 1;
        t.shown.sort((a, b) => {
          const x = c.value(a), y = c.value(b);
          if (x === y) return 0;
          if (x === null || x === undefined) return 1;
          if (y === null || y === undefined) return -1;
          return (x < y ? -1 : 1) * dir;
        });
      }
      for (const th of hr.children) {
        if (th.dataset.key === t.sortKey) th.setAttribute("aria-sort", t.desc ? "descending" : "ascending");
        else th.removeAttribute("aria-sort");
      }
      const frag = document.createDocumentFragment();
      for (const r of t.shown.slice(0, t.limit)) {
        const tr = el("tr", { tabindex: "0" });
        tr._row = r;
        if (opts.rowClass) tr.className = opts.rowClass(r);
        if (opts.key(r) === state.selected) tr.classList.add("selected");
        for (const c of cols) tr.append(el("td", { class: (c.num ? "num " : "") + (c.cls || ""), text: c.fmt(r) }));
        frag.append(tr);
      }
      tbody.replaceChildren(frag);
      if (opts.footer) tfoot.replaceChildren(opts.footer(t.shown, cols.length));
      if (opts.rendered) opts.rendered(t);
    };
    t.sort = function (key) {
      if (t.sortKey === key) t.desc = !t.desc;
      else { t.sortKey = key; t.desc = !!cols.find((c) => c.key === key).num; }
      t.render();
    };
    const pick = (e) => {
      const tr = e.target.closest("tbody tr");
      if (tr && tr._row) select(opts.key(tr._row), "table");
    };
    tbody.addEventListener("click", pick);
    tbody.addEventListener("keydown", (e) => {
      const tr = e.target.closest("tbody tr");
      if (!tr) return;
      if (e.key === "Enter" || e.key === " ") { e.preventDefault(); pick(e); }
      else if (e.key === "ArrowDown" && tr.nextElementSibling) { e.preventDefault(); tr.nextElementSibling.focus(); }
      else if (e.key === "ArrowUp" && tr.previousElementSibling) { e.preventDefault(); tr.previousElementSibling.focus(); }
    });
    return t;
  }

  let D = null, report = null, functionTable = null, diffTable = null;
  const rowByName = new Map();

  // ---- header -----------------------------------------------------------------------------
  function header() {
    const dl = $("figures");
    for (const [k, v] of D.header) dl.append(el("div", {}, el("dt", { text: k }), el("dd", { text: v, "data-figure": k })));
    for (const w of D.warnings) $("warnings").append(el("li", { text: w }));
  }

  // ---- the function table -------------------------------------------------------------------
  function functions() {
    if (!report || !report.rows) return;
    const rows = report.rows;
    const nameOf = (r) => r.name !== undefined ? r.name : r.function;
    for (const r of rows) if (!rowByName.has(nameOf(r))) rowByName.set(nameOf(r), r);
    const hasTotal = rows.some((r) => r.total_seconds !== undefined);
    const hasCi = rows.some((r) => r.ci95_low_seconds !== undefined);
    const cols = [
      { key: "rank", label: "#", num: true, fmt: (r) => String(r.rank), value: (r) => r.rank },
      { key: "percent", label: "% self", num: true, fmt: (r) => pct(r.percent), value: (r) => r.percent },
      { key: "self", label: "self", num: true, fmt: (r) => secs(r.self_seconds), value: (r) => r.self_seconds },
    ];
    if (hasCi) cols.push({ key: "ci", label: "self 95%", num: true, cls: "wide", fmt: (r) => interval(r.ci95_low_seconds, r.ci95_high_seconds), value: (r) => r.ci95_high_seconds });
    if (hasTotal) {
      cols.push({ key: "total", label: "total", num: true, fmt: (r) => secs(r.total_seconds), value: (r) => r.total_seconds });
      cols.push({ key: "tci", label: "total 95%", num: true, cls: "wide", fmt: (r) => interval(r.total_ci95_low_seconds, r.total_ci95_high_seconds), value: (r) => r.total_ci95_high_seconds });
    }
    cols.push({ key: "samples", label: "samples", num: true, cls: "wide", fmt: (r) => r.samples.toFixed(0), value: (r) => r.samples });
    cols.push({ key: "name", label: "function", cls: "name", fmt: nameOf, value: nameOf });
    cols.push({ key: "object", label: "object", cls: "wide", fmt: (r) => r.object || "", value: (r) => r.object || "" });
    cols.push({ key: "location", label: "location", cls: "wide", fmt: (r) => r.location || "", value: (r) => r.location || "" });
    functionTable = makeTable($("functions"), cols, rows, {
      key: nameOf,
      text: (r) => nameOf(r) + " " + (r.object || ""),
      footer: (shown, n) => {
        let s = 0, sec = 0;
        for (const r of shown) { s += r.samples; sec += r.self_seconds; }
        const tr = el("tr");
        const td = el("td", { colspan: String(n), id: "totals", "data-rows": String(shown.length), "data-samples": String(s), "data-seconds": String(sec) });
        td.textContent = shown.length + " functions · " + s.toFixed(0) + " samples · " + secs(sec) + " self";
        tr.append(td);
        return tr;
      },
      rendered: (t) => {
        const more = t.shown.length > t.limit;
        $("more").hidden = !more;
        $("table-count").textContent = more ? "showing " + t.limit + " of " + t.shown.length : "";
      },
    });
    $("filter").addEventListener("input", (e) => { functionTable.filter = e.target.value; functionTable.render(); });
    $("more").addEventListener("click", () => { functionTable.limit += 1000; functionTable.render(); });
    $("table-section").hidden = false;
    functionTable.render();
  }

  // ---- diff ---------------------------------------------------------------------------------
  function diff() {
    const d = D.diff;
    if (!d) return;
    $("diff-section").hidden = false;
    const changed = d.rows.filter((r) => r.significant).length;
    $("diff-summary").textContent = d.rows.length + " functions, " + changed + " changed significantly (" + d.test + ", family-wise α = " + d.alpha + "). Base: " + d.base.executable + " (" + secs(d.base.seconds_per_run) + " per run), new: " + d.new.executable + " (" + secs(d.new.seconds_per_run) + " per run).";
    for (const r of d.rows) if (!rowByName.has(r.name)) rowByName.set(r.name, r);
    const cols = [
      { key: "name", label: "function", cls: "name", fmt: (r) => (r.significant ? (r.delta_seconds > 0 ? "▲ " : "▼ ") : "") + r.name, value: (r) => r.name },
      { key: "base", label: "base", num: true, fmt: (r) => secs(r.base_seconds), value: (r) => r.base_seconds },
      { key: "new", label: "new", num: true, fmt: (r) => secs(r.new_seconds), value: (r) => r.new_seconds },
      { key: "delta", label: "delta", num: true, fmt: (r) => (r.delta_seconds > 0 ? "+" : "") + secs(r.delta_seconds), value: (r) => r.delta_seconds },
      { key: "p", label: "p (Holm)", num: true, fmt: (r) => r.p_holm.toPrecision(3), value: (r) => r.p_holm },
      { key: "sig", label: "significant", fmt: (r) => r.significant ? "yes" : "no", value: (r) => r.significant ? 1 : 0 },
    ];
    diffTable = makeTable($("diff-table"), cols, d.rows, {
      key: (r) => r.name,
      text: (r) => r.name,
      rowClass: (r) => r.significant ? "changed" : "",
    });
    $("diff-filter").addEventListener("input", (e) => { diffTable.filter = e.target.value; diffTable.render(); });
    diffTable.render();
    // The delta cell says which way.
    const paint = () => {
      for (const tr of $("diff-table").tBodies[0].rows) if (tr._row.significant) tr.cells[3].className = "num " + (tr._row.delta_seconds > 0 ? "up" : "down");
    };
    const render = diffTable.render;
    diffTable.render = () => { render(); paint(); };
    paint();
  }

  // ---- processes ----------------------------------------------------------------------------
  function processes() {
    const ps = D.processes;
    if (!ps || !ps.length) return;
    $("processes-section").hidden = false;
    const byPid = new Map(ps.map((p) => [p.pid, p]));
    const kids = new Map();
    const roots = [];
    for (const p of ps) {
      const parent = p.ppid !== null && byPid.has(p.ppid) && p.ppid !== p.pid ? p.ppid : null;
      if (parent === null) roots.push(p);
      else { if (!kids.has(parent)) kids.set(parent, []); kids.get(parent).push(p); }
    }
    const item = (p) => {
      const li = el("li", { class: p.reported ? "reported" : "" },
        el("span", { text: p.program + " (pid " + p.pid + (p.image ? ", exec " + p.image : "") + "): " + secs(p.cpu_seconds) + " of CPU time" + (p.reported ? " — reported here" : "") }));
      const ks = kids.get(p.pid);
      if (ks) li.append(el("ul", {}, ...ks.map(item)));
      return li;
    };
    $("processes").append(...roots.map(item));
  }

  // ---- the flame graph ------------------------------------------------------------------------
  const F = { parent: null, name: null, self: null, total: null, kids: null, n: 0, rects: [], root: -1, depth: 1 };
  function buildTree() {
    const fl = D.flame;
    const n = fl.nodes.length / 3;
    // Node 0 is the synthetic root; node i+1 is the data's node i.
    F.n = n + 1;
    F.parent = new Int32Array(n + 1); F.name = new Int32Array(n + 1);
    F.self = new Float64Array(n + 1); F.total = new Float64Array(n + 1);
    F.kids = Array.from({ length: n + 1 }, () => []);
    F.parent[0] = -1; F.name[0] = -1;
    for (let i = 0; i < n; i++) {
      const p = fl.nodes[3 * i] + 1;
      F.parent[i + 1] = p; F.name[i + 1] = fl.nodes[3 * i + 1]; F.self[i + 1] = fl.nodes[3 * i + 2];
      F.kids[p].push(i + 1);
    }
    for (let i = n; i >= 1; i--) { F.total[i] += F.self[i]; F.total[F.parent[i]] += F.total[i]; }
    const depth = new Int32Array(n + 1);
    F.depth = 1;
    for (let i = 1; i <= n; i++) { depth[i] = depth[F.parent[i]] + 1; if (depth[i] > F.depth) F.depth = depth[i]; }
    for (const k of F.kids) k.sort((a, b) => { const x = fl.names[F.name[a]], y = fl.names[F.name[b]]; return x < y ? -1 : x > y ? 1 : 0; });
    F.root = 0;
  }
  const palette = ["#e8833a", "#4a90d9", "#57a857", "#b07cc6", "#d4b63a", "#3ab0a8", "#d9577a", "#8c8c3a"];
  const colorOf = (name) => {
    if (name < 0) return "#9aa0a6";
    const o = D.flame.object_of[name];
    return o < 0 ? "#9aa0a6" : palette[o % palette.length];
  };
  const nameOfNode = (i) => i === 0 ? "all (" + D.flame.samples + " samples)" : D.flame.names[F.name[i]];
  let matched = null;
  function drawFlame() {
    const c = $("flame");
    const dpr = window.devicePixelRatio || 1;
    // As tall as the deepest stack shown (within bounds).
    c.style.height = Math.min(Math.max((F.depth + 1) * 18 + 4, 120), 640) + "px";
    const W = c.clientWidth, H = c.clientHeight;
    c.width = Math.max(1, Math.round(W * dpr)); c.height = Math.max(1, Math.round(H * dpr));
    const g = c.getContext("2d");
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    const css = getComputedStyle(document.documentElement);
    g.fillStyle = css.getPropertyValue("--bg"); g.fillRect(0, 0, W, H);
    F.rects = [];
    if (F.n <= 1 || F.total[0] === 0) {
      g.fillStyle = css.getPropertyValue("--muted"); g.font = "14px system-ui, sans-serif";
      g.fillText("No samples with stacks to draw.", 12, 24);
      return;
    }
    const rowH = 18;
    const icicle = $("icicle").checked;
    const focus = state.zoomNode === undefined || state.zoomNode === null ? 0 : state.zoomNode;
    // The focus's ancestors, full width.
    const chain = [];
    for (let a = focus; a >= 0; a = F.parent[a]) chain.unshift(a);
    const yOf = (depth) => icicle ? depth * rowH : H - (depth + 1) * rowH;
    const scale = W / F.total[focus];
    const fg = css.getPropertyValue("--fg");
    const box = (i, x, w, depth) => {
      const y = yOf(depth);
      if (y < -rowH || y > H) return;
      const m = matched && matched[i];
      g.fillStyle = m ? css.getPropertyValue("--match") : colorOf(F.name[i]);
      g.fillRect(x, y, Math.max(w - 0.5, 0.5), rowH - 1);
      if (state.selectedNames && state.selectedNames.has(F.name[i])) {
        g.strokeStyle = fg; g.lineWidth = 2; g.strokeRect(x + 1, y + 1, Math.max(w - 2.5, 0.5), rowH - 3);
      }
      F.rects.push([x, y, w, rowH - 1, i]);
      if (w > 30) {
        g.fillStyle = "#111"; g.font = "12px system-ui, sans-serif";
        let t = nameOfNode(i);
        const maxc = Math.floor((w - 6) / 6.5);
        if (t.length > maxc) t = t.slice(0, Math.max(0, maxc - 1)) + "…";
        g.fillText(t, x + 3, y + 13);
      }
    };
    chain.forEach((a, d) => box(a, 0, W, d));
    const walk = (i, x, depth) => {
      let cx = x;
      for (const k of F.kids[i]) {
        const w = F.total[k] * scale;
        if (w >= 0.3) { box(k, cx, w, depth); walk(k, cx, depth + 1); }
        cx += w;
      }
    };
    walk(focus, 0, chain.length);
  }
  function hit(x, y) {
    for (let j = F.rects.length - 1; j >= 0; j--) {
      const [rx, ry, rw, rh, i] = F.rects[j];
      if (x >= rx && x < rx + rw && y >= ry && y < ry + rh) return i;
    }
    return -1;
  }
  function zoomTo(i) {
    state.zoomNode = i <= 0 ? null : i;
    state.zoom = i <= 0 ? null : nameOfNode(i);
    $("zoom").textContent = state.zoom ? "zoomed on " + state.zoom : "";
    drawFlame();
  }
  function search(q) {
    state.search = q;
    if (!q) { matched = null; state.matchShare = null; $("match").textContent = ""; drawFlame(); return; }
    const lq = q.toLowerCase();
    const names = D.flame.names;
    const nameHit = names.map((n) => n.toLowerCase().includes(lq));
    matched = new Uint8Array(F.n);
    let share = 0;
    // A sample counts once: the matched frames without a matched ancestor.
    const under = new Uint8Array(F.n);
    for (let i = 1; i < F.n; i++) {
      const p = F.parent[i];
      matched[i] = nameHit[F.name[i]] ? 1 : 0;
      if (matched[i] && !under[p]) share += F.total[i];
      under[i] = under[p] || matched[i];
    }
    const total = F.total[0] || 1;
    state.matchShare = share / total;
    state.matchSamples = share;
    $("match").textContent = share ? "matched " + (100 * share / total).toFixed(1) + "% (" + share + " of " + total + " samples)" : "no frame matches";
    drawFlame();
  }
  function flame() {
    buildTree();
    const c = $("flame"), tip = $("tip");
    const pos = (e) => { const r = c.getBoundingClientRect(); return [e.clientX - r.left, e.clientY - r.top]; };
    c.addEventListener("click", (e) => {
      const i = hit(...pos(e));
      if (i < 0) return;
      zoomTo(i);
      if (i > 0) select(D.flame.names[F.name[i]], "flame");
    });
    c.addEventListener("mousemove", (e) => {
      const [x, y] = pos(e);
      const i = hit(x, y);
      if (i < 0) { tip.hidden = true; return; }
      const total = F.total[0] || 1;
      tip.textContent = nameOfNode(i) + " — " + F.total[i] + " samples (" + (100 * F.total[i] / total).toFixed(2) + "%), " + secs(F.total[i] / (D.flame.hz || 1));
      tip.hidden = false;
      tip.style.left = Math.min(x + 12, c.clientWidth - 240) + "px";
      tip.style.top = (y + 14) + "px";
    });
    c.addEventListener("mouseleave", () => { tip.hidden = true; });
    c.addEventListener("keydown", (e) => {
      // Arrows walk the tree from the frame zoomed on: towards the leaves (the widest child),
      // back to the parent, and to the siblings; each step zooms and selects.
      const at = state.zoomNode || 0;
      const icicle = $("icicle").checked;
      const deeper = icicle ? "ArrowDown" : "ArrowUp", shallower = icicle ? "ArrowUp" : "ArrowDown";
      let to = -1;
      if (e.key === deeper) to = F.kids[at].reduce((b, k) => (b < 0 || F.total[k] > F.total[b] ? k : b), -1);
      else if (e.key === shallower && at > 0) to = F.parent[at];
      else if ((e.key === "ArrowLeft" || e.key === "ArrowRight") && at > 0) {
        const sib = F.kids[F.parent[at]];
        to = sib[sib.indexOf(at) + (e.key === "ArrowLeft" ? -1 : 1)];
        if (to === undefined) to = -1;
      }
      if (to >= 0) {
        e.preventDefault();
        zoomTo(to);
        if (to > 0) select(D.flame.names[F.name[to]], "keys");
        return;
      }
      if (e.key === "Escape") zoomTo(0);
      else if (e.key === "Enter" && state.selected) {
        const ix = D.flame.names.indexOf(state.selected);
        let best = -1;
        for (let i = 1; i < F.n; i++) if (F.name[i] === ix && (best < 0 || F.total[i] > F.total[best])) best = i;
        if (best > 0) zoomTo(best);
      }
    });
    $("reset").addEventListener("click", () => { zoomTo(0); $("search").value = ""; search(""); });
    $("search").addEventListener("input", (e) => search(e.target.value));
    $("icicle").addEventListener("change", drawFlame);
    document.addEventListener("keydown", (e) => {
      if (e.key === "/" && document.activeElement.tagName !== "INPUT") { e.preventDefault(); $("search").focus(); }
    });
    window.addEventListener("resize", drawFlame);
    const objs = D.flame.objects;
    const leg = $("legend");
    leg.append("Frames coloured by object:");
    // The objects some frame is in.
    const used = new Set(D.flame.object_of);
    objs.forEach((o, k) => { if (used.has(k)) leg.append(el("span", { style: "background:" + palette[k % palette.length] }), o); });
    leg.append(" · click a frame to zoom (or arrows on the focused graph), Escape or Reset to zoom out; matches in pink.");
    drawFlame();
  }
  // Where a frame of `name` is drawn (the widest), for the tests: [x, y] in page coordinates.
  state.frameCenter = function (name) {
    let best = null;
    for (const [x, y, w, h, i] of F.rects) if (i > 0 && D.flame.names[F.name[i]] === name && (!best || w > best[2])) best = [x, y, w, h];
    if (!best) return null;
    const r = $("flame").getBoundingClientRect();
    return [r.left + best[0] + best[2] / 2, r.top + best[1] + best[3] / 2];
  };

  // ---- the selected function ------------------------------------------------------------------
  function arcsOf(name) {
    const g = report && report.call_graph;
    if (g && g.functions && g.arcs) {
      const fn = g.functions.find((f) => f.name === name);
      const byId = new Map(g.functions.map((f) => [f.id, f]));
      if (fn) {
        const kind = g.kind === "sampled" ? "measured from the sampled stacks" : "gprof's estimate from the call counts";
        const val = (a) => a.seconds !== undefined ? a.seconds : a.self_seconds + a.children_seconds;
        const calls = (a) => a.samples !== undefined ? a.samples + " samples" + (a.calls !== null && a.calls !== undefined ? ", " + a.calls + " calls" : "") : a.count + " calls";
        const list = (mine, other) => g.arcs.filter((a) => a[mine] === fn.id).map((a) => ({ name: (byId.get(a[other]) || {}).name || "?", seconds: val(a), what: calls(a) })).sort((a, b) => b.seconds - a.seconds);
        return { callers: list("callee", "caller"), callees: list("caller", "callee"), note: "Call graph " + kind + ", as in the text report." };
      }
    }
    // From the flame graph's tree (a diff, or a report without a call graph).
    const ix = D.flame.names.indexOf(name);
    const callers = new Map(), callees = new Map();
    const hz = D.flame.hz || 1;
    for (let i = 1; i < F.n; i++) {
      if (F.name[i] !== ix) continue;
      const p = F.parent[i];
      if (p > 0 && F.name[p] !== ix) callers.set(F.name[p], (callers.get(F.name[p]) || 0) + F.total[i]);
      for (const k of F.kids[i]) if (F.name[k] !== ix) callees.set(F.name[k], (callees.get(F.name[k]) || 0) + F.total[k]);
    }
    const list = (m) => [...m].map(([n, s]) => ({ name: D.flame.names[n], seconds: s / hz, what: s + " samples" })).sort((a, b) => b.seconds - a.seconds);
    return { callers: list(callers), callees: list(callees), note: "Callers and callees from the sampled stacks of the flame graph." };
  }
  function arcTable(table, arcs) {
    const head = el("thead", {}, el("tr", {}, el("th", { text: "function" }), el("th", { class: "num", text: "time" }), el("th", { class: "num", text: "measured" })));
    const body = el("tbody");
    for (const a of arcs) {
      const tr = el("tr", { tabindex: "0" }, el("td", { class: "name", text: a.name }), el("td", { class: "num", text: secs(a.seconds) }), el("td", { class: "num", text: a.what }));
      tr.addEventListener("click", () => select(a.name, "arc"));
      tr.addEventListener("keydown", (e) => { if (e.key === "Enter") select(a.name, "arc"); });
      body.append(tr);
    }
    if (!arcs.length) body.append(el("tr", {}, el("td", { colspan: "3", class: "note", text: "none" })));
    table.replaceChildren(head, body);
  }
  function sourceOf(name) {
    const ix = D.flame.names.indexOf(name);
    const table = $("source");
    const s = D.sources.find((s) => s.function === ix);
    if (!s) {
      $("source-note").textContent = "No sampled source lines for this function (no line information).";
      table.replaceChildren();
      return;
    }
    $("source-note").textContent = s.file + (s.note ? " — " + s.note + "; the lines with samples are listed without their text." : "");
    const head = el("thead", {}, el("tr", {}, el("th", { class: "num", text: "line" }), el("th", { class: "num", text: "self" }), el("th", { class: "num", text: "total" }), el("th", { text: "source" })));
    const body = el("tbody");
    let last = null;
    for (const [n, self, total, text] of s.lines) {
      if (last !== null && n > last + 1) body.append(el("tr", { class: "gap" }, el("td", { colspan: "4", text: "⋯" })));
      last = n;
      const tr = el("tr", { class: self || total ? "hot" : "" }, el("td", { class: "num", text: String(n) }), el("td", { class: "num", text: self ? String(self) : "" }), el("td", { class: "num", text: total ? String(total) : "" }), el("td", { class: "text", text: text }));
      body.append(tr);
    }
    table.replaceChildren(head, body);
  }
  function select(name, from) {
    state.selected = name;
    state.selectedNames = new Set();
    D.flame.names.forEach((n, i) => { if (n === name) state.selectedNames.add(i); });
    for (const t of [functionTable, diffTable]) {
      if (!t) continue;
      for (const tr of t.tableBody()) tr.classList.toggle("selected", tr._row && (tr._row.name === name || tr._row.function === name));
    }
    $("details-none").hidden = true;
    $("details").hidden = false;
    $("details-title").textContent = name;
    const r = rowByName.get(name);
    let fig = "";
    if (r && r.self_seconds !== undefined) fig = "self " + secs(r.self_seconds) + (r.total_seconds !== undefined && r.total_seconds !== null ? ", total " + secs(r.total_seconds) : "") + (r.location ? " — " + r.location : "");
    else if (r && r.new_seconds !== undefined) fig = "base " + secs(r.base_seconds) + ", new " + secs(r.new_seconds) + ", delta " + secs(r.delta_seconds) + (r.significant ? " (significant)" : " (not significant)");
    $("details-figures").textContent = fig;
    const arcs = arcsOf(name);
    arcTable($("callers"), arcs.callers);
    arcTable($("callees"), arcs.callees);
    $("graph-note").textContent = arcs.note;
    sourceOf(name);
    drawFlame();
    if (from === "flame") $("details-section").scrollIntoView({ block: "nearest" });
  }
  state.select = (n) => select(n, "api");

  load().then((data) => {
    D = data;
    report = D.report;
    $("loading").remove();
    header();
    processes();
    diff();
    functions();
    for (const t of [functionTable, diffTable]) if (t) t.tableBody = () => t === functionTable ? $("functions").tBodies[0].rows : $("diff-table").tBodies[0].rows;
    flame();
    // Milliseconds from the start of navigation to a page that answers (BENCHMARKS.md).
    state.readyMs = performance.now();
    state.ready = true;
    document.body.dataset.ready = "1";
  }).catch((e) => {
    $("loading").textContent = "This report could not be read: " + e;
    throw e;
  });
})();
