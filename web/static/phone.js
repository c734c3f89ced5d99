// The phone camera page: pair with the table (pairing code or admin PIN), then send the rear
// camera's frames to the referee as JPEG, one at a time (the next once the last was answered, so
// a slow link sends fewer frames rather than a queue), and show the framing advice it answers.
"use strict";

(() => {
  const csrf = document.querySelector('meta[name="csrf-token"]').content;
  const $ = (id) => document.getElementById(id);
  const MAX_FPS = 10;
  let maxWidth = 1920;  // lowered, with the JPEG quality, if a frame is ever too large to send
  let quality = 0.85;
  let running = false;
  let stream = null;
  let wakeLock = null;

  const say = (text, kind) => {
    const s = $("status");
    s.textContent = text;
    s.className = kind || "";
  };

  async function post(url, body, type) {
    const resp = await fetch(url, {
      method: "POST",
      headers: { "X-CSRF-Token": csrf, "Content-Type": type, Accept: "application/json" },
      body,
      credentials: "same-origin",
    });
    let data = null;
    try { data = await resp.json(); } catch (err) { data = null; }
    if (!resp.ok) {
      const error = new Error((data && data.error) || `HTTP ${resp.status}`);
      error.status = resp.status;
      throw error;
    }
    return data;
  }

  function showAdvice(framing) {
    const list = $("advice");
    const items = framing ? [framing.summary] : [];
    list.replaceChildren(...items.map((text) => {
      const li = document.createElement("li");
      li.textContent = text;
      return li;
    }));
    if (framing) list.className = framing.good ? "good" : "bad";
  }

  async function start() {
    if (!window.isSecureContext || !navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
      say("This browser gives the camera only to secure pages: open this page at its secure address (https, as the referee printed it).", "bad");
      return;
    }
    try {
      stream = await navigator.mediaDevices.getUserMedia({
        audio: false,
        video: { facingMode: { ideal: "environment" }, width: { ideal: 1920 }, height: { ideal: 1080 } },
      });
    } catch (err) {
      say(`The camera was not given: ${err.name} (allow it in the browser's site settings).`, "bad");
      return;
    }
    const video = $("preview");
    video.srcObject = stream;
    await video.play();
    $("camera").hidden = false;
    $("pair-form").hidden = true;
    if (navigator.wakeLock) {  // keep the screen on: a locked phone stops its camera
      try { wakeLock = await navigator.wakeLock.request("screen"); } catch (err) { wakeLock = null; }
    }
    running = true;
    send(video);
  }

  function stop(why, kind) {
    running = false;
    if (stream) stream.getTracks().forEach((t) => t.stop());
    stream = null;
    if (wakeLock) wakeLock.release().catch(() => {});
    wakeLock = null;
    $("camera").hidden = true;
    $("pair-form").hidden = false;
    say(why, kind);
  }

  async function send(video) {
    const canvas = $("grab");
    const ctx = canvas.getContext("2d");
    let sent = 0;
    while (running) {
      const began = performance.now();
      if (video.videoWidth > 0) {
        const scale = Math.min(1, maxWidth / video.videoWidth);
        canvas.width = Math.round(video.videoWidth * scale);
        canvas.height = Math.round(video.videoHeight * scale);
        ctx.drawImage(video, 0, 0, canvas.width, canvas.height);
        const blob = await new Promise((resolve) => canvas.toBlob(resolve, "image/jpeg", quality));
        try {
          const r = await post("/api/phone/frame", blob, "image/jpeg");
          sent += 1;
          say(`Streaming to the referee: ${sent} frames sent (${canvas.width} x ${canvas.height}).`, "good");
          $("link").textContent = r.link;
          showAdvice(r.framing);
        } catch (err) {
          if (err.status === 403 || err.status === 404) {
            stop(`Stopped: ${err.message}`, "bad");
            return;
          }
          if (err.status === 413) {  // a busy scene at full size: smaller frames from now on
            quality = Math.max(0.5, quality - 0.1);
            maxWidth = Math.max(1280, maxWidth - 320);
            continue;
          }
          say(`The referee did not take a frame (${err.message}); trying again.`, "bad");
          await new Promise((resolve) => setTimeout(resolve, 1000));
        }
      }
      const wait = 1000 / MAX_FPS - (performance.now() - began);
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }

  $("pair-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const input = $("pair-input");
    const value = input.value.trim();
    input.value = "";
    try {
      await post("/api/phone/pair", JSON.stringify({ code: value }), "application/json");
      say("Paired. Starting the camera…", "good");
      await start();
    } catch (err) {
      say(`Not paired: ${err.message}`, "bad");
    }
  });
  $("stop-button").addEventListener("click", () => stop("Stopped. Pair again to restart.", ""));
})();
