// The dashboard's phone camera page: make a pairing code (admin: Gz.api asks for the PIN), show
// the phone's link and the framing advice, unpair.
"use strict";

(() => {
  const { api, toast, fail } = Gz;
  const panel = document.getElementById("phone-pair");
  const make = document.getElementById("make-code");
  if (!panel || !make) return;
  make.addEventListener("click", async () => {
    try {
      const r = await api("POST", "/api/phone/code", {});
      document.getElementById("pair-code").textContent =
        `Pairing code: ${r.code} (valid ${Math.round(r.expires_in / 60)} minutes, once)`;
      document.getElementById("phone-url").textContent = r.url;
    } catch (err) { fail(err); }
  });
  document.getElementById("unpair").addEventListener("click", async () => {
    try {
      await api("POST", "/api/phone/unpair", {});
      toast("The phone is unpaired.");
    } catch (err) { fail(err); }
  });
  const link = document.getElementById("phone-link");
  const advice = document.getElementById("phone-advice");
  const poll = async () => {
    try {
      const resp = await fetch(panel.dataset.status, { headers: { Accept: "application/json" } });
      if (!resp.ok) return;
      const s = await resp.json();
      link.textContent = s.paired ? s.link : "no phone paired";
      const items = s.framing ? [s.framing.summary, ...s.framing.advice] : [];
      advice.replaceChildren(...items.map((text) => {
        const li = document.createElement("li");
        li.textContent = text;
        return li;
      }));
    } catch (err) { /* the server is restarting: the next poll tries again */ }
  };
  poll();
  setInterval(poll, 1500);
})();
