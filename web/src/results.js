// Each result as the page shows it: the statement, its value typeset by KaTeX from gradlang's LaTeX
// (stops in magenta), warnings, and for `explain` a collapsible derivation built from the JSON output.
import katex from "katex";

const STOP = "#b4009e";

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

// \operatorname{sg}\left( … \right) wrapped in a colour, matching \left/\right pairs.
export function colourStops(latex) {
  const head = "\\operatorname{sg}\\left(";
  let out = "", at = 0;
  for (let start = latex.indexOf(head); start !== -1; start = latex.indexOf(head, at)) {
    let depth = 0, i = start + head.length - "\\left(".length, end = -1;
    while (i < latex.length) {
      if (latex.startsWith("\\left", i)) { depth += 1; i += 5; } else if (latex.startsWith("\\right", i)) {
        depth -= 1; i += 6; if (depth === 0) { end = i + 1; break; }
      } else i += 1;
    }
    if (end === -1) break;
    const inner = colourStops(latex.slice(start + head.length, end - "\\right)".length)); // nested stops
    out += latex.slice(at, start) + `{\\color{${STOP}}${head}${inner}\\right)}`;
    at = end;
  }
  return out + latex.slice(at);
}

function math(latex, display) {
  const node = element(display ? "div" : "span", display ? "math" : "math-inline");
  try {
    katex.render(colourStops(latex), node, { displayMode: display, throwOnError: true });
  } catch {
    node.textContent = latex; // a formula KaTeX cannot typeset still shows, as its LaTeX
    node.classList.add("raw");
  }
  return node;
}

function header(result) {
  const node = element("div", "statement");
  node.append(element("span", "line-number", `${result.line} ┃`), element("code", "", result.source));
  return node;
}

export function renderResult(result, latexSteps = []) {
  const node = element("section", `result kind-${result.kind}`);
  node.dataset.line = result.line;
  node.append(header(result));
  (result.steps || []).forEach((step, i) => node.append(derivation(step, latexSteps[i] || "")));
  if (result.kind !== "assignment") { // an assignment's record carries only its warnings
    const value = element("div", "value");
    value.append(element("span", "arrow", "→"), math(result.latex, true));
    node.append(value);
  }
  for (const warning of result.warnings) node.append(element("div", "warning", `line ${result.line}: warning: ${warning}`));
  return node;
}

export function renderError(error, sourceLines) {
  const node = element("section", "result error");
  node.dataset.line = error.line ?? "";
  const where = error.line ? `line ${error.line}${error.column ? `, column ${error.column}` : ""}: ` : "";
  if (error.line && sourceLines[error.line - 1] !== undefined) {
    const text = sourceLines[error.line - 1];
    const statement = element("div", "statement");
    statement.append(element("span", "line-number", `${error.line} ┃`), element("code", "", text));
    const caretRow = element("div", "statement"); // laid out as the statement above it, so the caret lines up
    const blank = element("span", "line-number", `${error.line} ┃`);
    blank.style.visibility = "hidden";
    caretRow.append(blank, element("code", "caret", `${" ".repeat(Math.max(0, (error.column || 1) - 1))}^`));
    node.append(statement, caretRow);
  }
  node.append(element("div", "message", `${where}${error.error}: ${error.message}`));
  return node;
}

// --- explain: the derivation ------------------------------------------------------------------

// gradlang --latex writes a derivation as align*: formula rows (&… \\) and \intertext notes, whose words
// carry inline mathematics ($…$, \(…\)). Each row comes back as {math} or as {parts, text, small}.
function rows(latex) {
  const body = latex.replace(/^\\begin\{align\*\}\n?/, "").replace(/\n?\\end\{align\*\}\s*$/, "");
  return body.split("\n").filter((line) => line.trim()).map((line) => {
    const note = line.match(/^\\intertext\{(.*)\}$/);
    if (!note) return { math: line.replace(/^&/, "").replace(/\\\\\s*$/, "") };
    const parts = sentence(note[1].replace(/\\sloppy|\\small/g, ""));
    const text = parts.map((p) => p.text ?? p.math).join("").trim();
    return { parts, text, small: note[1].includes("\\small") };
  });
}

