// Cards the camera saw whole but cannot place (issue 14: ask during play and remember). Each
// question shows the card as the camera saw it and the likeliest cards; tapping one (or typing
// an id) answers it with the admin PIN, and the referee enrols the picture as that card.
"use strict";

(() => {
  const { h, api, toast, fail } = Gz;
  const list = document.getElementById("questions");
  if (!list) return;

  function answer(id, card) {
    api("POST", `/api/questions/${id}`, { card })
      .then((r) => { toast(`Remembered as card #${r.card} (${r.enrolled})`); refresh(); })
      .catch(fail);
  }

  function question(q) {
    const typed = h("input", { type: "number", min: "0", max: "111", placeholder: "card id", "aria-label": "card id" });
    return h("li", { class: "question" },
      h("img", { src: `/api/questions/${q.id}/face.png`, alt: `the card at ${q.where} as the camera saw it`, width: "126" }),
      h("div", {},
        h("p", {}, `At ${q.where} (frame ${q.frame ?? "?"}): which card is this?`),
        h("div", { class: "suggestions" },
          ...q.suggestions.map((c) => h("button", { type: "button", onclick: () => answer(q.id, c) },
            h("img", { src: `/cards/${c}.png`, alt: `card #${c}`, width: "63" }), ` #${c}`))),
        h("form", { onsubmit: (ev) => { ev.preventDefault(); if (typed.value !== "") answer(q.id, Number(typed.value)); } },
          typed, h("button", { type: "submit" }, "This one"))));
  }

  async function refresh() {
    try {
      const r = await api("GET", "/api/questions");
      list.replaceChildren(...r.questions.map(question));
      document.getElementById("no-questions").hidden = r.questions.length > 0;
    } catch (err) {
      fail(err);
    }
  }
  refresh();
  setInterval(refresh, 5000);
})();
