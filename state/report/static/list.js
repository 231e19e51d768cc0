// Index page: the item list. Its data comes from a separate script loaded after the
// page (file:// pages cannot fetch JSON); rows are built with textContent only.
"use strict";
(function () {
  const source = document.currentScript.dataset.src;
  const store = window.groundevalOverrides;
  const $ = (id) => document.getElementById(id);
  let all = [];
  let page = 0;

  function pendingItems() {
    return new Set(store.rows().map((r) => r.item));
  }

  function matches(row, f, pending) {
    if (f.outcome && row.o !== f.outcome) return false;
    if (f.tag && !row.t.includes(f.tag)) return false;
    if (f.gate && !row.g) return false;
    if (f.withheld && !row.w) return false;
    if (f.error && !row.e) return false;
    if (f.overridden && !row.v) return false;
    if (f.pending && !pending.has(row.i)) return false;
    if (f.disagree && !row.d) return false;
    if (f.text && !f.terms.every((t) => row.x.includes(t))) return false;
    return true;
  }

  function filters() {
    const text = $("f-text").value.trim().toLowerCase();
    return {
      outcome: $("f-outcome").value, tag: $("f-tag").value,
      gate: $("f-gate").checked, withheld: $("f-withheld").checked, error: $("f-error").checked,
      overridden: $("f-overridden").checked, pending: $("f-pending").checked,
      disagree: $("f-disagree").checked, text, terms: text.split(/\s+/).filter(Boolean),
    };
  }

  function cell(tr, text, cls) {
    const td = document.createElement("td");
    td.textContent = text;
    if (cls) td.className = cls;
    tr.appendChild(td);
    return td;
  }

  function render() {
    const f = filters();
    const pending = pendingItems();
    const shown = all.filter((row) => matches(row, f, pending));
    const size = Number($("page-size").value) || 25;
    const pages = Math.max(1, Math.ceil(shown.length / size));
    page = Math.min(Math.max(page, 0), pages - 1);
    const body = $("item-rows");
    body.replaceChildren();
    shown.slice(page * size, (page + 1) * size).forEach((row) => {
      const tr = document.createElement("tr");
      tr.dataset.item = row.i;
      const td = document.createElement("td");
      const link = document.createElement("a");
      link.href = row.u;
      link.textContent = row.i;
      td.appendChild(link);
      tr.appendChild(td);
      cell(tr, row.p);
      const badge = document.createElement("span");
      badge.className = "badge o-" + row.o;
      badge.textContent = row.o;
      cell(tr, "").appendChild(badge);
      cell(tr, row.g || "");
      row.s.forEach((s) => cell(tr, s, "scores"));
      cell(tr, row.t.join(" "));
      const flags = [];
      if (row.v) flags.push("overridden ×" + row.v);
      if (pending.has(row.i)) flags.push("pending");
      if (row.d) flags.push("runs disagree");
      if (row.w) flags.push("withheld");
      if (row.e) flags.push("error");
      cell(tr, flags.join(", "), "flags");
      body.appendChild(tr);
    });
    const first = shown.length ? page * size + 1 : 0;
    const last = Math.min(shown.length, (page + 1) * size);
    $("page-info").textContent =
      first + "–" + last + " of " + shown.length + " matching (" + all.length + " items) · page " + (page + 1) + "/" + pages;
    $("page-prev").disabled = page === 0;
    $("page-next").disabled = page >= pages - 1;
    renderPending();
  }

  function renderPending() {
    const body = $("pending-rows");
    body.replaceChildren();
    const byItem = new Map(all.map((r) => [r.i, r.u]));
    store.rows().forEach((r) => {
      const tr = document.createElement("tr");
      const td = document.createElement("td");
      const url = byItem.get(r.item);
      if (url) {
        const link = document.createElement("a");
        link.href = url;
        link.textContent = r.item;
        td.appendChild(link);
      } else {
        td.textContent = r.item;
      }
      tr.appendChild(td);
      [r.question, r.outcome, r.note, r.author].forEach((t) => cell(tr, t));
      body.appendChild(tr);
    });
  }

  window.groundevalReceiveItems = function (data) {
    all = data.rows;
    const tags = Array.from(new Set(all.flatMap((r) => r.t))).sort();
    const select = $("f-tag");
    tags.forEach((t) => {
      const option = document.createElement("option");
      option.value = t;
      option.textContent = t;
      select.appendChild(option);
    });
    document.body.dataset.itemsLoaded = String(all.length);
    render();
  };

  function reset() { page = 0; render(); }
  ["f-outcome", "f-tag", "f-gate", "f-withheld", "f-error", "f-overridden", "f-pending",
   "f-disagree", "page-size"].forEach((id) => $(id).addEventListener("change", reset));
  $("f-text").addEventListener("input", reset);
  $("filters").addEventListener("submit", (ev) => ev.preventDefault());
  $("page-prev").addEventListener("click", () => { page -= 1; render(); });
  $("page-next").addEventListener("click", () => { page += 1; render(); });
  $("clear-overrides").addEventListener("click", () => {
    if (window.confirm("Drop every pending override of this run from this browser?")) store.clear();
  });
  store.onChange(render);

  function loadData() {
    const script = document.createElement("script");
    script.src = source;
    script.onerror = () => { $("page-info").textContent = "could not load " + source; };
    document.body.appendChild(script);
  }
  if (document.readyState === "complete") loadData();
  else window.addEventListener("load", loadData);
})();
