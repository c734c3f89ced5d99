// The table page (and the scoring page): draws a snapshot of the game and keeps it live from
// the server-sent event stream. One renderer: the server only embeds the first snapshot.
"use strict";

(() => {
  const { h, api, toast, fail } = Gz;
  const root = document.getElementById("game");
  const gameId = root.dataset.game;
  const scoresOnly = root.dataset.scoresOnly === "1";
  const cards = JSON.parse(document.getElementById("cards").textContent);
  const initial = JSON.parse(document.getElementById("initial").textContent);
  const COLORS = ["red", "blue", "black", "yellow"];
  const ROMAN = { 1: "I", 2: "II", 3: "III" };
  const COLUMNS = [["upgrade", "Upgrade"], ["converter", "Converter"], ["file", "File"], ["pick", "Pick"], ["build", "Build"], ["research", "Research"]];

  let view = null;
  let log = [];
  let lastId = null;
  let seq = 0;
  let updates = 0;
  let live = initial.live || "none";
  let conn = "connecting";

  // ------------------------------------------------------------------ pieces

  function cardFigure(id, cls) {
    const c = cards[id];
    const alt = `#${id}: ${c.name}, Level ${c.level}, cost ${c.cost}, ${c.vp} VP. ${c.text}`;
    return h("figure", { class: "card " + (cls || ""), dataset: { card: id }, tabindex: 0, role: "button" },
      h("img", { src: `/cards/${id}.png`, alt, title: alt, width: 252, height: 352 }),
      h("figcaption", {}, `#${id}`));
  }

  function marble(color) {
    return h("span", { class: `marble m-${color}`, title: color, role: "img", "aria-label": color });
  }

  function marbles(counts) {
    const out = [];
    for (const c of COLORS) for (let i = 0; i < (counts[c] || 0); i++) out.push(marble(c));
    return out;
  }

  // ------------------------------------------------------------------ status and board

  function renderStatus() {
    const v = view;
    const turn = v.game_over
      ? h("span", { class: "turn over" }, "Game over")
      : h("span", { class: "turn" }, h("strong", {}, v.current_name), " to play");
    const parts = [
      h("span", { class: "round" }, `Round ${v.round}`),
      turn,
      v.end_triggered && !v.game_over ? h("span", { class: "end-triggered" }, "End triggered: this is the last round") : null,
      live !== "none" ? h("span", { class: "live-state" }, `camera: ${live}`) : null,
      scoresOnly ? null : GzAlerts.badge(),
      h("span", { class: "conn", id: "conn", dataset: { state: conn } }, conn),
    ];
    document.getElementById("status").replaceChildren(...parts.filter(Boolean));
  }

  function renderDisplay() {
    const rows = [3, 2, 1].map((lvl) => {
      const slots = view.display[String(lvl)].map((c) => (c === null
        ? h("div", { class: "card empty" }, "empty")
        : cardFigure(c)));
      return h("div", { class: "display-row" },
        h("div", { class: "deck" },
          h("img", { src: `/cards/back-${lvl}.png`, alt: `Level ${ROMAN[lvl]} deck`, width: 252, height: 352 }),
          h("span", {}, `Level ${ROMAN[lvl]}: ${view.decks[String(lvl)]} left`)),
        ...slots);
    });
    document.getElementById("display").replaceChildren(...rows);
    const row = marbles(view.row);
    while (row.length < 6) row.push(h("span", { class: "marble m-empty", "aria-label": "empty" }));
    const disp = COLORS.map((c) => h("span", { class: "disp" }, marble(c), ` ${view.dispenser[c]}`));
    document.getElementById("row").replaceChildren(
      h("div", { class: "row-marbles", "aria-label": "Energy Row" }, ...row),
      h("div", { class: "dispenser" }, "Dispenser: ", ...disp));
  }

  function renderPlayers() {
    const players = view.players.map((p) => {
      const columns = COLUMNS.filter(([col]) => (p.columns[col] || []).length).map(([col, title]) => h("div", { class: "column", dataset: { column: col } },
        h("h4", { title }, title),
        h("div", { class: "stack" }, ...p.columns[col].map((id) => cardFigure(id, "stacked")))));
      const limits = [
        `Research ${p.research}`,
        p.forbid_file ? "no File" : null,
        p.forbid_research ? "no Research" : null,
      ].filter(Boolean).join(" · ");
      return h("section", { class: "player" + (p.current ? " current" : ""), dataset: { seat: p.seat } },
        h("header", {},
          h("h3", {}, p.name, p.current ? h("span", { class: "to-play" }, " to play") : null),
          h("span", { class: "score", title: "live score" }, `${p.score.total} VP`)),
        h("div", { class: "ring" },
          h("span", { class: "label" }, "Ring"), ...marbles(p.ring),
          h("span", { class: "limit" }, `${p.ring_total}/${p.energy_limit}`),
          h("span", { class: "tokens" }, `${p.vp_tokens} VP in tokens`)),
        h("div", { class: "archive" },
          h("span", { class: "label" }, `Archive ${p.archive.length}/${p.file_limit}`),
          ...p.archive.map((id) => cardFigure(id, "small"))),
        h("div", { class: "columns" }, ...columns),
        h("p", { class: "limits" }, limits));
    });
    document.getElementById("players").replaceChildren(...players);
  }

  // ------------------------------------------------------------------ warnings

  function renderWarnings() {
    const ws = [...view.warnings].reverse();
    ws.sort((a, b) => (a.status === "open" ? 0 : 1) - (b.status === "open" ? 0 : 1));
    const open = ws.filter((w) => w.status === "open").length;
    document.getElementById("warning-count").textContent = open ? `${open} open` : "";
    const items = ws.map((w) => {
      const uncertain = w.kind === "uncertain";
      const actions = w.status === "open" ? h("div", { class: "actions" },
        h("button", { type: "button", class: "primary", onclick: () => decide(w.id, "accepted") }, uncertain ? "Confirm" : "Accept"),
        h("button", { type: "button", onclick: () => decide(w.id, "dismissed") }, "Dismiss"),
        uncertain ? h("button", { type: "button", onclick: openCorrect }, "Correct…") : null)
        : h("p", { class: "decided" }, `${w.status} by ${w.decided_by}`);
      return h("li", { class: `warning kind-${w.kind} status-${w.status}`, dataset: { id: w.id } },
        h("header", {},
          h("span", { class: "badge" }, uncertain ? "Please check" : "Rule broken"),
          ` #${w.id} · ${w.name || "the table"} · round ${w.round}`),
        w.rulings.length ? h("p", { class: "rule" }, `Ruling ${w.rulings.join(", ")}: ${w.rule}`) : null,
        h("p", { class: "message" }, GzCards.linkify(w.message)),
        h("p", { class: "remedy" }, h("strong", {}, "What to do: "), w.remedy),
        GzEvidence.crops(gameId, w.id, (view.evidence || {})[String(w.id)]),
        actions);
    });
    document.getElementById("warnings").replaceChildren(
      ...(items.length ? items : [h("li", { class: "none" }, "No warnings.")]));
  }

  async function decide(id, status) {
    try {
      await api("POST", `/api/games/${gameId}/warnings/${id}`, { status });
      toast(`Warning #${id} ${status}.`);
    } catch (err) { fail(err); }
  }

  // The tracker's reading not yet accepted (read twice, or a rule break awaiting the turn's end):
  // shown apart from the move log and the warnings, marked provisional, gone once accepted.
  function renderProvisional() {
    const p = view.provisional;
    const panel = document.getElementById("provisional-panel");
    panel.hidden = !p;
    if (!p) return;
    document.getElementById("provisional-why").textContent = `Provisional: ${p.why}.`;
    document.getElementById("provisional").replaceChildren(
      ...p.lines.map((line) => h("li", {}, line)),
      ...p.warnings.map((text) => h("li", { class: "warning-text" }, `Rule broken? ${text}`)));
  }

  // ------------------------------------------------------------------ manual mode

  function renderLegal() {
    document.getElementById("awaiting").textContent = view.awaiting;
    GzEntry.render(view);
  }

  // One step of manual mode (entry.js draws the choices and calls this).
  function play(step) {
    return api("POST", `/api/games/${gameId}/steps`, { step });
  }

  // Camera only: a person moves the turn boundaries the referee inferred (POST .../turn-ends).
  async function moveTurnEnds() {
    const now = view && Number.isInteger(view.turn) ? view.turn + 1 : 1;
    const from = window.prompt("Read the table again from the start of which turn? (as numbered in the move log)", String(now));
    if (from === null) return;
    const ends = window.prompt("How many turns ended since the start of that turn, up to the table seen now?", "1");
    if (ends === null) return;
    try {
      await api("POST", `/api/games/${gameId}/turn-ends`, { from_turn: Number(from) - 1, ends: Number(ends) });
      toast("The turns were read again.");
    } catch (err) { fail(err); }
  }

  async function tool(path, done, question) {
    if (question && !window.confirm(question)) return;
    try {
      await api("POST", `/api/games/${gameId}/${path}`);
      toast(done);
    } catch (err) { fail(err); }
  }

  // ------------------------------------------------------------------ corrections

  function openCorrect() {
    const dialog = document.getElementById("correct-dialog");
    const zone = document.getElementById("correct-zone");
    zone.replaceChildren(h("option", { value: "row" }, "the Energy Row"),
      ...view.players.map((p) => h("option", { value: `ring:${p.seat}` }, `${p.name}'s ring`)));
    for (const sel of dialog.querySelectorAll(".colour-select")) {
      sel.replaceChildren(...COLORS.map((c) => h("option", { value: c }, c)));
    }
    dialog.showModal();
  }

  function setupCorrect() {
    const dialog = document.getElementById("correct-dialog");
    const form = document.getElementById("correct-form");
    const what = document.getElementById("correct-what");
    what.addEventListener("change", () => {
      for (const fs of form.querySelectorAll("fieldset")) fs.hidden = fs.dataset.for !== what.value;
    });
    document.getElementById("correct-cancel").addEventListener("click", () => dialog.close());
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const f = new FormData(form);
      let payload;
      if (what.value === "marble_color") {
        const [zone, seat] = String(f.get("zone")).split(":");
        payload = { zone, from: f.get("from"), to: f.get("to") };
        if (seat !== undefined) payload.seat = Number(seat);
      } else {
        payload = { old: Number(f.get("old")), new: Number(f.get("new")) };
      }
      dialog.close();
      try {
        await api("POST", `/api/games/${gameId}/corrections`, { what: what.value, payload });
        toast("Corrected.");
      } catch (err) { fail(err); }
    });
    document.getElementById("correct-btn").addEventListener("click", openCorrect);
  }

  // ------------------------------------------------------------------ log and final scoring

  function renderLog() {
    const items = [...log].reverse().map((e) => h("li", {
      class: `entry kind-${e.kind}` + (e.forced ? " forced" : "") + (e.done ? "" : " in-progress")
        + (e.ended ? ` ended-${e.ended}` : "") + (e.void ? " void" : ""),
      dataset: e.void ? { void: e.void } : null,
      title: e.ended === "table" ? "nobody signalled the end of this turn: the referee saw the next player begin" : null,
    }, e.round ? h("span", { class: "when" }, `R${e.round}`) : null, GzCards.linkify(e.text)));
    document.getElementById("log").replaceChildren(...items);
  }

  function renderFinal() {
    const el = document.getElementById("final");
    const s = view.scoring;
    if (!view.game_over && !scoresOnly) {
      el.hidden = true;
      return;
    }
    el.hidden = false;
    const endCards = (l) => l.end_card_ids.map((c) => h("small", { class: "card-ref", dataset: { card: c }, tabindex: 0, role: "button", title: cards[c].text }, ` #${c}`));
    const rows = s.lines.map((l) => h("tr", { class: l.rank === 1 && s.final ? "winner" : "" },
      h("td", { class: "rank" }, String(l.rank)),
      h("th", { scope: "row" }, l.name),
      h("td", { class: "part" }, String(l.printed_vp)),
      h("td", { class: "part" }, String(l.token_points)),
      h("td", { class: "part" }, String(l.end_cards), ...endCards(l)),
      h("td", { class: "parts" }, `${l.printed_vp} + ${l.token_points} + ${l.end_cards}`, ...endCards(l)),
      h("td", { class: "total" }, String(l.total)),
      h("td", { class: "tie" }, l.tie_break || "")));
    // A phone shows the three parts of a total in one column and short headings (dash.css),
    // so the whole table fits its screen.
    const heads = [["rank", "Rank", "#"], ["", "Player", "Player"], ["part", "Printed VP"], ["part", "VP tokens"],
      ["part", "End-of-game cards"], ["parts", "Printed + tokens + end cards", "Printed + tokens + end"],
      ["", "Total", "Total"], ["", "Tie-break", "Tie-break"]];
    el.replaceChildren(...[
      h("h2", {}, s.final ? "Final scoring" : "Scores so far (the game is not over)"),
      s.final ? h("p", { class: "winner-line" }, `Winner: ${s.winner.name} with ${s.winner.total} VP`) : null,
      h("table", { class: "scoring" },
        h("thead", {}, h("tr", {},
          ...heads.map(([cls, long, short]) => h("th", { scope: "col", class: cls || null, title: long },
            h("span", { class: "long" }, long), short ? h("span", { class: "short", "aria-hidden": "true" }, short) : null)))),
        h("tbody", {}, ...rows)),
      h("p", { class: "hint" }, "Ties go to the player with more gizmos, then more energy left, then later in turn order (ruling 26)."),
    ].filter(Boolean));
  }

  function render() {
    if (!scoresOnly) GzAlerts.update(view.warnings); // before the status line, which shows the badge
    renderStatus();
    renderFinal();
    if (scoresOnly) return;
    renderDisplay();
    renderPlayers();
    renderWarnings();
    renderProvisional();
    renderLegal();
    renderLog();
  }

  // ------------------------------------------------------------------ live updates

  function applyEvent(ev) {
    const [epoch, n] = String(ev.id).split(".");
    if (lastId && String(lastId).split(".")[0] === epoch && Number(n) < seq) return; // an older snapshot
    if (log.length < ev.log_from) {
      // A gap (should not happen): fetch the whole log once.
      api("GET", `/api/games/${gameId}/log`).then((full) => { log = full; renderLog(); }).catch(fail);
    }
    log.length = Math.min(log.length, ev.log_from);
    log.push(...ev.log);
    view = ev.view;
    lastId = ev.id;
    seq = ev.seq;
    root.dataset.seq = String(seq);
    try {
      render();
    } finally {
      if (!scoresOnly) GzEntry.seen(seq); // even if drawing failed, a turn is never left hanging
    }
  }

  function setConn(state) {
    conn = state;
    const el = document.getElementById("conn");
    if (el) {
      el.dataset.state = state;
      el.textContent = state;
    }
  }

  function connect() {
    const es = new EventSource(`/api/games/${encodeURIComponent(gameId)}/events?since=${encodeURIComponent(lastId)}`);
    es.addEventListener("snapshot", (ev) => {
      updates += 1;
      root.dataset.updates = String(updates);
      applyEvent(JSON.parse(ev.data));
    });
    es.addEventListener("open", () => setConn("live"));
    es.addEventListener("error", () => {
      if (es.readyState === EventSource.CLOSED) {
        setConn("offline");
        setTimeout(connect, 5000); // the server refused the stream: try again in a while
      } else {
        setConn("reconnecting");
      }
    });
  }

  if (!scoresOnly) {
    GzEntry.setup(cards, play, () => api("GET", `/api/games/${gameId}`).then(applyEvent).catch(fail));
  }
  applyEvent(initial);
  if (!scoresOnly) {
    document.querySelector(".warnings-panel h2").after(GzAlerts.toggle());
    setupCorrect();
    document.getElementById("undo-btn").addEventListener("click", () => tool("undo", "Back to the start of the turn.", "Undo the current turn?"));
    document.getElementById("eot-btn").addEventListener("click", () => tool("end-of-turn", "End of turn signalled."));
    // The same signal from the keyboard ("E"): a key a player at the table can press without
    // aiming at a button; never while typing in a field or with a dialog open.
    document.addEventListener("keydown", (ev) => {
      if ((ev.key !== "e" && ev.key !== "E") || ev.ctrlKey || ev.metaKey || ev.altKey || ev.repeat) return;
      const t = ev.target;
      if ((t.closest && t.closest("input, textarea, select, [contenteditable], dialog")) || document.querySelector("dialog[open]")) return;
      ev.preventDefault();
      tool("end-of-turn", "End of turn signalled.");
    });
    document.getElementById("turn-ends-btn").addEventListener("click", moveTurnEnds);
    document.getElementById("end-btn").addEventListener("click", () => tool("end", "The game is over.", "End the game now? Scoring becomes final."));
  }
  connect();
})();
