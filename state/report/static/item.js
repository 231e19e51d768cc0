// Item page: overlay viewer (one layer shown, help lines on/off) and override controls.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("item-data").textContent);
  const store = window.groundevalOverrides;

  document.querySelectorAll("[data-viewer]").forEach((viewer) => {
    const layers = Array.from(viewer.querySelectorAll("[data-layer]"));
    const buttons = Array.from(viewer.querySelectorAll("[data-show]"));
    const lines = viewer.querySelector("[data-toggle-lines]");
    const rounds = layers.filter((l) => l.dataset.layer !== "image");
    let chosen = rounds.length ? rounds[rounds.length - 1].dataset.layer : "image";

    function show() {
      const wanted = lines && !lines.checked ? "image" : chosen;
      const visible = layers.some((l) => l.dataset.layer === wanted) ? wanted : chosen;
      layers.forEach((l) => { l.hidden = l.dataset.layer !== visible; });
      buttons.forEach((b) => b.classList.toggle("active", b.dataset.show === visible));
    }
    buttons.forEach((b) => b.addEventListener("click", () => {
      chosen = b.dataset.show;
      if (lines) lines.checked = chosen !== "image";
      show();
    }));
    if (lines) lines.addEventListener("change", () => {
      if (lines.checked && chosen === "image" && rounds.length) chosen = rounds[rounds.length - 1].dataset.layer;
      show();
    });
    show();
  });

  const stored = new Map(data.decisions.map((d) => [d.question, d]));

  function render(row) {
    const question = row.dataset.question;
    const pending = store.get(data.item, question);
    const state = row.querySelector(".ov-state");
    const note = row.querySelector(".ov-note");
    const current = stored.get(question);
    const applied = Boolean(pending) && current && current.source === "human" && current.outcome === pending.outcome;
    row.classList.toggle("pending", Boolean(pending) && !applied);
    row.querySelectorAll("[data-set]").forEach((b) => {
      b.classList.toggle("active", Boolean(pending) && b.dataset.set === pending.outcome);
    });
    if (!pending) {
      state.textContent = "";
      return;
    }
    if (document.activeElement !== note) note.value = pending.note;
    state.textContent = (applied ? "applied: " : "pending: ") + pending.outcome + (pending.note ? " (" + pending.note + ")" : "");
  }

  document.querySelectorAll("tr.decision").forEach((row) => {
    const question = row.dataset.question;
    const note = row.querySelector(".ov-note");
    row.querySelectorAll("[data-set]").forEach((b) => b.addEventListener("click", () => {
      store.set(data.item, question, b.dataset.set, note.value.trim());
      if (!b.dataset.set) note.value = "";
    }));
    note.addEventListener("change", () => {
      const pending = store.get(data.item, question);
      if (pending) store.set(data.item, question, pending.outcome, note.value.trim());
    });
    render(row);
  });
  store.onChange(() => document.querySelectorAll("tr.decision").forEach(render));
})();
