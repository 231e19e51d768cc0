// The agreement study page: one question at a time, answers kept in localStorage per
// study, exported as labels JSONL for `groundeval agree RUN STUDY/labels-*.jsonl`.
// Never builds HTML from data: question text is set with textContent only.
"use strict";
(function () {
  const STUDY = document.body.dataset.study;
  const KEY = "groundeval:study:" + STUDY;
  const RATER_KEY = "groundeval:rater";
  let tasks = [];
  let index = 0;
  let view = "image";

  function load() {
    return window.groundevalStorage.load(KEY);
  }

  function save(map) {
    window.groundevalStorage.save(KEY, map);
  }

  function rater() {
    return (document.getElementById("rater").value || "").trim();
  }

  function answer(label) {
    const map = load();
    map[tasks[index].task] = { label, time: new Date().toISOString() };
    save(map);
    const open = tasks.findIndex((t, i) => i > index && !map[t.task]);
    show(open >= 0 ? open : Math.min(index + 1, tasks.length - 1));
  }

  function jsonl() {
    const map = load();
    const name = rater();
    return tasks
      .filter((t) => map[t.task])
      .map((t) => JSON.stringify({ study: STUDY, task: t.task, rater: name, label: map[t.task].label, time: map[t.task].time }) + "\n")
      .join("");
  }

  function download() {
    const name = rater();
    if (!name) {
      window.alert("Enter your name first: labels are exported per rater.");
      document.getElementById("rater").focus();
      return;
    }
    const blob = new Blob([jsonl()], { type: "application/x-ndjson" });
    const url = URL.createObjectURL(blob);
    const link = document.createElement("a");
    link.href = url;
    link.download = "labels-" + name.replace(/[^A-Za-z0-9_-]+/g, "_") + ".jsonl";
    document.body.appendChild(link);
    link.click();
    link.remove();
    window.setTimeout(() => URL.revokeObjectURL(url), 5000);
  }

  function show(i) {
    if (!tasks.length) {
      return;
    }
    index = Math.max(0, Math.min(i, tasks.length - 1));
    const t = tasks[index];
    const map = load();
    document.getElementById("task-id").textContent = t.task;
    document.getElementById("task-pos").textContent = "(" + (index + 1) + " of " + tasks.length + ")";
    document.getElementById("question").textContent = t.ask;
    const given = map[t.task] ? map[t.task].label : "";
    document.getElementById("given").textContent = given ? "your answer: " + given.replace("_", " ") : "";
    document.querySelectorAll("[data-label]").forEach((b) => b.classList.toggle("chosen", b.dataset.label === given));
    if (view === "overlay" && !t.overlay) {
      view = "image";
    }
    const src = view === "overlay" ? t.overlay : t.image || t.overlay;
    const picture = document.getElementById("picture");
    picture.hidden = !src;
    document.getElementById("no-picture").hidden = Boolean(src);
    if (src) {
      picture.src = src;
    } else {
      picture.removeAttribute("src");
    }
    document.querySelectorAll("[data-view]").forEach((b) => {
      b.classList.toggle("active", b.dataset.view === view);
      b.disabled = b.dataset.view === "overlay" ? !t.overlay : !t.image;
    });
    const answered = tasks.filter((x) => map[x.task]).length;
    document.getElementById("progress").textContent = answered + " / " + tasks.length + " answered";
  }

  window.groundevalStudy = function (data) {
    tasks = Array.isArray(data.tasks) ? data.tasks : [];
    const map = load();
    const open = tasks.findIndex((t) => !map[t.task]);
    show(open >= 0 ? open : 0);
  };

  window.groundevalStudyExport = jsonl;

  document.addEventListener("DOMContentLoaded", () => {
    const name = document.getElementById("rater");
    name.value = window.localStorage.getItem(RATER_KEY) || "";
    name.addEventListener("input", () => window.localStorage.setItem(RATER_KEY, rater()));
    document.querySelectorAll("[data-label]").forEach((b) => b.addEventListener("click", () => answer(b.dataset.label)));
    document.querySelectorAll("[data-view]").forEach((b) => b.addEventListener("click", () => { view = b.dataset.view; show(index); }));
    document.getElementById("prev").addEventListener("click", () => show(index - 1));
    document.getElementById("next").addEventListener("click", () => show(index + 1));
    document.getElementById("next-open").addEventListener("click", () => {
      const map = load();
      const open = tasks.findIndex((t, i) => i > index && !map[t.task]);
      const first = tasks.findIndex((t) => !map[t.task]);
      show(open >= 0 ? open : first >= 0 ? first : index);
    });
    document.getElementById("export").addEventListener("click", download);
    document.addEventListener("keydown", (event) => {
      if (event.target instanceof HTMLInputElement) {
        return;
      }
      const keys = { y: "yes", n: "no", c: "cannot_tell" };
      if (keys[event.key]) {
        answer(keys[event.key]);
      } else if (event.key === "ArrowLeft") {
        show(index - 1);
      } else if (event.key === "ArrowRight") {
        show(index + 1);
      }
    });
  });
})();
