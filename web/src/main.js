// The playground page: an editor, a run, each result under its statement (docs/web.md).
// Python runs in worker.js; this file only shows what it posts.
import { EditorView, basicSetup } from "codemirror";
import { Decoration, keymap } from "@codemirror/view";
import { Prec, StateEffect, StateField } from "@codemirror/state";
import { gradlangLanguage, stopHighlighting } from "./gradlang-mode.js";
import { renderResult, renderError } from "./results.js";

// gradlang stops a statement itself after 60 s (limits.STATEMENT_TIME_LIMIT); the page ends the
// worker only when Python cannot stop (one long call into C), after this long. ?limit=SECONDS sets it,
// within LIMIT_BOUNDS: anything else (?limit=-1, ?limit=abc) keeps the default and says so.
const DEFAULT_LIMIT = 90;
const LIMIT_BOUNDS = [5, 3600];

function limitFromUrl() {
  const asked = new URLSearchParams(location.search).get("limit");
  if (asked === null) return { seconds: DEFAULT_LIMIT, notice: null };
  const seconds = Number(asked);
  if (asked.trim() !== "" && Number.isFinite(seconds) && seconds >= LIMIT_BOUNDS[0] && seconds <= LIMIT_BOUNDS[1]) {
    return { seconds, notice: null };
  }
  return { seconds: DEFAULT_LIMIT, notice: `?limit=${asked} is not a number of seconds from ${LIMIT_BOUNDS[0]} to `
    + `${LIMIT_BOUNDS[1]}, so the page keeps its limit of ${DEFAULT_LIMIT} s per statement.` };
}

const LIMIT = limitFromUrl();

// state: loading | ready | running | stopping | done | failed; page.queued is a program waiting for Python.
const page = { results: [], state: "loading", worker: null, line: null, timer: null, started: 0, queued: null,
  limit: LIMIT.seconds, note: "" };
window.gradlangPage = page; // read by tests/web/test_page.py

const $ = (id) => document.getElementById(id);

