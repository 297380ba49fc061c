// hopgraph explorer: calls the API with the key kept in this tab's session storage (never in a URL),
// draws the subgraph of a query's `explain.subgraph` with vis-network, and browses entities,
// communities and jobs. Every text from the API is set with textContent (never parsed as HTML).
"use strict";

const KEY = "hopgraph-api-key";
const $ = (id) => document.getElementById(id);
const SIGNAL_COLOURS = {dense: "#2e7d32", bm25: "#6a1b9a", graph: "#c62828", kg: "#d84315", bridge: "#ef6c00",
  tree: "#00838f", local: "#1565c0", global: "#283593"};
const KIND_COLOURS = {query: "#616161", seed: "#f9a825", entity: "#64b5f6", chunk: "#9e9e9e"};
const explorer = {network: null, nodes: null, edges: null, lastRenderMs: null, lastFetchMs: null, lastQuery: null};
window.explorer = explorer;

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

// a time from the API (ISO 8601 text; epoch seconds also accepted) as local text; "" for none or garbage
function timeText(t) {
  if (t === null || t === undefined || t === "") return "";
  const d = typeof t === "number" ? new Date(t * 1000) : new Date(String(t));
  return Number.isNaN(d.getTime()) ? "" : d.toLocaleString();
}

function showError(message) {
  const box = $("error");
  box.textContent = message || "";
  box.hidden = !message;
}

function keyState() {
  const has = Boolean(sessionStorage.getItem(KEY));
  const required = document.body.dataset.auth === "required";
  $("key-state").textContent = required ? (has ? "key set" : "a key is required") : "no key needed";
  $("login").classList.toggle("needed", required && !has);
}

async function api(path, options = {}) {
  const headers = Object.assign({"Accept": "application/json"}, options.headers || {});
  const key = sessionStorage.getItem(KEY);
  if (key) headers["X-API-Key"] = key;
  if (options.body && typeof options.body !== "string") {
    headers["Content-Type"] = "application/json";
    options = Object.assign({}, options, {body: JSON.stringify(options.body)});
  }
  const resp = await fetch(path, Object.assign({}, options, {headers}));
  const data = await resp.json().catch(() => ({}));
  if (!resp.ok) {
    const why = data.detail || data.title || resp.statusText;
    throw new Error(resp.status === 401 ? `a valid API key is required (${why})` : `${resp.status}: ${why}`);
  }
  showError("");
  return data;
}

function switchTab(name) {
  for (const b of document.querySelectorAll("nav button")) b.classList.toggle("active", b.dataset.tab === name);
  for (const s of document.querySelectorAll("section.tab")) s.hidden = s.id !== `tab-${name}`;
}

// -- query -----------------------------------------------------------------------------------------
function signalBars(signals) {
  const box = el("div", null, "bars");
  for (const [name, value] of Object.entries(signals || {}).sort((a, b) => b[1] - a[1])) {
    const row = el("div", null, "bar");
    row.append(el("span", name, "bar-name"));
    const fill = el("span", null, "bar-fill");
    fill.style.width = `${Math.round(100 * Math.max(0, Math.min(1, value)))}%`;
    fill.style.background = SIGNAL_COLOURS[name] || "#757575";
    row.append(fill, el("span", value.toFixed(2), "bar-value"));
    box.append(row);
  }
  return box;
}

function renderResults(result) {
  const list = $("results");
  list.replaceChildren();
  const chunks = new Map(((result.explain.subgraph || {}).nodes || []).filter((n) => n.kind === "chunk")
    .map((n) => [n.chunk, n]));
  for (const r of result.results) {
    const li = el("li", null, "result");
    li.dataset.chunk = r.citation.chunk_id;
    const head = el("div", null, "result-head");
    head.append(el("strong", `#${r.rank}`), el("span", r.score.toFixed(4), "score"),
      el("code", `${r.citation.document_id}#${r.citation.chunk_id}`, "citation"));
    li.append(head, el("p", r.text.length > 400 ? `${r.text.slice(0, 400)} …` : r.text, "text"),
      el("p", r.section ? `${r.citation.source} § ${r.section}` : r.citation.source, "source"));
    if (r.confidence !== null && r.confidence !== undefined) head.append(el("span", `p=${r.confidence.toFixed(2)}`, "score"));
    if (r.entities && r.entities.length) {
      const via = el("p", "via ", "via");
      for (const name of r.entities) {
        const a = el("a", name, "entity-link");
        a.href = "#";
        a.addEventListener("click", (ev) => { ev.preventDefault(); openEntityByName(name); });
        via.append(a, " ");
      }
      li.append(via);
    }
    const node = chunks.get(r.citation.chunk_id);
    if (node) li.append(signalBars(node.signals));
    list.append(li);
  }
  $("context").textContent = result.context || "";
  const degraded = (result.notes || []).join("; ");
  $("query-meta").textContent = `${result.results.length} results by ${result.mode} in ` +
    `${(result.timings_ms.total || 0).toFixed(1)} ms at graph version ${result.index_version}` +
    (degraded ? ` — ${degraded}` : "");
}

