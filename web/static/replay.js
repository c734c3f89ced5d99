// The replay: step through a recorded game moment by moment. Each moment's table comes from
// /api/games/<id>/replay/<n> (the server replays the record to it); the score-over-time chart
// is drawn here as plain SVG from the moments' scores. Undone and corrected moves are struck
// through and left out of the chart: they did not happen.
"use strict";

(() => {
  const { h, api, fail } = Gz;
  const root = document.getElementById("replay");
  const gameId = root.dataset.game;
  const data = JSON.parse(document.getElementById("replay-data").textContent);
  const cards = JSON.parse(document.getElementById("cards").textContent);
  const COLORS = ["red", "blue", "black", "yellow"];
  const ROMAN = { 1: "I", 2: "II", 3: "III" };
  const SVG = "http://www.w3.org/2000/svg";
  const moments = data.moments;
  const warnings = Object.fromEntries(data.warnings.map((w) => [w.id, w]));
  const slider = document.getElementById("slider");
  const skipVoid = document.getElementById("skip-void");
  let index = 0;
  let loading = 0;

  function svg(tag, attrs, ...children) {
    const el = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
    for (const c of children) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
    return el;
  }

  function card(id) {
    const c = cards[id];
    const alt = `#${id}: Level ${c.level} ${c.type}, ${c.color}, cost ${c.cost}, ${c.vp} VP. ${c.text}`;
    return h("figure", { class: "card", dataset: { card: id } },
      h("img", { src: `/cards/${id}.png`, alt, title: alt, width: 252, height: 352 }),
      h("figcaption", {}, `#${id}`));
  }

  function marbles(counts) {
    return COLORS.filter((c) => counts[c]).map((c) => `${counts[c]} ${c}`).join(", ") || "none";
  }

  // ------------------------------------------------------------------ the table at a moment

  function renderBoard(view) {
    const display = h("section", { class: "display-mini", "aria-label": "Display" },
      ...[3, 2, 1].map((lvl) => h("div", { class: "lvl" },
        h("strong", {}, `Level ${ROMAN[lvl]} (${view.decks[String(lvl)]} left)`),
        ...view.display[String(lvl)].map((c) => (c === null ? h("span", { class: "empty" }, "empty") : card(c))))),
      h("p", {}, h("strong", {}, "Energy Row: "), marbles(view.row)));
    const players = view.players.map((p) => {
      const built = Object.entries(p.columns).filter(([, ids]) => ids.length)
        .map(([col, ids]) => `${col}: ${ids.map((i) => `#${i}`).join(" ")}`);
      return h("section", { class: "player-mini" + (p.current ? " current" : ""), dataset: { seat: p.seat } },
        h("h3", {}, h("span", {}, p.name, p.current ? " (to play)" : ""), h("span", { class: "score" }, `${p.score.total} VP`)),
        h("p", {}, h("strong", {}, "Ring: "), `${marbles(p.ring)} (${p.ring_total}/${p.energy_limit})`),
        h("p", {}, h("strong", {}, "Archive: "), p.archive.map((i) => `#${i}`).join(" ") || "empty"),
        h("p", {}, h("strong", {}, "Gizmos: "), built.join("; ") || "none"),
        h("p", {}, `${p.vp_tokens} VP in tokens`));
    });
    document.getElementById("board").replaceChildren(display, ...players);
  }

  function renderWarnings(m) {
    const el = document.getElementById("moment-warnings");
    const ws = m.warnings.map((id) => warnings[id]).filter(Boolean);
    if (!ws.length) {
      el.replaceChildren();
      el.hidden = true;
      return;
    }
    el.hidden = false;
    el.replaceChildren(h("h2", {}, "Warnings raised here"), ...ws.map((w) => h("article", { class: `warning kind-${w.kind} status-${w.status}`, dataset: { id: w.id } },
      h("header", {}, `#${w.id} · ${w.name || "the table"} · ${w.code || "please check"} · ${w.status}`),
      h("p", { class: "message" }, w.message),
      h("p", { class: "remedy" }, h("strong", {}, "What to do: "), w.remedy),
      GzEvidence.crops(gameId, w.id, w.evidence))));
  }

  async function show(i) {
    index = Math.max(0, Math.min(moments.length - 1, i));
    slider.value = String(index);
    const m = moments[index];
    const now = document.getElementById("now");
    now.textContent = `Moment ${index} of ${moments.length - 1} · round ${m.round} · ${m.text}` + (m.void ? ` (${m.void})` : "");
    now.className = "now" + (m.void ? " void" : "");
    for (const li of document.querySelectorAll("#moments li")) li.classList.toggle("here", Number(li.dataset.index) === index);
    const here = document.querySelector(`#moments li[data-index="${index}"]`);
    if (here) here.scrollIntoView({ block: "nearest" });
    renderWarnings(m);
    drawChart();
    const ticket = ++loading;
    try {
      const got = await api("GET", `/api/games/${encodeURIComponent(gameId)}/replay/${index}`);
      if (ticket !== loading) return; // a later step was asked for meanwhile
      renderBoard(got.view);
      root.dataset.shown = String(index);
    } catch (err) { fail(err); }
  }

  function step(delta) {
    let i = index + delta;
    while (skipVoid.checked && i > 0 && i < moments.length - 1 && moments[i].void) i += delta;
    show(i);
  }

  // ------------------------------------------------------------------ moves and chart

  function renderMoments() {
    const items = moments.map((m) => h("li", {
      class: (m.void ? "void" : "") + (m.forced ? " forced" : ""),
      dataset: { index: m.index, void: m.void || null },
      title: m.void ? `${m.void}: this did not stand` : (m.forced ? "accepted against the rules: see the warnings" : null),
      onclick: () => show(m.index),
    }, `R${m.round} · ${m.text}`, m.void ? ` (${m.void})` : "", m.warnings.length ? ` ⚠ #${m.warnings.join(", #")}` : ""));
    document.getElementById("moments").replaceChildren(...items);
  }

  function drawChart() {
    const real = moments.filter((m) => !m.void);
    const W = 480, H = 220, L = 34, B = 22, T = 10, R = 10;
    const top = Math.max(5, ...real.flatMap((m) => m.scores));
    const x = (i) => L + (real.length > 1 ? (i / (real.length - 1)) * (W - L - R) : 0);
    const y = (v) => H - B - (v / top) * (H - B - T);
    const lines = data.names.map((name, seat) => svg("polyline", {
      class: `p${seat}`, fill: "none", "stroke-width": 2,
      points: real.map((m, i) => `${x(i).toFixed(1)},${y(m.scores[seat]).toFixed(1)}`).join(" "),
    }, svg("title", {}, name)));
    const ticks = [0, Math.round(top / 2), top].map((v) => svg("text", { x: 2, y: y(v) + 4 }, v));
    const hereAt = real.findIndex((m) => m.index >= index);
    const hx = x(hereAt < 0 ? real.length - 1 : hereAt);
    const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": "score over time per player" },
      svg("line", { class: "axis", x1: L, y1: H - B, x2: W - R, y2: H - B }),
      svg("line", { class: "axis", x1: L, y1: T, x2: L, y2: H - B }),
      svg("line", { class: "here-line", x1: hx, y1: T, x2: hx, y2: H - B }),
      svg("text", { x: L, y: H - 6 }, "start"),
      svg("text", { x: W - R - 30, y: H - 6 }, "end"),
      ...ticks, ...lines);
    const last = real[real.length - 1];
    const legend = h("div", { class: "legend" }, ...data.names.map((n, s) => h("span", { class: `p${s}` }, `${n}: ${last ? last.scores[s] : 0} VP`)));
    document.getElementById("chart").replaceChildren(chart, legend);
  }

  slider.addEventListener("input", () => show(Number(slider.value)));
  document.getElementById("first").addEventListener("click", () => show(0));
  document.getElementById("last").addEventListener("click", () => show(moments.length - 1));
  document.getElementById("prev").addEventListener("click", () => step(-1));
  document.getElementById("next").addEventListener("click", () => step(1));
  document.addEventListener("keydown", (ev) => {
    if (ev.target instanceof HTMLInputElement && ev.target.type !== "range") return;
    if (ev.key === "ArrowRight") { ev.preventDefault(); step(1); }
    if (ev.key === "ArrowLeft") { ev.preventDefault(); step(-1); }
  });
  renderMoments();
  show(0);
})();
