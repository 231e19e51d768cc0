// Pending overrides: kept in localStorage per run, exported as the JSONL that
// `groundeval rescore --overrides` reads. Never builds HTML from data: text only.
"use strict";
(function () {
  const KEY = document.body.dataset.overridesKey;
  const AUTHOR_KEY = "groundeval:author";
  const listeners = [];

  function load() {
    return window.groundevalStorage.load(KEY);
  }

  function save(map) {
    window.groundevalStorage.save(KEY, map);
    listeners.forEach((fn) => fn(map));
  }

  function keyOf(item, question) {
    return JSON.stringify([item, question]);
  }

  function author() {
    return window.localStorage.getItem(AUTHOR_KEY) || "";
  }

  function set(item, question, outcome, note) {
    const map = load();
    if (!outcome) {
      delete map[keyOf(item, question)];
    } else {
      map[keyOf(item, question)] = { item, question, outcome, note: note || "", author: author() };
    }
    save(map);
  }

  function get(item, question) {
    return load()[keyOf(item, question)] || null;
  }

  function rows() {
    return Object.values(load()).sort((a, b) =>
      a.item === b.item ? (a.question < b.question ? -1 : 1) : a.item < b.item ? -1 : 1
    );
  }

  function jsonl() {
    return rows()
      .map((r) => JSON.stringify({ item: r.item, question: r.question, outcome: r.outcome, note: r.note, author: r.author }))
      .map((line) => line + "\n")
      .join("");
  }

  function download() {
    const blob = new Blob([jsonl()], { type: "application/x-ndjson" });
    const url = URL.createObjectURL(blob);
    const link = document.createElement("a");
    link.href = url;
    link.download = "overrides-" + (document.body.dataset.run || "run") + ".jsonl";
    document.body.appendChild(link);
    link.click();
    link.remove();
    window.setTimeout(() => URL.revokeObjectURL(url), 5000);
  }

  function showCount() {
    const n = rows().length;
    document.querySelectorAll("[data-override-count]").forEach((el) => {
      el.textContent = String(n);
    });
  }

  window.groundevalOverrides = {
    load, save, set, get, rows, jsonl, download, author,
    clear() { save({}); },
    onChange(fn) { listeners.push(fn); },
  };

  listeners.push(showCount);
  showCount();
  document.querySelectorAll("[data-export-overrides]").forEach((btn) => {
    btn.addEventListener("click", download);
  });
  const authorInput = document.getElementById("ov-author");
  if (authorInput) {
    authorInput.value = author();
    authorInput.addEventListener("input", () => {
      window.localStorage.setItem(AUTHOR_KEY, authorInput.value.trim());
    });
  }
  window.addEventListener("storage", () => showCount());
})();
