// New warnings get noticed: a badge in the status line (tap it to go to the warnings), the
// count in the tab's title and, when this device has it switched on (off by default), a short
// sound and a vibration. "New" means raised while this page was open and still undecided.
"use strict";

const GzAlerts = (() => {
  const { h } = Gz;
  const KEY = "gz.alertSound";
  const baseTitle = document.title;
  let seenUpTo = null; // warnings with a higher id are new
  let fresh = [];
  let audio = null;

  function soundOn() { return localStorage.getItem(KEY) === "1"; }

  function ring() {
    if (!soundOn()) return;
    try {
      audio = audio || new AudioContext();
      const osc = audio.createOscillator();
      const gain = audio.createGain();
      osc.frequency.value = 880;
      gain.gain.setValueAtTime(0.2, audio.currentTime);
      gain.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + 0.4);
      osc.connect(gain).connect(audio.destination);
      osc.start();
      osc.stop(audio.currentTime + 0.4);
    } catch (e) { /* no audio on this device */ }
    if (navigator.vibrate) navigator.vibrate([200, 100, 200]);
  }

  // The warnings of a snapshot: note the new open ones, ring once for any that just arrived.
  function update(warnings) {
    const maxId = warnings.reduce((m, w) => Math.max(m, w.id), 0);
    if (seenUpTo === null) seenUpTo = maxId; // those already there when the page opened are not new
    const before = new Set(fresh);
    fresh = warnings.filter((w) => w.id > seenUpTo && w.status === "open").map((w) => w.id);
    if (fresh.some((id) => !before.has(id))) ring();
    document.title = (fresh.length ? `(${fresh.length}) ` : "") + baseTitle;
  }

  function acknowledge() {
    seenUpTo = Math.max(seenUpTo || 0, ...fresh);
    fresh = [];
    document.title = baseTitle;
  }

  // The badge for the status line, or null when there is nothing new.
  function badge() {
    if (!fresh.length) return null;
    return h("a", {
      class: "new-warnings",
      id: "new-warnings",
      href: "#warnings-panel",
      onclick: (ev) => {
        ev.preventDefault();
        acknowledge();
        ev.currentTarget.remove();
        document.getElementById("warnings-panel").scrollIntoView({ block: "start" });
      },
    }, `⚠ ${fresh.length} new warning${fresh.length > 1 ? "s" : ""}`);
  }

  function toggle() {
    const box = h("input", { type: "checkbox", id: "alert-sound" });
    box.checked = soundOn();
    box.addEventListener("change", () => {
      localStorage.setItem(KEY, box.checked ? "1" : "0");
      if (box.checked) {
        try { audio = audio || new AudioContext(); audio.resume(); } catch (e) { /* none */ }
      }
    });
    return h("label", { class: "check alert-toggle" }, box, " Sound and vibration for new warnings");
  }

  return { update, badge, acknowledge, toggle, soundOn };
})();
