// Manual mode in few taps: the step entry of the table page.
//
// Every button is one of the engine's legal steps (view.legal). Cards are chosen by their
// pictures, not from #n lists: the card that came off a deck is tapped in a grid of the cards
// it can be; a card to File or Build is tapped, and the enlarged card (cards.js) offers what
// can be done with it; a Research hand shows its choices under each card. When nothing is
// left to choose in a turn this browser is playing (only "End the turn", only the cards left
// to put under the deck, or a random outcome with one possibility), the step is played by
// itself; "Finish turns by themselves" turns that off (a per-device setting).
"use strict";

const GzEntry = (() => {
  const { h } = Gz;
  const COLORS = ["red", "blue", "black", "yellow"];
  const ROMAN = { 1: "I", 2: "II", 3: "III" };
  const CARD_KINDS = new Set(["file", "build", "use", "bottom"]);
  const AUTO_KEY = "gz.autoFinish";

  let cards = [];
  let view = null;
  let play = async () => null; // (step) -> the answer of POST .../steps
  let resync = () => {}; // fetch the current snapshot when the event stream is late
  let inFlight = false; // a step (or two, in one tap) is being sent
  let armed = null; // {seat, seq}: this browser played the last step of seat's turn
  let lastSeq = 0;
  const trail = []; // the last few things the step entry did, for bug reports
  function note(what) { trail.push(what); if (trail.length > 30) trail.shift(); }

  function autoOn() { return localStorage.getItem(AUTO_KEY) !== "0"; }

  function cardOf(step) { return step.kind === "use" ? step.gizmo : step.card; }

  function title(id) {
    const c = cards[id];
    return `${c.name} (${c.gist})`;
  }

  function paid(step) {
    const parts = COLORS.filter((c) => step.pay && step.pay[c]).map((c) => `${step.pay[c]} ${c}`);
    const text = parts.length ? `pay ${parts.join(", ")}` : "free";
    const conv = step.converters || [];
    return conv.length ? `${text} with ${conv.map(title).join(", ")}` : text;
  }

  // What a step does to the card it is about, for a button next to (or under) that card.
  function actionLabel(step) {
    switch (step.kind) {
      case "file": return "File it";
      case "build": return `Build it: ${paid(step)}`;
      case "use": return `Use it: ${cards[step.gizmo].gist}`;
      case "bottom": return "Put it under the deck";
      default: return step.kind;
    }
  }

  // The steps the game allows now with card ``id``, for the enlarged card.
  function actionsFor(id) {
    if (!view) return [];
    const out = [];
    for (const g of view.legal) {
      for (const s of g.steps) {
        if (CARD_KINDS.has(s.step.kind) && cardOf(s.step) === id) {
          out.push({ label: actionLabel(s.step), text: s.text, run: () => send(s.step) });
        }
      }
    }
    return out;
  }

  function setBusy(on) {
    const legal = document.getElementById("legal");
    legal.dataset.busy = on ? "1" : "0";
    for (const b of legal.querySelectorAll("button")) b.disabled = on;
  }

  // Play ``step``, then the steps of ``more`` in the same tap (the marble a used gizmo drew).
  async function send(step, auto, more) {
    if (inFlight) { note(`busy: ${step.kind} not sent`); return; }
    note(`send ${step.kind}${auto ? " (auto)" : ""}`);
    inFlight = true;
    setBusy(true);
    let ok = false;
    try {
      let resp = await play(step);
      for (const next of more || []) resp = await play(next);
      const seat = step.player !== undefined ? step.player : view.current;
      armed = resp && typeof resp.seq === "number" ? { seat, seq: resp.seq } : null;
      note(`answer ${JSON.stringify(resp)}`);
      if (auto) Gz.toast(auto);
      ok = true;
    } catch (err) {
      armed = null;
      Gz.fail(err);
    } finally {
      inFlight = false;
      setBusy(false);
    }
    if (ok) {
      check();
      if (armed) {
        // The step's snapshot normally arrives on the event stream within a moment; if it is
        // late (the stream reconnecting), fetch it, so a turn is never left waiting.
        const waitingFor = armed.seq;
        setTimeout(() => { if (armed && armed.seq === waitingFor && lastSeq < waitingFor) resync(); }, 2000);
      }
    }
  }

  // The step to play by itself now, with the reason, or null.
  function autoStep(v) {
    if (v.game_over || !v.legal.length) return null;
    const steps = v.legal.flatMap((g) => g.steps.map((s) => s.step));
    if (steps.length === 1 && steps[0].kind === "end_turn") return [steps[0], "Nothing left to do: the turn is ended (Undo turn takes it back)."];
    if (steps.length === 1 && (steps[0].kind === "reveal" || steps[0].kind === "dispense")) {
      return [steps[0], "Only one outcome was possible."];
    }
    if (steps.every((s) => s.kind === "bottom")) {
      const hand = (v.pending && v.pending.hand) || [];
      const first = hand.map((c) => steps.find((s) => s.card === c)).find(Boolean) || steps[0];
      return [first, "The other Research cards go under the deck, in the order drawn."];
    }
    return null;
  }

  function check() {
    note(`check armed=${JSON.stringify(armed)} lastSeq=${lastSeq} current=${view && view.current}`);
    if (!armed || !view || lastSeq < armed.seq) return; // wait for the step's own snapshot
    const found = autoOn() && view.current === armed.seat ? autoStep(view) : null;
    armed = null;
    if (found) send(found[0], found[1]);
  }

  // ------------------------------------------------------------------ drawing

  function marbleButton(s) {
    const color = s.step.color;
    return h("button", {
      type: "button",
      class: `step colour c-${color}`,
      dataset: { kind: s.step.kind, color },
      title: s.text,
      onclick: () => send(s.step),
    }, h("span", { class: `marble m-${color}`, "aria-hidden": "true" }), ` ${color}`);
  }

  function plainButton(s, label) {
    return h("button", {
      type: "button",
      class: "step" + (s.step.kind === "end_turn" ? " primary" : ""),
      dataset: { kind: s.step.kind },
      title: s.text,
      onclick: () => send(s.step),
    }, label || s.label);
  }

  function thumb(id) {
    return h("figure", { class: "card thumb", dataset: { card: id }, tabindex: 0, role: "button",
      "aria-label": `${title(id)}: show it large` },
    h("img", { src: `/cards/${id}.png`, alt: "", width: 252, height: 352 }),
    h("figcaption", {}, `#${id}`));
  }

  // The card that came off a deck: every card it can be, by colour, as pictures to tap.
  function revealGrid(g) {
    const order = (id) => [COLORS.indexOf(cards[id].color), cards[id].type, id];
    const items = [...g.steps].sort((a, b) => {
      const x = order(a.step.card);
      const y = order(b.step.card);
      return x[0] - y[0] || String(x[1]).localeCompare(String(y[1])) || x[2] - y[2];
    });
    return h("div", { class: "reveal-grid" }, ...items.map((s) => {
      const id = s.step.card;
      return h("button", {
        type: "button",
        class: `tile reveal c-${cards[id].color}`,
        dataset: { kind: "reveal", reveal: id },
        title: `${title(id)}. ${cards[id].text}`,
        onclick: () => send(s.step),
      },
      h("img", { src: `/cards/${id}.png`, alt: "", width: 252, height: 352 }),
      h("span", { class: "tile-name" }, `#${id} ${cards[id].gist}`));
    }));
  }

  // A step and what follows it at once, ending with a random marble drawn (a gizmo used that
  // draws one): one button per colour, so the whole is one tap that also says the colour.
  function drewButtons(s, label, steps, then) {
    return h("div", { class: "drew", dataset: { kind: s.step.kind } },
      h("span", {}, `${label}; the marble drawn:`),
      h("div", { class: "step-buttons" }, ...then.map((t) => h("button", {
        type: "button",
        class: `step colour c-${t.color}`,
        dataset: { kind: s.step.kind, color: t.color },
        title: `${s.text}, and a ${t.color} marble drawn`,
        onclick: () => send(s.step, null, [...steps, t]),
      }, h("span", { class: `marble m-${t.color}`, "aria-hidden": "true" })))));
  }

  // The choices under a card: a button per step; a gizmo use that draws a marble, and a File
  // from a Research hand that goes on to such a gizmo, as colour buttons too.
  function stepChoices(s) {
    const plain = h("button", {
      type: "button",
      class: "step",
      dataset: { kind: s.step.kind },
      title: s.text,
      onclick: () => send(s.step),
    }, actionLabel(s.step));
    if (s.then) return [drewButtons(s, actionLabel(s.step), [], s.then)];
    if (s.then_use) {
      const use = s.then_use.steps[s.then_use.steps.length - 1];
      const label = `File it and use ${cards[use.gizmo].name} (${cards[use.gizmo].gist})`;
      return [plain, drewButtons(s, label, s.then_use.steps, s.then_use.then)];
    }
    return [plain];
  }

  // Cards to File, Build, Use or put under the deck. ``inline``: the choices under each card
  // (a Research hand, gizmos to use); otherwise tap a card and choose in the enlarged card.
  function cardChooser(steps, inline, shown) {
    const byCard = new Map((shown || []).map((id) => [id, []]));
    for (const s of steps) {
      const id = cardOf(s.step);
      if (!byCard.has(id)) byCard.set(id, []);
      byCard.get(id).push(s);
    }
    const tiles = [...byCard.entries()].map(([id, ss]) => {
      const kinds = [...new Set(ss.map((s) => s.step.kind))];
      const under = !ss.length ? h("span", { class: "tile-kinds" }, "no use now")
        : inline ? h("div", { class: "tile-actions" }, ...ss.flatMap(stepChoices))
        : h("span", { class: "tile-kinds" }, kinds.map((k) => ({ file: "File", build: "Build", use: "Use", bottom: "Under" }[k])).join(" · "));
      return h("div", { class: "tile" + (inline ? " inline" : ""), dataset: { tile: id } },
        thumb(id), h("span", { class: "tile-name" }, cards[id].name), under);
    });
    return h("div", { class: "chooser" + (inline ? " inline" : "") }, ...tiles);
  }

  function group(kind, heading, ...body) {
    return h("div", { class: "group", dataset: { kind } }, h("h3", {}, heading), ...body);
  }

  function render(v) {
    view = v;
    const legal = v.legal;
    const byKind = Object.fromEntries(legal.map((g) => [g.kind, g]));
    const out = [];
    for (const g of legal) {
      if (g.kind === "pick" || g.kind === "dispense") {
        out.push(group(g.kind, g.title, h("div", { class: "step-buttons" }, ...g.steps.map(marbleButton))));
      } else if (g.kind === "reveal") {
        out.push(group("reveal", g.title, h("p", { class: "hint" }, "Tap the card that came up."), revealGrid(g)));
      } else if (g.kind === "research") {
        const n = v.players[v.current] ? v.players[v.current].research : 3;
        out.push(group("research", g.title, h("div", { class: "step-buttons" },
          ...g.steps.map((s) => plainButton(s, `Level ${ROMAN[s.step.level]}`))),
          h("p", { class: "hint" }, `Look at ${n} cards of that deck.`)));
      }
    }
    const cardSteps = legal.filter((g) => CARD_KINDS.has(g.kind)).flatMap((g) => g.steps);
    const hand = (v.pending && v.pending.kind === "research" && v.pending.hand) || [];
    if (cardSteps.length || hand.length) {
      const inline = cardSteps.every((s) => ["use", "bottom"].includes(s.step.kind) || hand.includes(cardOf(s.step)));
      const kinds = [...new Set(cardSteps.map((s) => s.step.kind))];
      const heading = hand.length && !kinds.includes("bottom") ? "The Research cards" : kinds.map((k) => ({ file: "File", build: "Build", use: "Use a triggered gizmo", bottom: "Put a card under the deck" }[k])).join(" or ");
      const hint = inline ? null : h("p", { class: "hint" }, "Tap a card to see it and choose.");
      out.push(h("div", { class: "group cards-group", dataset: { kind: kinds.join(" ") } },
        h("h3", {}, heading), hint, cardChooser(cardSteps, inline, hand)));
    }
    for (const kind of ["skip", "end_turn"]) {
      const g = byKind[kind];
      if (g) out.push(group(kind, g.title, h("div", { class: "step-buttons" }, ...g.steps.map((s) => plainButton(s)))));
    }
    document.getElementById("legal").replaceChildren(...out);
    setBusy(inFlight);
    const open = document.getElementById("card-dialog");
    if (open && open.open && open.querySelector(".cd-action")) GzCards.close(); // its steps may be gone
  }

  function toggle() {
    const box = h("input", { type: "checkbox", id: "auto-finish" });
    box.checked = autoOn();
    box.addEventListener("change", () => localStorage.setItem(AUTO_KEY, box.checked ? "1" : "0"));
    return h("label", { class: "check auto-toggle" }, box, " Finish turns by themselves");
  }

  return {
    // setup(cards, play): play(step) posts the step and resolves to the server's answer.
    setup(allCards, playFn, resyncFn) {
      cards = allCards;
      play = playFn;
      resync = () => { note("resync"); resyncFn(); };
      GzCards.setActions(actionsFor);
      const tools = document.querySelector(".manual-panel .tools");
      if (tools) tools.before(toggle());
    },
    render,
    // A snapshot arrived (after render): maybe play the step nothing is left to choose but.
    seen(seq) {
      note(`seen ${seq}`);
      lastSeq = seq;
      check();
    },
    autoStep,
    // For tests and bug reports: what the step entry is waiting for.
    state() { return { armed, lastSeq, inFlight, auto: autoOn(), trail }; },
  };
})();
