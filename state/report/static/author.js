// Review decisions for `groundeval author review`: kept in localStorage per folder and
// exported as the decisions.jsonl that `groundeval author apply` reads. Text only, no HTML.
"use strict";
(function () {
  const KEY = document.body.dataset.storageKey;
  const REVIEWER_KEY = "groundeval:reviewer";
  const reviewer = document.getElementById("reviewer");

  function load() {
    return window.groundevalStorage.load(KEY);
  }

  function save(map) {
    window.groundevalStorage.save(KEY, map);
    document.getElementById("decided").textContent = String(Object.keys(map).length);
  }

  function read(section) {
    const chosen = section.querySelector("[data-decision]:checked");
    const decision = chosen ? chosen.value : "";
    const weights = {};
    section.querySelectorAll("[data-weight]").forEach((input) => {
      const value = Number(input.value);
      if (input.value !== input.dataset.original && value > 0) {
        weights[input.dataset.weight] = value;
      }
    });
    const note = section.querySelector("[data-note]").value;
    return { decision, weights, note };
  }

  function store(section) {
    const map = load();
    const id = section.dataset.draft;
    const value = read(section);
    if (value.decision) {
      map[id] = value;
    } else {
      delete map[id];
    }
    save(map);
  }

  function restore(section) {
    const value = load()[section.dataset.draft];
    if (!value) return;
    section.querySelectorAll("[data-decision]").forEach((input) => {
      input.checked = input.value === value.decision;
    });
    section.querySelectorAll("[data-weight]").forEach((input) => {
      if (Object.prototype.hasOwnProperty.call(value.weights || {}, input.dataset.weight)) {
        input.value = String(value.weights[input.dataset.weight]);
      }
    });
    section.querySelector("[data-note]").value = value.note || "";
  }

  function jsonl() {
    const map = load();
    const name = reviewer.value.trim();
    return Object.keys(map)
      .sort()
      .map((id) =>
        JSON.stringify({ id, decision: map[id].decision, weights: map[id].weights || {}, note: map[id].note || "", reviewer: name })
      )
      .map((line) => line + "\n")
      .join("");
  }

  function download() {
    if (!reviewer.value.trim()) {
      document.getElementById("export-error").hidden = false;
      reviewer.focus();
      return;
    }
    document.getElementById("export-error").hidden = true;
    const blob = new Blob([jsonl()], { type: "application/x-ndjson" });
    const url = URL.createObjectURL(blob);
    const link = document.createElement("a");
    link.href = url;
    link.download = "decisions.jsonl";
    document.body.appendChild(link);
    link.click();
    link.remove();
    window.setTimeout(() => URL.revokeObjectURL(url), 5000);
  }

  reviewer.value = window.localStorage.getItem(REVIEWER_KEY) || "";
  reviewer.addEventListener("input", () => window.localStorage.setItem(REVIEWER_KEY, reviewer.value));
  document.querySelectorAll("section.draft").forEach((section) => {
    restore(section);
    section.addEventListener("change", () => store(section));
    section.addEventListener("input", () => store(section));
  });
  document.getElementById("export").addEventListener("click", download);
  save(load());
  window.groundevalReview = { load, jsonl };
})();
