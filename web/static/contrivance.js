// Contrivance pages: the Workbench as the table has it, manual mode (tap a tile, then the action),
// the final scoring drawn on the Workbench, creating a game and scoring a finished table.
// Every step offered is one of the engine's legal steps from the server; nothing is decided here.
"use strict";

(() => {
  const { h, api, fail, toast } = Gz;
  const EDGES = ["N", "E", "S", "W"];
  const EDGE_NAMES = { N: "top", E: "right", S: "bottom", W: "left" };
  const SET_NAMES = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  const same = (a, b) => Array.isArray(a) && Array.isArray(b) && a[0] === b[0] && a[1] === b[1];
  const sq = (s) => `${s[0]}:${s[1]}`;

  function rivetEdges(tile) {
    const f = EDGES.indexOf(tile.facing);
    return tile.rivets.map((r) => EDGES[(f + r) % 4]);
  }

  function tileLabel(tile) {
    const kind = tile.rivets.length > 1 ? "Double " : "";
    const edges = rivetEdges(tile).map((e) => EDGE_NAMES[e]).join(" and ");
    return `${kind}${tile.builder} tile, value ${tile.value}, rivet${tile.rivets.length > 1 ? "s" : ""} ${edges}`;
  }

  // One tile face: Builder initial, value, Rivets as notches on their edges.
  function tileFace(tile, extra) {
    return h(
      "span",
      { class: `ct-tile b-${tile.builder}${tile.rivets.length > 1 ? " double" : ""}` },
      rivetEdges(tile).map((e) => h("span", { class: `rivet r-${e}`, "aria-hidden": "true" })),
      h("span", { class: "builder", "aria-hidden": "true" }, tile.builder.slice(0, 3)),
      h("span", { class: "value", "aria-hidden": "true" }, String(tile.value)),
      extra || null,
    );
  }

  // The Workbench grid. owners[r] labels row r+1; verdicts (final scoring) marks sets and burn-outs;
  // pick(square, tile) makes squares buttons; marks: {selected: [r,c], targets: [[r,c]...]}.
  function drawBench(el, workbench, owners, options) {
    const opts = options || {};
    const verdict = new Map();
    const setOf = new Map();
    (opts.sets || []).forEach((s, i) => s.forEach((x) => setOf.set(sq(x), SET_NAMES[i % 26])));
    (opts.verdicts || []).forEach((v) => verdict.set(sq(v.square), v));
    el.replaceChildren();
    workbench.forEach((row, r) => {
      const rowEl = h("div", { class: "ct-row", role: "row" }, h("div", { class: "ct-owner", role: "rowheader" }, owners[r]));
      row.forEach((tile, c) => {
        const square = [r + 1, c + 1];
        const v = verdict.get(sq(square));
        const set = setOf.get(sq(square));
        const cls = ["ct-square"];
        if (c === row.length - 1) cls.push("marked");
        if (v) cls.push(v.burnt ? "burnt" : "survives");
        if (set) cls.push(`set-${set}`);
        if (opts.selected && same(opts.selected, square)) cls.push("selected");
        if ((opts.targets || []).some((t) => same(t, square))) cls.push("target");
        let label = `row ${r + 1}, column ${c + 1}: ` + (tile ? tileLabel(tile) : "empty");
        if (v) label += `; ${v.burnt ? "burnt out" : "survives"}${set ? `, set ${set}` : ""}`;
        const inner = [
          tile ? tileFace(tile) : h("span", { class: "empty", "aria-hidden": "true" }, c === row.length - 1 ? "5" : ""),
          set ? h("span", { class: "set-tag", "aria-hidden": "true" }, set) : null,
          v && v.burnt ? h("span", { class: "burnt-tag", "aria-hidden": "true" }, "✕") : null,
        ];
        const attrs = { class: cls.join(" "), role: "gridcell", "aria-label": label, dataset: { square: sq(square) } };
        if (opts.pick) {
          rowEl.append(h("div", { role: "gridcell" }, h("button", { ...attrs, role: null, type: "button", onclick: () => opts.pick(square, tile) }, inner)));
        } else {
          rowEl.append(h("div", attrs, inner));
        }
      });
      el.append(rowEl);
    });
  }

  // The final-scoring screen: the Workbench with its sets and burn-outs, then every reason.
  function drawFinal(el, scoring, workbench, owners, names) {
    const d = scoring.damage;
    const end = d <= 0 ? `repaired (damage ${d}): bonuses count` : d >= 10 ? `destroyed (damage ${d}): no bonus` : `not repaired (damage ${d}): no bonus`;
    const need = scoring.requirement === null ? "not revealed" : `requires ${scoring.requirement} tile(s) of the Builder's own type in their row`;
    const bench = h("div", { class: "ct-bench final-bench", role: "grid", "aria-label": "the Workbench scored" });
    drawBench(bench, workbench, owners, { verdicts: scoring.tiles, sets: scoring.sets });
    const sets = scoring.sets.length
      ? scoring.sets.map((s, i) => h("li", { class: `set-${SET_NAMES[i % 26]}` }, `Set ${SET_NAMES[i % 26]}: {${s.map(sq).join(", ")}}`))
      : [h("li", {}, "No interlocked set: every tile burns out.")];
    const rows = scoring.ranking.map((line) =>
      h(
        "tr",
        { class: line.won ? "won" : "", dataset: { seat: line.seat } },
        h("td", {}, String(line.rank)),
        h("th", { scope: "row" }, names ? names[line.seat] : `Row ${line.row}`, h("br"), h("small", {}, `${line.builder}, row ${line.row}`)),
        h("td", { class: "base" }, String(line.base), h("br"), h("small", {}, line.survivors.join(" + ") || "no surviving tile")),
        h("td", { class: "bonus" }, String(line.bonus), h("br"), h("small", { class: "bonus-reason" }, line.bonus_reason)),
        h("td", { class: "total" }, String(line.total), line.won ? h("span", { class: "win" }, " wins") : null),
      ),
    );
    el.replaceChildren(
      h("h2", { id: "ct-final-title" }, "Final scoring"),
      h("p", { class: "ct-end" }, `The Contrivance is ${end}; it ${need}.`),
      bench,
      h("p", { class: "legend" }, "Letters mark the interlocked sets; ✕ marks a burnt-out tile."),
      h("h3", {}, "Interlocked sets"),
      h("ul", { class: "ct-sets" }, sets),
      h(
        "table",
        { class: "ct-ranking" },
        h("caption", {}, "Ranking: base (surviving tiles in the row) + the Builder's bonus"),
        h("thead", {}, h("tr", {}, ["#", "Player", "Base", "Bonus", "Total"].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, rows),
      ),
      h("details", { open: true }, h("summary", {}, "Every tile's test"), h("ul", { class: "ct-reasons" }, scoring.tiles.map((v) => h("li", { class: v.burnt ? "burnt" : "survives" }, v.reason)))),
    );
    el.hidden = false;
  }

  // ------------------------------------------------------------------ the game page

  function gamePage(root) {
    const gameId = root.dataset.game;
    let view = null;
    let seq = 0;
    let sel = {};
    const el = (id) => document.getElementById(id);

    const touches = (s) => s.tile !== undefined || s.at !== undefined || s.to !== undefined;
    function matching() {
      return view.legal.filter(({ step }) => {
        if (sel.tile) return step.tile === sel.tile && (!sel.to || same(step.to, sel.to));
        if (sel.at) return same(step.at, sel.at) && (!sel.to || same(step.to, sel.to));
        return !touches(step);
      });
    }

    async function send(step) {
      sel = {}; // before the answer: the step's snapshot may arrive first, over the event stream
      try {
        const out = await api("POST", `/api/contrivance/games/${encodeURIComponent(gameId)}/steps`, { step });
        if (out.seq > seq) await refresh();
      } catch (err) {
        fail(err);
      }
    }

    function pick(square, tile) {
      if (sel.tile || (sel.at && !same(sel.at, square) && matching().some(({ step }) => same(step.to, square)))) {
        sel = { ...sel, to: square };
      } else if (tile && view.legal.some(({ step }) => same(step.at, square))) {
        sel = { at: square };
      } else {
        sel = {};
        if (tile) toast(`No step uses the tile on ${sq(square)} now.`);
      }
      render();
    }

    function render() {
      const st = view.state;
      const names = view.names;
      const owners = st.builders.map((b, k) => `${k + 1} · ${names[k]}${b ? ` (${b})` : ""}`);
      const steps = matching();
      const needTo = steps.filter(({ step }) => step.to !== undefined && !sel.to);
      const targets = needTo.map(({ step }) => step.to);
      drawBench(el("ct-bench"), st.workbench, owners, { pick: view.legal.length ? pick : null, selected: sel.at || sel.to, targets });
      const who = view.current === null ? "" : `${names[view.current]}'s turn`;
      const parts = [
        view.game_over ? null : who || view.awaiting,
        `damage ${st.damage}`,
        st.requirement !== null ? `requirement ${st.requirement}` : null,
      ].filter(Boolean);
      el("ct-status").replaceChildren(
        view.game_over ? h("span", { class: "over" }, "Game over") : h("span", { class: "round" }, `${st.phase} phase, round ${view.round}`),
        ...parts.map((p) => ` · ${p}`),
      );
      el("ct-side").replaceChildren(
        h("p", {}, `Deck ${view.deck_size} · discard ${st.discard.length}${st.discard.length ? ` (top: ${st.discard[st.discard.length - 1]})` : ""}`),
        h("ul", { class: "ct-hands" }, st.hands.map((hand, k) => h("li", { class: k === view.current ? "current" : "" }, `${names[k]}: ${hand.length} card${hand.length === 1 ? "" : "s"}`, hand.length ? h("small", {}, ` (${hand.join(", ")})`) : ""))),
      );
      // Manual mode: the current Builder's tiles to place, then the actions of the selection.
      const seat = view.current;
      const supply = seat === null ? [] : st.supply[seat].filter((t) => view.legal.some(({ step }) => step.tile === t.id));
      el("ct-supply").replaceChildren(
        ...supply.map((t) =>
          h("button", { type: "button", class: `ct-square${sel.tile === t.id ? " selected" : ""}`, "aria-pressed": sel.tile === t.id ? "true" : "false", "aria-label": `place ${tileLabel(t)}`, dataset: { tile: t.id }, onclick: () => { sel = sel.tile === t.id ? {} : { tile: t.id }; render(); } }, tileFace(t)),
        ),
      );
      const shown = steps.filter(({ step }) => sel.to || step.to === undefined || (!sel.tile && !sel.at));
      let prompt;
      if (view.game_over || view.ended_by) prompt = "The game is over.";
      else if (sel.tile && !sel.to) prompt = `Tap the square for ${sel.tile}.`;
      else if (sel.at && needTo.length) prompt = `Tap an action for the tile on ${sq(sel.at)}, or the square it goes to.`;
      else if (sel.tile || sel.at) prompt = "Tap the action.";
      else if (view.awaiting) prompt = `The table shows a random outcome: ${view.awaiting}.`;
      else prompt = supply.length ? "Tap a tile to place, then its square and facing." : "Tap a tile on the Workbench to use a Tool on it, or an action below.";
      el("ct-prompt").textContent = prompt;
      el("ct-actions").replaceChildren(
        ...shown.map(({ step, text }) => h("button", { type: "button", class: "ct-action", dataset: { step: JSON.stringify(step) }, onclick: () => send(step) }, text)),
      );
      el("ct-manual").hidden = !view.legal.length && !view.steps_kept;
      el("ct-log").replaceChildren(...view.log.map((t) => h("li", {}, t)));
      if (view.game_over) drawFinal(el("ct-final"), view.scoring, st.workbench, owners, names);
      else el("ct-final").hidden = true;
      root.dataset.seq = String(seq);
      root.dataset.over = view.game_over ? "1" : "0";
    }

    function take(event) {
      if (event.seq <= seq && view) return;
      seq = event.seq;
      view = event.view;
      if (sel.tile || sel.at) {
        if (!matching().length) sel = {};
      }
      render();
    }

    async function refresh() {
      try {
        take(await api("GET", `/api/contrivance/games/${encodeURIComponent(gameId)}`));
      } catch (err) {
        fail(err);
      }
    }

    el("ct-clear").addEventListener("click", () => { sel = {}; render(); });
    el("ct-undo").addEventListener("click", async () => {
      try {
        await api("POST", `/api/contrivance/games/${encodeURIComponent(gameId)}/undo`);
        sel = {};
        await refresh();
      } catch (err) {
        fail(err);
      }
    });
    take(JSON.parse(el("initial").textContent));
    const es = new EventSource(`/api/contrivance/games/${encodeURIComponent(gameId)}/events`);
    es.addEventListener("snapshot", (ev) => take(JSON.parse(ev.data)));
  }

  // ------------------------------------------------------------------ creating a game

  function newGameForm(form) {
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const names = [...form.querySelectorAll('input[name="name"]')].map((i) => i.value.trim()).filter(Boolean);
      const deal = form.querySelector('input[name="deal"]').checked;
      const seedText = form.querySelector('input[name="seed"]').value.trim();
      const body = { names, deal };
      if (deal && seedText) body.seed = Number(seedText);
      try {
        const out = await api("POST", "/api/contrivance/games", body);
        window.location.assign(out.url);
      } catch (err) {
        fail(err);
      }
    });
  }

  // ------------------------------------------------------------------ scoring a finished table

  function finishedTable(form) {
    const rowsEl = document.getElementById("ct-entry-rows");
    const builders = JSON.parse(rowsEl.dataset.builders);
    const options = (list, empty) => [empty ? h("option", { value: "" }, empty) : null, ...list.map((b) => h("option", { value: b }, b))];
    function drawRows() {
      const n = Number(form.elements.rows.value);
      const old = rowsEl.querySelectorAll(".ct-entry-row").length;
      for (let r = old; r < n; r++) {
        const squares = [1, 2, 3, 4, 5].map((c) =>
          h(
            "fieldset",
            { class: "ct-entry-square", dataset: { square: `${r + 1}:${c}` } },
            h("legend", {}, `${r + 1}:${c}`),
            h("select", { name: "builder", "aria-label": `row ${r + 1}, column ${c}: tile's Builder` }, options(builders, "empty")),
            h("input", { name: "value", type: "number", min: 0, max: 6, value: 0, "aria-label": `row ${r + 1}, column ${c}: value` }),
            h("select", { name: "facing", "aria-label": `row ${r + 1}, column ${c}: first Rivet faces` }, options(EDGES)),
            h("label", {}, h("input", { name: "double", type: "checkbox" }), " Double"),
          ),
        );
        rowsEl.append(
          h("div", { class: "ct-entry-row" },
            h("label", {}, `Row ${r + 1} Builder `, h("select", { name: "row-builder", "aria-label": `row ${r + 1}: its Builder` }, options(builders))),
            h("div", { class: "ct-entry-squares" }, squares)),
        );
        rowsEl.lastChild.querySelector('select[name="row-builder"]').value = builders[r];
      }
      [...rowsEl.querySelectorAll(".ct-entry-row")].forEach((row, i) => { row.hidden = i >= n; });
    }
    form.elements.rows.addEventListener("change", drawRows);
    drawRows();
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const rows = [...rowsEl.querySelectorAll(".ct-entry-row")].filter((row) => !row.hidden);
      const table = {
        builders: rows.map((row) => row.querySelector('select[name="row-builder"]').value),
        workbench: rows.map((row) =>
          [...row.querySelectorAll(".ct-entry-square")].map((f) => {
            const b = f.querySelector('[name="builder"]').value;
            if (!b) return null;
            return { builder: b, double: f.querySelector('[name="double"]').checked, value: Number(f.querySelector('[name="value"]').value), facing: f.querySelector('[name="facing"]').value };
          }),
        ),
        damage: Number(form.elements.damage.value),
        requirement: form.elements.requirement.value === "" ? null : Number(form.elements.requirement.value),
      };
      try {
        const out = await api("POST", "/api/contrivance/score", table);
        const owners = out.builders.map((b, k) => `${k + 1} · ${b}`);
        const final = document.getElementById("ct-final");
        drawFinal(final, out.scoring, out.workbench, owners, null);
        final.scrollIntoView();
      } catch (err) {
        fail(err);
      }
    });
  }

  const root = document.getElementById("game");
  if (root && root.classList.contains("ct-game")) gamePage(root);
  const form = document.getElementById("ct-new");
  if (form) newGameForm(form);
  const scoreForm = document.getElementById("ct-score-form");
  if (scoreForm) finishedTable(scoreForm);
})();