// The status line: what Python is doing, after page.note (what the visitor last asked: stopped, replaced).
function status(text, state) {
  $("status").textContent = page.note ? `${page.note} · ${text}` : text;
  if (state) $("status").dataset.state = page.state = state;
  $("stop").disabled = !(page.state === "running" || page.state === "stopping" || page.queued !== null);
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
// Python runs in a worker that cannot be interrupted (no threads, no SharedArrayBuffer on a plain static
// server), so a run is ended by ending its worker: Stop, a new run while one is going, or the time limit.
// A new worker then starts (the browser's cache makes it quicker than the first), and a program asked
// for meanwhile waits in page.queued, shown in the status line, until it is ready.

function startWorker() {
  page.workerStarted = performance.now();
  const worker = new Worker(new URL("./worker.js", import.meta.url), { type: "module" });
  worker.onmessage = (event) => { if (worker === page.worker) onWorker(event.data); }; // an ended worker is ignored
  worker.onerror = (event) => { if (worker === page.worker) status(`Python could not start: ${event.message}`, "failed"); };
  page.worker = worker;
  progress("loading Python…", "loading");
}

function endRun() {
  clearTimeout(page.timer);
  page.worker.terminate();
}

function progress(text, state) {
  page.progress = text;
  status(waiting(text), state);
}

const waiting = (text) => (page.queued !== null ? `${text} (your program runs as soon as Python is ready)` : text);

function onWorker(data) {
  if (data.progress) progress(data.progress);
  else if (data.failed) status(`Python could not start: ${data.failed}`, "failed");
  else if (data.ready) {
    page.interrupt = data.interrupt ?? null;
    status(`ready (Python started in ${((performance.now() - page.workerStarted) / 1000).toFixed(1)} s)`, "ready");
    if (page.queued !== null) run(page.queued);
  } else if (data.message) onMessage(JSON.parse(data.message));
  else if ("done" in data) finish();
}

function onMessage(message) {
  if (message.running !== undefined) {
    page.line = message.running;
    if (page.state === "stopping") return; // the interrupt ends it; the grace timer stays
    status(`running line ${message.running}…`);
    clearTimeout(page.timer);
    page.timer = setTimeout(outOfTime, page.limit * 1000);
    return;
  }
  const result = JSON.parse(message.json);
  page.results.push(result);
  page.firstResultAt ??= performance.now(); // ms since the page was opened (docs/web.md)
  const source = page.source.split("\n");
  $("output").append(result.kind === "error" ? renderError(result, source) : renderResult(result, message.latex_steps));
}

function finish() {
  const seconds = ((performance.now() - page.started) / 1000).toFixed(1);
  const errors = page.results.filter((r) => r.kind === "error").length;
  clearTimeout(page.timer);
  if (page.queued !== null) { start(page.queued); return; } // the run was stopped for this one
  status(page.state === "stopping" ? "ready"
    : `done in ${seconds} s: ${page.results.length - errors} result(s)${errors ? ", stopped at an error" : ""}`, "done");
  showErrors();
}

function showErrors() {
  document.querySelector("#output .result.error")?.scrollIntoView({ block: "center" });
  markLines([
    ...page.results.filter((r) => r.kind !== "error" && r.warnings.length).map((r) => ({ line: r.line, kind: "warning" })),
    ...page.results.filter((r) => r.kind === "error" && r.line).map((r) => ({ line: r.line, kind: "error" })),
  ]);
}

// Ends the running program's worker with an error at its statement, and starts Python again.
function abandon(error, message, note) {
  endRun();
  onMessage({ json: JSON.stringify({ kind: "error", error, line: page.line, column: 1, message }) });
  showErrors();
  page.note = note;
  startWorker();
}

function outOfTime() {
  abandon("LimitError", `the statement took longer than ${page.limit} s, so the page stopped Python and is starting it again`,
    `line ${page.line} ran past the page's limit of ${page.limit} s`);
}

const at = () => (page.line === null ? "" : ` at line ${page.line}`);

// Stop: the running program ends (its statement shows an Interrupted error), and Python is ready again.
function stop() {
  if (page.state === "stopping" && page.queued !== null) { // the run asked for next is not wanted after all
    page.queued = null;
    page.note = `stopped${at()}`;
    status("stopping…");
  } else if (page.state === "running" || page.state === "stopping") { // a second Stop ends the worker
    halt(`stopped${at()}`);
  } else if (page.queued !== null) {
    page.queued = null;
    page.note = "stopped before it started";
    status(page.state === "loading" ? page.progress : "ready", page.state);
  }
}

// Ends the run going. With the worker's interrupt byte (a cross-origin isolated page), Python stops the
// statement itself with a KeyboardInterrupt, its "done" follows, and the same worker, Pyodide and SymPy
// loaded, runs page.queued if any; if Python has not stopped after INTERRUPT_GRACE (one long call into C),
// or without the byte, the worker ends and a new one starts.
const INTERRUPT_GRACE = 15;

function halt(note) {
  page.note = note;
  if (!page.interrupt || page.state === "stopping") {
    abandon("Interrupted", "stopped (the Stop button); Python is starting again", note);
    return;
  }
  page.interrupt[0] = 2; // SIGINT
  status(waiting("stopping…"), "stopping");
  clearTimeout(page.timer);
  page.timer = setTimeout(() => halt(page.note), INTERRUPT_GRACE * 1000);
}

function run(source = editor.state.doc.toString()) {
  if (page.state === "running" || page.state === "stopping") { // a new run replaces the one going
    page.queued = source;
    page.results = [];
    $("output").replaceChildren();
    if (page.state === "running") halt(`the run was stopped${at()} for the new one`);
    else status(waiting("stopping…"));
  } else if (page.state === "failed") { // Python could not start: try again
    endRun();
    page.note = "";
    page.queued = source;
    startWorker();
  } else if (page.state !== "ready" && page.state !== "done") {
    page.note = "";
    page.queued = source; // runs once Python is ready
    status(waiting(page.progress));
  } else {
    start(source);
  }
}

function start(source) {
  page.queued = null;
  page.note = "";
  page.results = [];
  page.line = null;
  page.source = source;
  page.started = performance.now();
  $("output").replaceChildren();
  markLines([]);
  status("running…", "running");
  if (page.interrupt) page.interrupt[0] = 0; // a stop that came as the last run ended is not this run's
  page.worker.postMessage({ run: source });
}

// --- the page ------------------------------------------------------------------------------

async function main() {
  if (LIMIT.notice) { $("notice").textContent = LIMIT.notice; $("notice").hidden = false; }
  const shared = sharedProgram();
  if (shared !== null) page.note = "a shared program: press Run (Ctrl-Enter) to run it";
  startWorker();
  const { lessons, words } = await (await fetch("lessons.json")).json();
  const menu = $("lessons");
  for (const lesson of lessons) menu.append(new Option(`${lesson.name} — ${lesson.title}`, lesson.name));
  menu.onchange = () => {
    const lesson = lessons.find((l) => l.name === menu.value);
    editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: lesson.source } });
    history.replaceState(null, "", location.pathname + location.search);
  };
  makeEditor(words, shared ?? lessons[0].source);
  $("run").onclick = () => run();
  $("stop").onclick = stop;
  $("share").onclick = share;
  // The gallery's first lesson runs at once (queued until Python is ready): the first result is the
  // page's first sight. A shared program waits for Run: a link, or a reload, never starts a long run.
  if (shared === null) run();
}

main();