function nodeColour(n) {
  if (n.kind === "chunk") return SIGNAL_COLOURS[n.signal] || KIND_COLOURS.chunk;
  return KIND_COLOURS[n.kind] || "#9e9e9e";
}

function drawSubgraph(subgraph) {
  const t0 = performance.now();
  const nodes = (subgraph.nodes || []).map((n) => ({
    id: n.id, label: n.label.length > 40 ? `${n.label.slice(0, 40)}…` : n.label, level: n.level, kind: n.kind,
    shape: n.kind === "chunk" ? "box" : (n.kind === "query" ? "diamond" : "dot"),
    color: nodeColour(n), size: n.kind === "seed" ? 10 + 20 * (n.weight || 0) : 10, data: n}));
  const edges = (subgraph.edges || []).map((e, i) => ({
    id: `edge-${i}`, from: e.from, to: e.to, label: e.label, arrows: "to",
    width: 1 + 4 * Math.min(1, e.weight || 0), font: {size: 9, align: "middle"}}));
  explorer.nodes = new vis.DataSet(nodes);
  explorer.edges = new vis.DataSet(edges);
  if (explorer.network) explorer.network.destroy();
  explorer.network = new vis.Network($("graph"), {nodes: explorer.nodes, edges: explorer.edges}, {
    layout: {hierarchical: {direction: "LR", sortMethod: "directed", levelSeparation: 200, nodeSpacing: 34}},
    physics: false, interaction: {hover: true}, nodes: {font: {size: 11}}});
  explorer.network.once("afterDrawing", () => {
    explorer.lastRenderMs = performance.now() - t0;
    $("render-ms").textContent = `${nodes.length} nodes drawn in ${explorer.lastRenderMs.toFixed(0)} ms`;
  });
  explorer.network.on("click", (params) => {
    if (params.nodes.length) showNode(explorer.nodes.get(params.nodes[0]).data);
  });
}

function showNode(n) {
  const box = $("node-detail");
  box.replaceChildren(el("h3", n.label));
  if (n.kind === "chunk") {
    box.append(el("p", `rank ${n.rank}, score ${n.score}; strongest signal: ${n.signal || "—"}`),
      el("p", `${n.document}#${n.chunk} — ${n.source}`, "source"), el("p", n.text, "text"), signalBars(n.signals));
  } else if (n.kind !== "query") {
    if (n.kind === "seed") box.append(el("p", `seed weight ${n.weight} (${n.why || "similar to the query"})`));
    const a = el("a", "open the entity page", "entity-link");
    a.href = "#";
    a.addEventListener("click", (ev) => { ev.preventDefault(); openEntityByName(n.label); });
    box.append(a);
  }
}

async function runQuery(ev) {
  ev.preventDefault();
  const body = {text: $("q").value, mode: $("mode").value, top_k: Number($("top-k").value), explain: true};
  try {
    const t0 = performance.now();
    explorer.lastRenderMs = null;
    const result = await api("/query", {method: "POST", body});
    explorer.lastFetchMs = performance.now() - t0;
    explorer.lastQuery = result;
    renderResults(result);
    drawSubgraph(result.explain.subgraph || {nodes: [], edges: []});
  } catch (err) { showError(err.message); }
}

// -- entities and communities ----------------------------------------------------------------------
async function openEntityByName(name) {
  switchTab("entity");
  $("entity-name").value = name;
  try {
    const found = await api(`/entities?name=${encodeURIComponent(name)}&match=exact&limit=1`);
    if (found.length) return openEntity(found[0].id);
    showError(`no entity named ${name}`);
  } catch (err) { showError(err.message); }
}

async function findEntities(ev) {
  ev.preventDefault();
  try {
    const found = await api(`/entities?name=${encodeURIComponent($("entity-name").value)}&match=prefix&limit=20`);
    const list = $("entity-matches");
    list.replaceChildren(...found.map((m) => {
      const li = el("li");
      const a = el("a", `${m.name} (${m.type}, ${m.chunks} chunks)`, "entity-link");
      a.href = "#";
      a.addEventListener("click", (e) => { e.preventDefault(); openEntity(m.id); });
      li.append(a);
      return li;
    }));
  } catch (err) { showError(err.message); }
}

