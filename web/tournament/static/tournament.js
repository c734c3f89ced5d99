// The organiser's page: draws the board from /api/board and keeps it live from /api/stream.
// Everything is written with textContent (a table's summary is never trusted as HTML).
"use strict";
(function () {
  const csrf = document.querySelector('meta[name="csrf-token"]').content;
  const tables = new Map();
  let version = -1;
  let admin = false;

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function safeUrl(u) {
    try {
      const url = new URL(u, location.href);
      return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
    } catch (e) { return null; }
  }

  function card(row) {
    const s = row.summary || {};
    const c = el("article", "card");
    if (!row.online) c.classList.add("offline");
    if (s.finished) c.classList.add("finished");
    c.id = "table-" + row.table;
    const h = el("h3");
    h.append(el("span", null, "Table " + row.table), el("span", "kind " + (s.kind || ""), s.kind || "?"));
    c.append(h);
    const state = s.finished ? "finished" : "round " + (s.round ?? "?");
    c.append(el("div", "meta", (s.game || "no game") + " · " + state + (row.online ? "" : " · OFFLINE")));
    const t = el("table", "players");
    for (const p of (s.players || []).slice().sort((a, b) => (a.rank || 9) - (b.rank || 9))) {
      const tr = el("tr");
      tr.append(el("td", null, p.name), el("td", null, p.score));
      t.append(tr);
    }
    c.append(t);
    const open = s.warnings_open || 0;
    c.append(el("div", open ? "warn" : "meta", open + " open warning" + (open === 1 ? "" : "s")));
    const health = s.health || {};
    const hd = el("div", "meta health");
    for (const [k, v] of Object.entries(health)) {
      hd.append(el("span", v === "ok" || v === "simulated" || v === "none" ? "" : "bad", k + ": " + v + " "));
    }
    c.append(hd);
    const link = s.dashboard ? safeUrl(s.dashboard) : null;
    if (link) {
      const a = el("a", null, "Open the table's dashboard");
      a.href = link;
      a.target = "_blank";
      a.rel = "noopener";
      c.append(a);
    }
    return c;
  }

  function drawTables() {
    const box = document.getElementById("tables");
    box.replaceChildren(...[...tables.keys()].sort().map((k) => card(tables.get(k))));
  }

  function drawStandings(rows) {
    const body = document.getElementById("standings");
    body.replaceChildren(...rows.map((r) => {
      const tr = el("tr");
      for (const v of [r.place, r.name, r.games, r.wins, r.points, r.score]) tr.append(el("td", null, v));
      return tr;
    }));
  }

  async function drawGames() {
    const res = await fetch("api/games");
    if (!res.ok) return;
    const list = document.getElementById("games");
    const done = (await res.json()).filter((g) => g.summary && g.summary.finished);
    list.replaceChildren(...done.map((g) => {
      const li = el("li", g.excluded ? "excluded" : "", "Table " + g.table + " · " + g.game + " ");
      if (admin) {
        const b = el("button", null, g.excluded ? "count it again" : "leave out of standings");
        b.addEventListener("click", () => setExcluded(g.table, g.game, !g.excluded));
        li.append(b);
      }
      return li;
    }));
  }

  async function setExcluded(table, game, excluded) {
    const res = await fetch("api/games/" + encodeURIComponent(table) + "/" + encodeURIComponent(game) + "/excluded", {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify({ excluded }),
    });
    if (!res.ok) alert((await res.json()).error);
  }

  function apply(snap) {
    version = snap.version;
    for (const row of snap.tables) tables.set(row.table, row);
    drawTables();
    if (snap.standings) { drawStandings(snap.standings); drawGames(); }
  }

  function listen() {
    const source = new EventSource("api/stream?since=" + version);
    source.onopen = () => { document.getElementById("live").textContent = "live"; };
    source.onmessage = (e) => apply(JSON.parse(e.data));
    source.onerror = () => {
      // CLOSED: the browser gave up (the hub answered with an error); open a new stream later.
      const closed = source.readyState === EventSource.CLOSED;
      document.getElementById("live").textContent = closed ? "offline" : "reconnecting…";
      if (closed) setTimeout(listen, 5000);
    };
  }

  async function session() {
    const res = await fetch("api/session");
    admin = (await res.json()).admin;
    document.getElementById("admin").textContent = admin ? "organiser" : "read-only";
  }

  document.getElementById("unlock").addEventListener("submit", async (e) => {
    e.preventDefault();
    const pin = document.getElementById("pin");
    const res = await fetch("api/session/unlock", {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify({ pin: pin.value }),
    });
    pin.value = "";
    if (!res.ok) { alert((await res.json()).error); return; }
    await session();
    drawGames();
  });

  fetch("api/board").then((r) => r.json()).then((snap) => { apply(snap); listen(); });
  session();
})();
