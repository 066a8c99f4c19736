// relgrade labeling page. Plain JS, no dependencies. All text goes in through textContent:
// chunk texts are untrusted and must show as text.
"use strict";

(function () {
  const params = new URLSearchParams(location.search);
  const token = params.get("token") || "";
  const $ = (id) => document.getElementById(id);
  const keyOf = (q, d) => q + "\u0000" + d;

  let cfg = null;          // {annotator, show_judge, rubric, items}
  let items = [];
  let index = new Map();   // key -> item position
  let labels = new Map();  // key -> label of this annotator
  let annotator = "";
  let cur = -1;            // position of the shown item, -1 = done
  let revisit = null;      // null, or Set of keys already revisited (revisiting skipped pairs)
  let previous = null;     // the label just undone, shown as a hint
  let busy = false;        // an undo is in flight: ignore keys until it lands
  let queue = Promise.resolve();

  function api(path, body) {
    const init = { headers: { "X-Relgrade-Token": token }, cache: "no-store" };
    if (body !== undefined) {
      init.method = "POST";
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    return fetch(path, init).then((r) =>
      r.json().catch(() => ({})).then((data) => {
        if (!r.ok) throw new Error(data.error || ("HTTP " + r.status));
        return data;
      })
    );
  }

  function status(text, isError) {
    const el = $("status");
    el.textContent = text;
    el.classList.toggle("error", !!isError);
  }

  function show(view) {
    for (const id of ["name-view", "item-view", "done-view"]) $(id).hidden = id !== view;
  }

  // -- navigation ------------------------------------------------------------------------------
  function wanted(i) {
    const lab = labels.get(keyOf(items[i].query_id, items[i].doc_id));
    if (revisit) return !!lab && lab.skipped && !revisit.has(keyOf(items[i].query_id, items[i].doc_id));
    return !lab;
  }

  function nextFrom(from) {
    const n = items.length;
    for (let step = 1; step <= n; step++) {
      const i = (from + step + n) % n;
      if (wanted(i)) return i;
    }
    return -1;
  }

  // -- rendering -------------------------------------------------------------------------------
  function renderProgress() {
    let graded = 0, skipped = 0;
    for (const it of items) {
      const lab = labels.get(keyOf(it.query_id, it.doc_id));
      if (lab) lab.skipped ? skipped++ : graded++;
    }
    const n = items.length;
    $("progress-text").textContent =
      graded + " of " + n + " graded" + (skipped ? " · " + skipped + " skipped" : "");
    $("meter-fill").style.width = (n ? (100 * (graded + skipped)) / n : 0) + "%";
    return { graded, skipped };
  }

  function render() {
    const counts = renderProgress();
    if (cur < 0) {
      show("done-view");
      $("done-text").textContent = counts.graded + " of " + items.length + " pairs graded by " +
        annotator + (counts.skipped ? "; " + counts.skipped + " skipped" : "") + ". Every label is saved.";
      $("revisit-hint").hidden = counts.skipped === 0;
      return;
    }
    const it = items[cur];
    show("item-view");
    $("query").textContent = it.query;
    $("query-id").textContent = it.query_id;
    $("doc-id").textContent = it.doc_id + "  ·  pair " + (cur + 1) + " of " + items.length;
    $("text").textContent = it.text;
    const judge = $("judge");
    judge.hidden = !(cfg.show_judge && it.judge_grade !== null && it.judge_grade !== undefined);
    judge.textContent = judge.hidden ? "" : "judge: " + it.judge_grade;
    const prev = $("previous");
    const wasHere = previous && previous.query_id === it.query_id && previous.doc_id === it.doc_id;
    prev.hidden = !wasHere;
    prev.textContent = wasHere ? "undone: " + (previous.skipped ? "skip" : "grade " + previous.grade) : "";
    $("note").value = wasHere ? previous.note : "";
    for (const btn of document.querySelectorAll(".levels button")) {
      btn.classList.toggle("was", !!wasHere && !previous.skipped && Number(btn.dataset.grade) === previous.grade);
    }
    window.scrollTo(0, 0);
  }

  function renderRubric() {
    const list = $("rubric");
    list.replaceChildren();
    for (const level of cfg.rubric) {
      const li = document.createElement("li");
      const btn = document.createElement("button");
      btn.type = "button";
      btn.dataset.grade = String(level.grade);
      const kbd = document.createElement("kbd");
      kbd.textContent = String(level.grade);
      const name = document.createElement("strong");
      name.textContent = level.name;
      const meaning = document.createElement("span");
      meaning.textContent = level.meaning;
      btn.append(kbd, name, meaning);
      btn.addEventListener("click", () => give(level.grade));
      li.append(btn);
      list.append(li);
    }
  }

  // -- actions ---------------------------------------------------------------------------------
  function give(grade) {
    if (cur < 0 || busy) return;
    const it = items[cur];
    const key = keyOf(it.query_id, it.doc_id);
    const before = labels.get(key);
    const note = $("note").value.trim();
    const label = { query_id: it.query_id, doc_id: it.doc_id, annotator, grade, skipped: grade === null, note };
    labels.set(key, label);   // optimistic: show the next pair at once, save in order behind it
    if (revisit) revisit.add(key);
    previous = null;
    const at = cur;
    cur = nextFrom(cur);
    if (cur < 0) revisit = null;
    render();
    queue = queue.then(() =>
      api("/api/label", { query_id: it.query_id, doc_id: it.doc_id, annotator, grade, note })
        .then((data) => {
          labels.set(key, data.label);
          status("saved " + (grade === null ? "skip" : "grade " + grade) + " for " + it.query_id + " / " + it.doc_id);
        })
        .catch((err) => {
          before ? labels.set(key, before) : labels.delete(key);
          cur = at;
          render();
          status("not saved: " + err.message, true);
        })
    );
  }

  function undo() {
    if (busy) return;
    busy = true;
    queue = queue.then(() =>
      api("/api/undo", { annotator })
        .then((data) => {
          const lab = data.label;
          if (!lab) { status("nothing to undo"); return; }
          const key = keyOf(lab.query_id, lab.doc_id);
          labels.delete(key);
          if (revisit) revisit.delete(key);
          previous = lab;
          if (index.has(key)) cur = index.get(key);
          render();
          status("undone " + (lab.skipped ? "skip" : "grade " + lab.grade) + " for " + lab.query_id + " / " + lab.doc_id);
        })
        .catch((err) => status("undo failed: " + err.message, true))
        .finally(() => { busy = false; })
    );
  }

  function start(name) {
    annotator = name;
    $("annotator-name").textContent = name;
    const url = new URL(location.href);
    url.searchParams.set("annotator", name);
    history.replaceState(null, "", url);
    status("loading labels…");
    return api("/api/labels?annotator=" + encodeURIComponent(name)).then((data) => {
      labels = new Map(data.labels.map((lab) => [keyOf(lab.query_id, lab.doc_id), lab]));
      revisit = null;
      previous = null;
      cur = nextFrom(-1);
      render();
      const done = data.labels.length;
      status(done ? "resumed: " + done + " earlier labels by " + name : "ready");
    });
  }

  function askName() {
    show("name-view");
    $("progress-text").textContent = items.length + " pairs to label";
    const input = $("name-input");
    input.value = annotator;
    input.focus();
  }

  // -- keyboard ----------------------------------------------------------------------------------
  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const t = e.target;
    if (t && t.id === "note") {
      if (e.key === "Enter" || e.key === "Escape") { e.preventDefault(); t.blur(); }
      return;
    }
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA")) return;
    if (!annotator || e.repeat) return;
    if (["0", "1", "2", "3"].includes(e.key)) { e.preventDefault(); give(Number(e.key)); }
    else if (e.key === "s") { e.preventDefault(); give(null); }
    else if (e.key === "u") { e.preventDefault(); undo(); }
    else if (e.key === "n" && cur >= 0) { e.preventDefault(); $("note").focus(); }
    else if (e.key === "r" && cur < 0) {
      revisit = new Set();
      cur = nextFrom(-1);
      if (cur < 0) revisit = null;
      render();
    }
  });

  document.addEventListener("DOMContentLoaded", () => {
    $("skip").addEventListener("click", () => give(null));
    $("undo").addEventListener("click", undo);
    $("annotator-name").addEventListener("click", askName);
    $("name-form").addEventListener("submit", (e) => {
      e.preventDefault();
      const name = $("name-input").value.trim().replace(/\s+/g, " ");
      if (name) start(name).catch((err) => status("cannot load labels: " + err.message, true));
    });
    api("/api/session")
      .then((data) => {
        cfg = data;
        items = data.items;
        index = new Map(items.map((it, i) => [keyOf(it.query_id, it.doc_id), i]));
        renderRubric();
        const name = (params.get("annotator") || cfg.annotator || "").trim();
        return name ? start(name) : askName();
      })
      .catch((err) => status("cannot load: " + err.message, true));
  });
})();