async function openEntity(id) {
  try {
    const [entity, neighbours, chunks] = await Promise.all([api(`/entities/${encodeURIComponent(id)}`),
      api(`/entities/${encodeURIComponent(id)}/neighbors?limit=30`),
      api(`/entities/${encodeURIComponent(id)}/chunks?limit=10`)]);
    const page = $("entity-page");
    page.replaceChildren(el("h2", `${entity.name} (${entity.type})`, "entity-title"),
      el("p", entity.description || ""), el("p", `${entity.chunks} chunks, ${entity.mentions} mentions`));
    const nb = el("table", null, "neighbours");
    nb.append(el("caption", "Neighbours by weight"));
    for (const n of neighbours) {
      const tr = el("tr");
      const a = el("a", n.name, "entity-link");
      a.href = "#";
      a.addEventListener("click", (e) => { e.preventDefault(); openEntity(n.id); });
      const name = el("td");
      name.append(a);
      tr.append(name, el("td", `${n.outgoing ? "→" : "←"} ${n.relation || ""}`), el("td", (n.weight || 0).toFixed(1)));
      nb.append(tr);
    }
    const comm = el("ul", null, "entity-communities");
    for (const c of entity.communities) {
      const li = el("li");
      const a = el("a", c, "community-link");
      a.href = "#";
      a.addEventListener("click", (e) => { e.preventDefault(); switchTab("communities"); openCommunity(c); });
      li.append(a);
      comm.append(li);
    }
    const mentions = el("ol", null, "mentions");
    for (const m of chunks) mentions.append(el("li", `[${m.document_id}#${m.chunk_id}] ${m.text.slice(0, 300)}`));
    page.append(nb, el("h3", "Communities"), comm, el("h3", "Mentioned in"), mentions);
  } catch (err) { showError(err.message); }
}

async function listCommunities(ev) {
  if (ev) ev.preventDefault();
  try {
    const rows = await api(`/communities?level=${Number($("community-level").value)}&limit=100`);
    $("communities").replaceChildren(...rows.map((c) => {
      const li = el("li");
      const a = el("a", `${c.title || c.id} (${c.size} entities)`, "community-link");
      a.href = "#";
      a.addEventListener("click", (e) => { e.preventDefault(); openCommunity(c.id); });
      li.append(a);
      return li;
    }));
  } catch (err) { showError(err.message); }
}

async function openCommunity(id) {
  try {
    const c = await api(`/communities/${encodeURIComponent(id)}?members=50`);
    const page = $("community-page");
    const members = el("ul");
    for (const m of c.members) members.append(el("li", m.name));
    page.replaceChildren(el("h2", `${c.title} (level ${c.level}, ${c.size} entities)`), el("p", c.summary || ""),
      el("h3", "Members"), members);
  } catch (err) { showError(err.message); }
}

async function listJobs() {
  try {
    const data = await api("/jobs?limit=50");
    $("jobs").tBodies[0].replaceChildren(...data.jobs.map((j) => {
      const tr = el("tr", null, j.warning ? "job-warning" : `job-${j.status}`);
      const status = j.warning ? `${j.status}, warning` : j.status;  // e.g. a scheduled source's path is missing
      tr.append(el("td", j.id), el("td", j.kind), el("td", status), el("td", j.error || j.warning || j.detail),
        el("td", timeText(j.started_at)), el("td", timeText(j.finished_at)));
      return tr;
    }));
    const quiet = data.unchanged || {};
    $("schedules").replaceChildren(...Object.entries(data.schedules).map(([name, next]) => {
      const q = quiet[name];
      const since = q ? `; ${q.runs} run(s) changed nothing, last checked ${timeText(q.last_checked)}` : "";
      return el("li", `${name}: next run ${next ? timeText(next) : "not scheduled"}${since}`);
    }));
  } catch (err) { showError(err.message); }
}

// -- wiring ----------------------------------------------------------------------------------------
document.addEventListener("DOMContentLoaded", () => {
  for (const b of document.querySelectorAll("nav button")) {
    b.addEventListener("click", () => {
      switchTab(b.dataset.tab);
      if (b.dataset.tab === "jobs") listJobs();
      if (b.dataset.tab === "communities") listCommunities();
    });
  }
  $("login").addEventListener("submit", (ev) => {
    ev.preventDefault();
    if ($("key").value) sessionStorage.setItem(KEY, $("key").value);
    $("key").value = "";
    keyState();
  });
  $("logout").addEventListener("click", () => { sessionStorage.removeItem(KEY); keyState(); });
  $("query-form").addEventListener("submit", runQuery);
  $("entity-form").addEventListener("submit", findEntities);
  $("community-form").addEventListener("submit", listCommunities);
  $("jobs-refresh").addEventListener("click", listJobs);
  keyState();
});
