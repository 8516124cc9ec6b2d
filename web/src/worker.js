// The page's Python: Pyodide in a Web Worker, so a long statement never freezes the page.
// Messages out: {progress: text}, {ready: true, interrupt}, {message: <runner.py's JSON text>},
// {done: status}, {failed: text}. Messages in: {run: source}. The page ends this worker when a
// statement passes the time limit and starts a new one (main.js). Where the page is cross-origin
// isolated (served with COOP and COEP headers), `interrupt` is a byte in a SharedArrayBuffer: the page
// writes 2 (SIGINT) there to stop a run with a KeyboardInterrupt, and this worker, with Pyodide and
// SymPy loaded, runs the next program. Elsewhere it is null, and the page ends the worker instead.
import { loadPyodide } from "./pyodide/pyodide.mjs";

const say = (data) => postMessage(data);
let interrupt = null;

async function installWheel(pyodide, name) {
  const response = await fetch(new URL(`./wheels/${name}`, import.meta.url));
  if (!response.ok) throw new Error(`cannot load wheels/${name} (${response.status})`);
  pyodide.FS.writeFile(`/tmp/${name}`, new Uint8Array(await response.arrayBuffer()));
  pyodide.runPython(`
import site, zipfile
zipfile.ZipFile("/tmp/${name}").extractall(site.getsitepackages()[0])
`);
}

async function start() {
  say({ progress: "loading Python (Pyodide)…" });
  const pyodide = await loadPyodide({ indexURL: new URL("./pyodide/", import.meta.url).href });
  const lessons = await (await fetch(new URL("./lessons.json", import.meta.url))).json();
  say({ progress: "loading SymPy, mpmath, lark and gradlang…" });
  for (const wheel of lessons.wheels) await installWheel(pyodide, wheel);
  const runner = await (await fetch(new URL("./runner.py", import.meta.url))).text();
  pyodide.FS.writeFile("/home/pyodide/gradlang_page_runner.py", runner);
  say({ progress: "starting gradlang (importing SymPy)…" });
  if (self.crossOriginIsolated) {
    interrupt = new Uint8Array(new SharedArrayBuffer(1));
    pyodide.setInterruptBuffer(interrupt);
  }
  pyodide.runPython("import sys; sys.path.insert(0, '/home/pyodide'); import gradlang_page_runner");
  return pyodide.pyimport("gradlang_page_runner");
}

const ready = start().then(
  (runner) => { say({ ready: true, interrupt }); return runner; },
  (error) => { say({ failed: String(error && error.message || error) }); throw error; },
);

onmessage = async (event) => {
  const runner = await ready;
  try {
    say({ done: runner.run(event.data.run, (text) => say({ message: text })) });
  } catch (error) { // runner.run reports every error itself; this is a last resort, never a traceback
    say({ message: JSON.stringify({ json: JSON.stringify({ kind: "error", error: "InternalError",
      message: String(error.message || error).split("\n").filter(Boolean).pop() }) }) });
    say({ done: 1 });
  }
};
