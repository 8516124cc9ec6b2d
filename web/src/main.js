// The playground page: an editor, a run, each result under its statement (docs/web.md).
// Python runs in worker.js; this file only shows what it posts.
import { EditorView, basicSetup } from "codemirror";
import { Decoration, keymap } from "@codemirror/view";
import { Prec, StateEffect, StateField } from "@codemirror/state";
import { gradlangLanguage, stopHighlighting } from "./gradlang-mode.js";
import { renderResult, renderError } from "./results.js";

// gradlang stops a statement itself after 60 s (limits.STATEMENT_TIME_LIMIT); the page ends the
// worker only when Python cannot stop (one long call into C), after this long. ?limit=SECONDS sets it.
const LIMIT_SECONDS = Number(new URLSearchParams(location.search).get("limit")) || 90;

const page = { results: [], state: "loading", worker: null, line: null, timer: null, started: 0, queued: null };
window.gradlangPage = page; // read by tests/web/test_page.py

const $ = (id) => document.getElementById(id);

function status(text, state) {
  $("status").textContent = text;
  if (state) $("status").dataset.state = page.state = state;
}

// --- marks at the lines of errors and warnings ----------------------------------------------

const setMarks = StateEffect.define();
const marks = StateField.define({
  create: () => Decoration.none,
  update(value, tr) {
    for (const effect of tr.effects) if (effect.is(setMarks)) return effect.value;
    return tr.docChanged ? Decoration.none : value;
  },
  provide: (field) => EditorView.decorations.from(field),
});

function markLines(entries) {
  const doc = editor.state.doc;
  const ranges = entries.filter((e) => e.line >= 1 && e.line <= doc.lines)
    .sort((a, b) => a.line - b.line)
    .map((e) => Decoration.line({ class: `cm-${e.kind}-line` }).range(doc.line(e.line).from));
  editor.dispatch({ effects: setMarks.of(Decoration.set(ranges, true)) });
}

// --- the editor ----------------------------------------------------------------------------

let editor;

function makeEditor(words, source) {
  editor = new EditorView({
    doc: source,
    parent: $("editor"),
    extensions: [
      Prec.highest(keymap.of([{ key: "Mod-Enter", run: () => { run(); return true; } }])),
      basicSetup, EditorView.lineWrapping, gradlangLanguage(words), stopHighlighting, marks,
    ],
  });
}

// --- share links: the program in the URL fragment ------------------------------------------

function encode(text) {
  const bytes = new TextEncoder().encode(text);
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function decode(text) {
  const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  return new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
}

function sharedProgram() {
  const match = location.hash.match(/^#code=([A-Za-z0-9_-]*)$/);
  try { return match ? decode(match[1]) : null; } catch { return null; }
}

function share() {
  const link = `${location.origin}${location.pathname}#code=${encode(editor.state.doc.toString())}`;
  history.replaceState(null, "", link);
  $("share-link").value = link;
  $("share-link").hidden = false;
  $("share-link").select();
  navigator.clipboard?.writeText(link).catch(() => {});
}

// --- the worker ----------------------------------------------------------------------------

function startWorker() {
  page.workerStarted = performance.now();
  page.worker = new Worker(new URL("./worker.js", import.meta.url), { type: "module" });
  page.worker.onmessage = (event) => onWorker(event.data);
  page.worker.onerror = (event) => status(`Python could not start: ${event.message}`, "failed");
  status("loading Python…", "loading");
}

function onWorker(data) {
  if (data.progress) status(data.progress);
  else if (data.failed) status(`Python could not start: ${data.failed}`, "failed");
  else if (data.ready) {
    status(`ready (Python started in ${((performance.now() - page.workerStarted) / 1000).toFixed(1)} s)`, "ready");
    if (page.queued !== null) run(page.queued);
  } else if (data.message) onMessage(JSON.parse(data.message));
  else if ("done" in data) finish();
}

function onMessage(message) {
  if (message.running !== undefined) {
    page.line = message.running;
    status(`running line ${message.running}…`);
    clearTimeout(page.timer);
    page.timer = setTimeout(outOfTime, LIMIT_SECONDS * 1000);
    return;
  }
  const result = JSON.parse(message.json);
  page.results.push(result);
  page.firstResultAt ??= performance.now(); // ms since the page was opened (docs/web.md)
  const source = editor.state.doc.toString().split("\n");
  $("output").append(result.kind === "error" ? renderError(result, source) : renderResult(result, message.latex_steps));
}

function finish() {
  clearTimeout(page.timer);
  const seconds = ((performance.now() - page.started) / 1000).toFixed(1);
  const errors = page.results.filter((r) => r.kind === "error").length;
  status(`done in ${seconds} s: ${page.results.length - errors} result(s)${errors ? ", stopped at an error" : ""}`, "done");
  document.querySelector("#output .result.error")?.scrollIntoView({ block: "center" });
  markLines([
    ...page.results.filter((r) => r.kind !== "error" && r.warnings.length).map((r) => ({ line: r.line, kind: "warning" })),
    ...page.results.filter((r) => r.kind === "error" && r.line).map((r) => ({ line: r.line, kind: "error" })),
  ]);
}

function outOfTime() {
  page.worker.terminate();
  const error = {
    kind: "error", error: "LimitError", line: page.line, column: 1,
    message: `the statement took longer than ${LIMIT_SECONDS} s, so the page stopped Python and is starting it again`,
  };
  onMessage({ json: JSON.stringify(error) });
  finish();
  startWorker();
}

function run(source = editor.state.doc.toString()) {
  if (page.state !== "ready" && page.state !== "done") {
    page.queued = source; // runs once Python is ready
    return;
  }
  page.queued = null;
  page.results = [];
  page.started = performance.now();
  $("output").replaceChildren();
  markLines([]);
  status("running…", "running");
  page.worker.postMessage({ run: source });
}

// --- the page ------------------------------------------------------------------------------

async function main() {
  startWorker();
  const { lessons, words } = await (await fetch("lessons.json")).json();
  const menu = $("lessons");
  for (const lesson of lessons) menu.append(new Option(`${lesson.name} — ${lesson.title}`, lesson.name));
  menu.onchange = () => {
    const lesson = lessons.find((l) => l.name === menu.value);
    editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: lesson.source } });
    history.replaceState(null, "", location.pathname + location.search);
  };
  makeEditor(words, sharedProgram() ?? lessons[0].source);
  $("run").onclick = () => run();
  $("share").onclick = share;
  run(); // queued until Python is ready: the first result is the page's first sight
}

main();
