// Shared by every page: building elements, calling the API with the CSRF token, and asking for
// the admin PIN when a change needs it. The PIN lives only in a local variable for the one
// request it is typed for; it is never stored in the page, the URL or the browser's storage.
"use strict";

const Gz = (() => {
  const csrf = document.querySelector('meta[name="csrf-token"]').content;

  class ApiError extends Error {
    constructor(message, status, data) {
      super(message);
      this.status = status;
      this.data = data;
    }
  }

  // h("p", {class: "x", onclick: f}, "text", child) -> element
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else if (k === "class") el.className = v;
      else if (k === "dataset") Object.assign(el.dataset, v);
      else el.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children.flat()) {
      if (c === null || c === undefined || c === false) continue;
      el.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return el;
  }

  let toastTimer = null;
  function toast(message, kind) {
    const el = document.getElementById("toast");
    el.textContent = message;
    el.className = kind || "";
    el.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => { el.hidden = true; }, kind === "error" ? 8000 : 3000);
  }

  // Ask for the PIN in a dialog; resolves to the PIN, or null if cancelled.
  function askPin(why, error) {
    const dialog = document.getElementById("pin-dialog");
    const input = document.getElementById("pin-input");
    document.getElementById("pin-why").textContent = why;
    document.getElementById("pin-error").textContent = error || "";
    input.value = "";
    return new Promise((resolve) => {
      const form = document.getElementById("pin-form");
      const cancel = document.getElementById("pin-cancel");
      function done(value) {
        form.removeEventListener("submit", onSubmit);
        cancel.removeEventListener("click", onCancel);
        dialog.removeEventListener("cancel", onCancel);
        input.value = "";
        if (dialog.open) dialog.close();
        resolve(value);
      }
      function onSubmit(ev) { ev.preventDefault(); done(input.value); }
      function onCancel(ev) { ev.preventDefault(); done(null); }
      form.addEventListener("submit", onSubmit);
      cancel.addEventListener("click", onCancel);
      dialog.addEventListener("cancel", onCancel);
      dialog.showModal();
      input.focus();
    });
  }

  // Call the API. A 401 (PIN needed) or a wrong PIN asks for the PIN and tries again.
  async function api(method, url, body, options) {
    let pin = (options && options.pin) || null;
    let why = "This change needs the table's admin PIN.";
    let error = "";
    for (;;) {
      const headers = { "X-CSRF-Token": csrf, Accept: "application/json" };
      const raw = body instanceof Blob;  // a photo is sent as it is, with its own type
      if (body !== undefined) headers["Content-Type"] = raw ? body.type : "application/json";
      if (pin !== null) headers["X-Admin-PIN"] = pin;
      pin = null;
      const resp = await fetch(url, {
        method,
        headers,
        credentials: "same-origin",
        body: body === undefined || raw ? body : JSON.stringify(body),
      });
      let data = null;
      try { data = await resp.json(); } catch (e) { data = null; }
      const message = (data && data.error) || resp.statusText;
      const wrongPin = resp.status === 403 && /PIN/.test(message);
      if ((resp.status === 401 || wrongPin) && !(options && options.noPrompt)) {
        error = wrongPin ? "Wrong PIN." : error;
        pin = await askPin(why, error);
        if (pin === null) throw new ApiError("cancelled", 0, null);
        continue;
      }
      if (!resp.ok) throw new ApiError(message, resp.status, data);
      if (method !== "GET") refreshAdmin();
      return data;
    }
  }

  // Report an error from api() (a cancelled PIN prompt is not an error).
  function fail(err) {
    if (err instanceof ApiError && err.status === 0) return;
    toast(err.message || String(err), "error");
  }

  async function refreshAdmin() {
    const btn = document.getElementById("admin-btn");
    try {
      const resp = await fetch("/api/session", { credentials: "same-origin" });
      const s = await resp.json();
      if (s.admin) {
        const until = new Date(s.admin_until * 1000);
        btn.textContent = `Unlocked until ${until.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })} · Lock`;
        btn.classList.add("unlocked");
        btn.dataset.state = "unlocked";
      } else {
        btn.textContent = "Locked · Unlock";
        btn.classList.remove("unlocked");
        btn.dataset.state = "locked";
      }
    } catch (e) {
      btn.textContent = "offline";
    }
  }

  document.getElementById("admin-btn").addEventListener("click", async () => {
    const btn = document.getElementById("admin-btn");
    try {
      if (btn.dataset.state === "unlocked") {
        await api("POST", "/api/session/lock");
      } else {
        let error = "";
        for (;;) {
          const pin = await askPin("Unlock changes on this device.", error);
          if (pin === null) return;
          try {
            await api("POST", "/api/session/unlock", { pin }, { noPrompt: true });
            break;
          } catch (err) {
            if (err.status !== 403) throw err;
            error = "Wrong PIN.";
          }
        }
      }
    } catch (err) {
      fail(err);
    }
    refreshAdmin();
  });
  refreshAdmin();

  return { h, api, toast, fail, askPin, ApiError };
})();
