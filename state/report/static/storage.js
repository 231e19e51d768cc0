// A JSON object kept in localStorage under one key, shared by the report, study and
// author pages. A missing or unreadable value reads as an empty object.
"use strict";
window.groundevalStorage = {
  load(key) {
    try {
      const value = JSON.parse(window.localStorage.getItem(key) || "{}");
      return value && typeof value === "object" ? value : {};
    } catch (err) {
      return {};
    }
  },
  save(key, map) {
    window.localStorage.setItem(key, JSON.stringify(map));
  },
};
