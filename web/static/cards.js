// Cards people can read: tap or click any card on any page (anything with data-card="<id>")
// to see it large, with its effect in words from the card data (not the drawn face), and,
// on the table page, the steps the game allows with it now (a page registers them with
// GzCards.setActions). Needs app.js (Gz.h).
"use strict";

const GzCards = (() => {
  const { h } = Gz;
  const ROMAN = { 0: "0", 1: "I", 2: "II", 3: "III" };
  let cards = null;
  let actionsFor = () => [];
  let dialog = null;

  // The card data: embedded by the page (#cards), else fetched once from the API.
  async function data() {
    if (cards) return cards;
    const el = document.getElementById("cards");
    if (el) cards = JSON.parse(el.textContent);
    else cards = await (await fetch("/api/cards", { credentials: "same-origin" })).json();
    return cards;
  }

  function cost(c) {
    if (c.level === 0) return "never built";
    if (c.color === "any") return `costs ${c.cost} Energy in any mix of colours`;
    return `costs ${c.cost} ${c.color} Energy`;
  }

  function typeName(t) {
    return { file: "File", pick: "Pick", build: "Build", converter: "Converter", upgrade: "Upgrade" }[t] || t;
  }

  function ensureDialog() {
    if (dialog) return dialog;
    dialog = h("dialog", { id: "card-dialog", class: "card-dialog", "aria-labelledby": "cd-name" });
    dialog.addEventListener("click", (ev) => { if (ev.target === dialog) dialog.close(); }); // the backdrop
    document.body.append(dialog);
    return dialog;
  }

  // Open card ``id`` large. The actions are [{label, text, run}]: run() plays the step.
  async function open(id) {
    const all = await data();
    const c = all[id];
    if (!c) return;
    const d = ensureDialog();
    const actions = actionsFor(id) || [];
    const facts = [
      c.level ? `Level ${ROMAN[c.level]}` : "Starting gizmo",
      `${typeName(c.type)} (its column)`,
      c.color === "any" ? "multicolour" : c.color === "none" ? "no colour" : c.color,
      cost(c),
      `${c.vp} VP`,
    ];
    d.replaceChildren(
      h("div", { class: "cd-body" },
        h("img", { src: `/cards/${id}.png`, alt: `the printed face of card #${id}`, width: 252, height: 352 }),
        h("div", { class: "cd-text" },
          h("h2", { id: "cd-name" }, c.name || `Card #${id}`, " ", h("small", {}, `#${id}`)),
          h("p", { class: "cd-gist" }, c.gist || ""),
          h("p", { class: "cd-effect" }, c.text),
          h("p", { class: "cd-facts" }, facts.join(" · ")),
          c.end_of_game ? h("p", { class: "cd-note" }, "Scores at the end of the game.") : null,
          actions.length ? h("div", { class: "cd-actions" },
            h("h3", {}, "Now"),
            ...actions.map((a) => h("button", {
              type: "button",
              class: "primary cd-action",
              title: a.text || null,
              onclick: () => { d.close(); a.run(); },
            }, a.label))) : null)),
      h("div", { class: "buttons" },
        h("button", { type: "button", class: "cd-close", onclick: () => d.close() }, "Close")));
    d.dataset.card = String(id);
    if (!d.open) d.showModal();
  }

  // Any card anywhere opens large on a click, or Enter / Space when it has the focus.
  function target(ev) {
    const el = ev.target.closest && ev.target.closest("[data-card]");
    if (!el || el.closest("#card-dialog") || ev.target.closest("button:not([data-card])")) return null;
    return el;
  }
  document.addEventListener("click", (ev) => {
    const el = target(ev);
    if (el) open(Number(el.dataset.card));
  });
  document.addEventListener("keydown", (ev) => {
    if (ev.key !== "Enter" && ev.key !== " ") return;
    const el = target(ev);
    if (el && el === document.activeElement) {
      ev.preventDefault();
      open(Number(el.dataset.card));
    }
  });

  // Text with each "#12" made a card to tap (the move log and the warnings name cards so).
  function linkify(text) {
    return String(text).split(/(#\d{1,3})\b/).map((part) => {
      const m = /^#(\d{1,3})$/.exec(part);
      if (!m || Number(m[1]) > 111) return part;
      return h("span", { class: "card-ref", dataset: { card: m[1] }, tabindex: 0, role: "button" }, part);
    });
  }

  return {
    open,
    linkify,
    data,
    setActions(fn) { actionsFor = fn; },
    close() { if (dialog && dialog.open) dialog.close(); },
  };
})();