// LaTeX's text-mode escapes as gradlang writes them (render/latex.py's text_escape, \texttt{…}).
const TEXT_ESCAPES = [
  [/\\texttt\{([^}]*)\}/g, "$1"], [/\\textbackslash\{\}/g, "\\"], [/\\\^\{\}/g, "^"], [/\\dots\{\}/g, "…"],
  [/---/g, "—"], [/\\par\b/g, ""], [/\\([_{}%$&#])/g, "$1"],
];

function plainText(latex) {
  return TEXT_ESCAPES.reduce((text, [pattern, by]) => text.replace(pattern, by), latex);
}

// A note's words and formulas, in order: [{text}, {math}, …]. Formulas are $…$, \(…\) or \[…\];
// an escaped \$ is a dollar sign in the words.
export function sentence(latex) {
  const parts = [];
  let words = "", i = 0;
  const flush = () => { if (words) parts.push({ text: plainText(words) }); words = ""; };
  while (i < latex.length) {
    const open = latex[i] === "$" ? "$" : latex[i] === "\\" && "([".includes(latex[i + 1]) ? latex.slice(i, i + 2) : null;
    if (latex[i] === "\\" && !open) { words += latex.slice(i, i + 2); i += 2; continue; }
    if (!open) { words += latex[i]; i += 1; continue; }
    const close = { $: "$", "\\(": "\\)", "\\[": "\\]" }[open];
    let end = i + open.length;
    while (end < latex.length && !latex.startsWith(close, end)) end += latex[end] === "\\" && close === "$" ? 2 : 1;
    flush();
    const formula = latex.slice(i + open.length, end).trim();
    if (formula) parts.push({ math: formula, display: open === "\\[" });
    i = end + close.length;
  }
  flush();
  return parts;
}

function sentenceNode(parts, className) {
  const node = element("div", className);
  for (const part of parts) node.append(part.math === undefined ? part.text : math(part.math, part.display));
  return node;
}

// A row that keeps an alignment point of its own (tensor passes' `\text{let } z &= W x`) is set as
// aligned, where & means something; any other row is unchanged.
function aligned(row) {
  return /(^|[^\\])&/.test(row.replace(/\\begin\{(\w*matrix|array|cases)\}[\s\S]*?\\end\{\1\}/g, ""))
    ? `\\begin{aligned}${row}\\end{aligned}` : row;
}

function derivation(step, latex) {
  const node = element("details", "derivation");
  node.open = true;
  const summary = element("summary");
  summary.append(element("span", "rule", "derivation"), element("code", "", step.call || step.expr),
    element("span", "summary-text", step.summary ? ` — ${step.summary}` : ""));
  node.append(summary);
  const body = element("div", "steps");
  for (const row of rows(latex)) {
    if (row.math !== undefined) {
      const indent = (row.math.match(/\\qquad/g) || []).length;
      const line = math(aligned(row.math.replace(/\\qquad\s*/g, "")), false);
      line.style.marginLeft = `${indent * 1.5}em`;
      const holder = element("div", "step-math");
      holder.append(line);
      body.append(holder);
    } else if (!/^(stop |Check:)/.test(row.text) && row.text !== step.summary) { // those three are shown below
      body.append(sentenceNode(row.parts, row.small ? "step-note" : "step-summary"));
    }
  }
  node.append(body);
  if (step.stops && step.stops.length) node.append(ledger(step.stops));
  if (step.check) node.append(element("div", `check ${step.check.agrees ? "agrees" : "disagrees"}`, step.check.text));
  return node;
}

function ledger(stops) {
  const table = element("table", "ledger");
  const head = element("tr");
  for (const title of ["stop", "verdict", "what it does"]) head.append(element("th", "", title));
  table.append(head);
  for (const stop of stops) {
    const row = element("tr");
    row.append(element("td", "stop-name", stop.stop), element("td", `verdict ${stop.verdict}`, stop.verdict),
      element("td", "", stop.words));
    table.append(row);
  }
  return table;
}
