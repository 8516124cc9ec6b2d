#!/usr/bin/env bash
# Builds the playground page into web/dist/ (docs/web.md): every asset it loads,
# so any static server can serve it and nothing comes from a CDN at run time.
#   npm packages (package-lock.json): Pyodide, CodeMirror, KaTeX, esbuild
#   wheels: gradlang built from this repository, SymPy, mpmath and lark from PyPI
#   lessons: the gallery, examples/*.grad
# Needs node/npm and python3 (with pip). Run from anywhere: bash web/build/build.sh
set -euo pipefail
web="$(cd "$(dirname "$0")/.." && pwd)"
root="$(dirname "$web")"
dist="$web/dist"
# a Python with gradlang installed (the README's venv): the highlighter's words come from its lexer
python="${PYTHON:-$root/.venv/bin/python}"
case "$python" in */*) python="$(cd "$(dirname "$python")" && pwd)/$(basename "$python")" ;; esac  # before the cd below

cd "$web"
npm ci --no-audit --no-fund
rm -rf "$dist" && mkdir -p "$dist/pyodide" "$dist/katex" "$dist/wheels"

echo "== Pyodide (the npm package: interpreter and standard library)"
for f in pyodide.mjs pyodide.asm.mjs pyodide.asm.wasm python_stdlib.zip pyodide-lock.json; do
  cp "node_modules/pyodide/$f" "$dist/pyodide/"
done

echo "== KaTeX"
cp node_modules/katex/dist/katex.min.css "$dist/katex/"
cp -r node_modules/katex/dist/fonts "$dist/katex/"

echo "== wheels: gradlang from this repository, its pure-Python dependencies from PyPI"
"$python" -m pip wheel --quiet --no-deps -w "$dist/wheels" "$root"
"$python" -m pip download --quiet --no-deps --only-binary=:all: -d "$dist/wheels" \
  "sympy==$("$python" "$web/build/pinned.py" sympy)" "mpmath==$("$python" "$web/build/pinned.py" mpmath)" \
  "lark==$("$python" "$web/build/pinned.py" lark)"

echo "== lessons and the page"
"$python" "$web/build/lessons.py" "$root/examples" "$dist/wheels" > "$dist/lessons.json"
node_modules/.bin/esbuild src/main.js --bundle --format=esm --minify --outfile="$dist/app.js" --log-level=warning
cp src/index.html src/style.css src/worker.js src/runner.py "$dist/"
echo "== built $dist ($(du -sh "$dist" | cut -f1)); serve it with: python3 -m http.server -d web/dist"
