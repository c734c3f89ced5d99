// The camera's evidence for a warning: its crops of the zones involved, just before and just
// after the move, side by side (the table page and the replay both show them). Tap one to see
// it large.
"use strict";

const GzEvidence = (() => {
  const { h } = Gz;

  // ev: {moments: ["before", "after"], zones: [...]} from the snapshot, or a warning's
  // {zones, before: url, after: url} from the replay API; null when the camera kept none.
  function crops(gameId, warningId, ev) {
    if (!ev) return null;
    const base = `/api/games/${encodeURIComponent(gameId)}/warnings/${warningId}/evidence`;
    const moments = ev.moments || ["before", "after"].filter((m) => ev[m]);
    if (!moments.length) return null;
    const zones = (ev.zones || []).join(", ");
    return h("div", { class: "evidence", dataset: { warning: warningId } },
      ...moments.map((m) => {
        const src = ev[m] || `${base}/${m}.jpg`;
        return h("figure", { class: `crop crop-${m}` },
          h("a", { href: src, target: "_blank", rel: "noopener" },
            h("img", { src, alt: `the camera's view of ${zones || "the table"} ${m} the move`, loading: "lazy" })),
          h("figcaption", {}, m === "before" ? "just before" : "just after"));
      }),
      zones ? h("p", { class: "zones" }, `Camera view of ${zones}`) : null);
  }

  return { crops };
})();
