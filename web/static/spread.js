// Enrolment from a spread (issue 14): the referee's camera takes the user's cards laid out on the
// table (POST /api/spread/camera), or a photo of them is sent (POST /api/spread); the admin PIN is
// asked. Each card found is shown as the camera saw it with
// the suggested id in a field to correct and the likeliest others as buttons; "Enrol these
// cards" sends the confirmed ids (POST /api/spread/confirm), enrolled all at once. A card left
// blank is not enrolled.
"use strict";

(() => {
  const { h, api, toast, fail } = Gz;
  const photo = document.getElementById("spread-photo");
  const confirm = document.getElementById("spread-confirm");
  const list = document.getElementById("spread-cards");
  if (!photo || !confirm || !list) return;
  let open = null;

  function card(c) {
    const field = h("input", {
      type: "number", min: "0", max: "111", value: String(c.card), "aria-label": `card id at place ${c.place}`,
      dataset: { place: String(c.place) },
    });
    return h("li", { class: "question" },
      h("img", { src: `/api/spread/${c.place}/face.png?spread=${open.id}`, alt: `card ${c.place} of the spread as the camera saw it`, width: "126" }),
      h("div", {},
        h("p", {}, `Card ${c.place + 1} of ${open.cards.length}: card #`, field, " (blank: leave it out)"),
        h("div", { class: "suggestions" },
          ...c.suggestions.map((s) => h("button", { type: "button", onclick: () => { field.value = String(s); } },
            h("img", { src: `/cards/${s}.png`, alt: `card #${s}`, width: "63" }), ` #${s}`)))));
  }

  function show(spread) {
    open = spread;
    confirm.hidden = !spread;
    list.replaceChildren(...(spread ? spread.cards.map(card) : []));
  }

  function found(r) {
    show(r);
    toast(`${r.cards.length} cards found: check the ids, then enrol them`);
  }

  const camera = document.getElementById("spread-camera");
  if (camera) camera.addEventListener("click", () => { api("POST", "/api/spread/camera").then(found).catch(fail); });

  photo.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const file = photo.querySelector("input[type=file]").files[0];
    if (!file) return;
    api("POST", "/api/spread", file).then(found).catch(fail);
  });

  confirm.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const cards = [...list.querySelectorAll("input[type=number]")]
      .filter((f) => f.value !== "")
      .map((f) => ({ place: Number(f.dataset.place), card: Number(f.value) }));
    api("POST", "/api/spread/confirm", { spread: open.id, cards })
      .then((r) => { toast(`Enrolled ${Object.keys(r.enrolled).length} cards`); show(null); })
      .catch(fail);
  });

  api("GET", "/api/spread").then((r) => show(r.spread)).catch(fail);
})();
