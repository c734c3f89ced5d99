// The setup page: start a game, change settings and the PIN, start/pause/stop the live camera
// referee, end the active game. Every change goes through Gz.api (CSRF token, PIN prompt).
"use strict";

(() => {
  const { api, toast, fail } = Gz;

  document.getElementById("deal").addEventListener("change", (ev) => {
    document.getElementById("seed").disabled = !ev.target.checked;
  });
  document.getElementById("seed").disabled = true;

  document.getElementById("new-game").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const f = new FormData(ev.target);
    const names = [0, 1, 2, 3].map((i) => String(f.get(`name${i}`) || "").trim()).filter((n) => n);
    const deal = f.get("deal") === "on";
    const body = { names, deal };
    const seed = String(f.get("seed") || "");
    if (deal && seed !== "") body.seed = Number(seed);
    try {
      const made = await api("POST", "/api/games", body);
      window.location.assign(made.url);
    } catch (err) { fail(err); }
  });

  document.getElementById("settings").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const f = new FormData(ev.target);
    try {
      await api("PUT", "/api/settings", { camera_source: f.get("camera_source"), serial_port: f.get("serial_port") });
      toast("Settings saved.");
    } catch (err) { fail(err); }
  });

  document.getElementById("change-pin").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const form = ev.target;
    const current = form.elements.current.value;
    const newPin = form.elements.new_pin.value;
    form.reset();
    try {
      await api("PUT", "/api/settings", { new_pin: newPin }, { pin: current });
      toast("PIN changed.");
    } catch (err) { fail(err); }
  });

  // The camera's status follows the pipeline while the page is open (calibration found or lost,
  // the source changed), not only as it was when the page loaded.
  const cameraStatus = document.getElementById("camera-status");
  if (cameraStatus && cameraStatus.dataset.poll) {
    const show = (s) => {
      const parts = [document.createTextNode(`Camera: ${s.source}, `)];
      if (s.calibrated) parts.push(document.createTextNode("calibrated"));
      else {
        const strong = document.createElement("strong");
        strong.textContent = "not calibrated";
        parts.push(strong);
      }
      if (s.detail) parts.push(document.createTextNode(` (${s.detail})`));
      if (s.link) parts.push(document.createTextNode(`; stream ${s.link}`));
      if (s.framing) {  // the framing assistant (docs/cameras.md): what to move, or that all is well
        const advice = s.framing.good ? "framing good" : s.framing.advice.join("; ");
        parts.push(document.createTextNode(`; ${advice}`));
      }
      cameraStatus.replaceChildren(...parts);
    };
    setInterval(async () => {
      try {
        const resp = await fetch(cameraStatus.dataset.poll, { headers: { Accept: "application/json" } });
        if (resp.ok) show(await resp.json());
      } catch (err) { /* the server is restarting: the next poll tries again */ }
    }, 2000);
  }

  const liveButtons = document.getElementById("live-buttons");
  if (liveButtons) {
    for (const b of liveButtons.querySelectorAll("button[data-live]")) {
      b.addEventListener("click", async () => {
        try {
          const r = await api("POST", `/api/games/${liveButtons.dataset.game}/live`, { action: b.dataset.live });
          toast(`Live refereeing: ${r.live}.`);
        } catch (err) { fail(err); }
      });
    }
  }

  const end = document.getElementById("end-active");
  if (end) {
    end.addEventListener("click", async () => {
      if (!window.confirm("End the game now? Scoring becomes final.")) return;
      try {
        await api("POST", `/api/games/${end.dataset.game}/end`);
        window.location.assign(`/games/${end.dataset.game}/scores`);
      } catch (err) { fail(err); }
    });
  }
})();
