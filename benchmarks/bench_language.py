"""Whole gradlang programs, as users run them, beside SymPy by hand and JAX (issue 13).

For each family (benchmarks/programs.py) and size: the statements that build
the function, the gradient statement and the `at` statement timed one by one
through `Session.run`; the whole program through the `gradlang` command in a
subprocess; the same gradient written in SymPy by hand (sympy.diff per
parameter, then subs/evalf) in a subprocess with a time-out; and
jax.jit(jax.grad(f)) (jax.hessian for the Hessian) in float64: its first call
(trace and compile) and a later call. gradlang's numbers are checked against
JAX's. Times are CPU seconds (user + system; JAX's are wall seconds, it runs
threads), the minimum of the repeats: the machine is shared, and time spent
waiting for a core is not the program's. Then a
log-log slope of the gradient statement's time against the DAG size of its
result, per family, start-up beside `python -c "import sympy"`, the
10^6-point compiled evaluation of bench_eval.py through `Session.eval`, and
each target of issue 13 with its measured number, met or not met. Then the
MLP at widths 16 to 4096 with .npy inputs beside a whole JAX process and
hand-written NumPy, and the targets of issue 26 (bench_wide.py).

    python benchmarks/bench_language.py [--quick] [--repeats N] [--timeout S] [--family TEXT] [--no-sympy] [--no-eval] [--widths 16,256,1024,4096]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import sympy as sp

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

import programs  # noqa: E402
from gradlang.derive.dag import dag_size  # noqa: E402
from gradlang.core.session import Session  # noqa: E402
from gradlang.expr.values import elements  # noqa: E402


def session_times(program) -> dict:
    """Seconds of the build statements, the gradient statement and the `at` statement, in one Session."""
    sp.core.cache.clear_cache()
    session = Session(time_limit=LIMIT)
    session.run("\n".join(program.declare))
    times = {}
    start = CLOCK()
    session.run("\n".join(program.build))
    times["build"] = CLOCK() - start
    start = CLOCK()
    session.run(program.grad)
    times["grad"] = CLOCK() - start
    start = CLOCK()
    result = session.run(program.at)[0]
    times["at"] = CLOCK() - start
    times["dag"] = dag_size(elements(session.env["g"]))
    times["value"] = np.array([float(v) for v in elements(result.value)])
    return times


CLOCK = time.process_time  # CPU seconds: the machine is shared, and waiting for a core is not gradlang's time
LIMIT = 300.0  # seconds a statement may take: a LimitError stops the benchmark, as it stops the user


def best(function, repeats: int):
    """The run with the smallest total time among `repeats` runs."""
    runs = [function() for _ in range(repeats)]
    return min(runs, key=lambda r: r["build"] + r["grad"] + r["at"])


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _as_installed() -> dict:
    """The environment a user's command runs in: Python may cache bytecode.

    `pip install` compiles every module to bytecode, so an installed gradlang
    never compiles its sources at start-up; a shell with
    PYTHONDONTWRITEBYTECODE set (as some development set-ups have) would make
    every run compile about sixty modules and add about 50 ms that no user pays.
    """
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def command_seconds(command: list[str], repeats: int, timeout: float | None = None) -> float | None:
    """Minimum CPU time (user + system) of a whole command, start-up included; None if it timed out.

    One run first, not counted, so the bytecode is cached as after an install.
    """
    times = []
    for attempt in range(repeats + 1):
        start = _children_cpu()
        try:
            subprocess.run(command, check=True, capture_output=True, timeout=timeout, env=_as_installed())
        except subprocess.TimeoutExpired:
            return None
        if attempt:
            times.append(_children_cpu() - start)
    return min(times)


def cli_seconds(program, repeats: int) -> float:
    with tempfile.NamedTemporaryFile("w", suffix=".grad", delete=False) as handle:
        handle.write(program.source())
    return command_seconds([sys.executable, "-m", "gradlang", "--plain", handle.name], repeats)


SYMPY_BY_HAND = {
    "2-layer": (
        "x0, W, b, w2 = programs.mlp_point({n})\n"
        "Ws = sp.Matrix({n}, {n}, lambda i, j: sp.Symbol(f'W[{{i}},{{j}}]'))\n"
        "bs = sp.symbols('b:{n}'); vs = sp.symbols('v:{n}'); c = sp.Symbol('c')\n"
        "h = [sp.tanh(sum(Ws[i, j] * float(x0[j]) for j in range({n})) + bs[i]) for i in range({n})]\n"
        "loss = (sp.tanh(sum(v * hi for v, hi in zip(vs, h)) + c) - 0.3) ** 2\n"
        "point = dict(zip(list(Ws), W.ravel())); point.update(zip(bs, b)); point.update(zip(vs, w2)); point[c] = 0.1\n"
        "g = [sp.diff(loss, w).subs(point).evalf() for w in Ws]\n"
    ),
    "softmax": (
        "z = sp.symbols('z:{n}'); m = sp.Max(*z)\n"
        "loss = -sp.log(sp.exp(z[0] - m) / sum(sp.exp(zi - m) for zi in z))\n"
        "point = dict(zip(z, programs.softmax_point({n})))\n"
        "g = [sp.diff(loss, zi).subs(point).evalf() for zi in z]\n"
    ),
    "iterated": (
        "x, y = sp.symbols('x y'); a = x\n"
        "for _ in range({n}): a = a**2 + a*y\n"
        "g = [sp.diff(a, v).subs({{x: 0.1, y: 0.2}}).evalf() for v in (x, y)]\n"
    ),
    "hessian": (
        "x = sp.symbols('x:{n}')\n"
        "f = sp.log(sum(sp.exp(v) for v in x)) + sp.tanh(sum(v * v for v in x))\n"
        "point = dict(zip(x, programs.hessian_point({n})))\n"
        "g = [sp.diff(f, u, v).subs(point).evalf() for u in x for v in x]\n"
    ),
}


def sympy_seconds(program, timeout: float) -> float | None:
    """The same derivative in SymPy by hand (diff per component, subs, evalf), in a fresh process."""
    body = next(code for key, code in SYMPY_BY_HAND.items() if program.family.startswith(key))
    code = (f"import sys, time; sys.path[:0] = [{str(HERE)!r}]\nimport sympy as sp, programs\n"
            f"start = time.process_time()\n{body.format(n=program.size)}print(time.process_time() - start)\n")
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)
        return float(done.stdout)
    except (subprocess.TimeoutExpired, ValueError):
        return None


def jax_times(program) -> tuple[float, float, np.ndarray]:
    """(first call s, later call s, derivative) of jax.jit(jax.grad(f)) or jax.jit(jax.hessian(f))."""
    import jax

    f, point = programs.jax_case(program)
    derivative = jax.hessian(f) if program.grad.startswith("g = hessian") else jax.grad(f)
    compiled = jax.jit(derivative)
    start = time.perf_counter()
    compiled(point).block_until_ready()
    first = time.perf_counter() - start
    later = []
    for _ in range(5):
        start = time.perf_counter()
        value = compiled(point).block_until_ready()
        later.append(time.perf_counter() - start)
    return first, min(later), np.asarray(value).ravel()


def slope(sizes, seconds) -> float:
    """Least-squares slope of log(seconds) against log(size)."""
    if len(sizes) < 2:
        return float("nan")
    return float(np.polyfit(np.log(sizes), np.log(seconds), 1)[0])


def shown(seconds: float | None, timeout: float) -> str:
    return f"> {timeout:.0f}" if seconds is None else f"{seconds:.3f}"


HEADER = ["family", "size", "build s", "grad s", "grad/build", "at s", "Session.run s", "CLI s", "CLI/import sympy",
          "SymPy by hand s", "JAX first call s", "JAX later call s", "max rel. diff vs JAX"]


def row(program, args, sympy_import: float) -> tuple[list[str], dict]:
    times = best(lambda: session_times(program), args.repeats)
    cli = cli_seconds(program, args.repeats)
    by_hand = sympy_seconds(program, args.timeout) if not args.no_sympy else None
    first, later, reference = jax_times(program)
    error = np.max(np.abs(times["value"] - reference) / np.maximum(np.abs(reference), 1e-300))
    total = times["build"] + times["grad"] + times["at"]
    return [
        program.family, str(program.size), f"{times['build']:.3f}", f"{times['grad']:.3f}",
        f"{times['grad'] / times['build']:.2f}", f"{times['at']:.3f}", f"{total:.3f}", f"{cli:.3f}",
        f"{cli / sympy_import:.1f}", "-" if args.no_sympy else shown(by_hand, args.timeout),
        f"{first:.3f}", f"{later:.5f}", f"{error:.1e}",
    ], times


def eval_ratio(points: int = 1_000_000, repeats: int = 3) -> tuple[float, float]:
    """(gradlang s, NumPy s): Session.eval of the compiled 10^6-point evaluation beside the hand loop (bench_eval.py)."""
    import bench_eval

    session = Session(time_limit=None)
    session.run(bench_eval.program(8))
    source = f"diff(f(t), t) at t = linspace(-3, 3, {points})"
    _, ours, value = bench_eval.timed(lambda: session.eval(source), repeats)
    t = np.linspace(-3, 3, points)
    _, hand, expected = bench_eval.timed(lambda: bench_eval.by_hand(t, 8), repeats)
    np.testing.assert_allclose(np.asarray(value, dtype=float), expected, rtol=1e-12, atol=1e-12)
    return min(ours), min(hand)


def verdict(ok: bool) -> str:
    return "**met**" if ok else "**not met**"


def print_targets(rows: list, slopes: dict, sympy_import: float, startup: float, evaluation) -> None:
    """The targets of issue 13, each with its measured number."""
    print("\nTargets of issue 13 (measured above):")
    for size, limit in ((16, 3.0), (64, 30.0)):
        cli = [r["CLI"] for r in rows if r["family"].startswith("2-layer") and r["size"] == size]
        if cli:
            ratio = cli[0] / sympy_import
            print(f"- MLP width {size} in the CLI within {limit:.0f}x `import sympy`: {ratio:.1f}x, {verdict(ratio <= limit)}")
    for family in dict.fromkeys(r["family"] for r in rows):
        worst = max(r["grad"] / r["build"] for r in rows if r["family"] == family)
        fitted = slopes.get(family, float("nan"))
        print(f"- {family}: grad/build at most {worst:.2f} (<= 5: {verdict(worst <= 5)}); "
              f"slope {fitted:.2f} (<= 1.2: {verdict(fitted <= 1.2) if fitted == fitted else 'one size only'})")
    if evaluation:
        ours, hand = evaluation
        print(f"- Session.eval of the 10^6-point evaluation {ours:.3f} s, NumPy by hand {hand:.3f} s (wall, best of 3): "
              f"{ours / hand:.2f}x (<= 1.5: {verdict(ours / hand <= 1.5)})")
    ratio = startup / sympy_import
    print(f"- start-up {startup:.2f} s, `import sympy` {sympy_import:.2f} s: {ratio:.2f}x (<= 1.5: {verdict(ratio <= 1.5)})")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds for SymPy by hand")
    parser.add_argument("--family", default="", help="only families whose name contains this")
    parser.add_argument("--no-sympy", action="store_true", help="skip SymPy by hand")
    parser.add_argument("--no-eval", action="store_true", help="skip the 10^6-point evaluation")
    parser.add_argument("--widths", default="16,256,1024,4096", help="widths of the MLP with .npy inputs ('' for none)")
    args = parser.parse_args(argv)
    import jax
    jax.config.update("jax_enable_x64", True)
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.1f} at the start; `bench_language.py {' '.join(argv or sys.argv[1:])}`\n")
    sympy_import = command_seconds([sys.executable, "-c", "import sympy"], 5)
    print("| " + " | ".join(HEADER) + " |")
    print("|" + "---|" * len(HEADER))
    growth: dict = {}
    measured: list = []
    for program in programs.all_programs(args.quick):
        if args.family not in program.family:
            continue
        cells, times = row(program, args, sympy_import)
        growth.setdefault(program.family, []).append((times["dag"], times["grad"]))
        measured.append({"family": program.family, "size": program.size, "CLI": float(cells[7]), **times})
        print("| " + " | ".join(cells) + " |", flush=True)
    slopes = {family: slope(*zip(*points)) for family, points in growth.items()}
    print("\n| family | log-log slope of grad s against the gradient's DAG size |\n|---|---|")
    for family, fitted in slopes.items():
        print(f"| {family} | {fitted:.2f} |")
    startup = command_seconds([sys.executable, "-m", "gradlang", "--plain", "-e", "1 + 1"], 5)
    print(f"\n| start-up (min of 5) | seconds |\n|---|---|\n| `gradlang --plain -e '1 + 1'` | {startup:.2f} |")
    print(f"| `python -c 'import sympy'` | {sympy_import:.2f} |\n| ratio | {startup / sympy_import:.2f} |")
    evaluation = None if args.no_eval else eval_ratio()
    print_targets(measured, slopes, sympy_import, startup, evaluation)
    widths = tuple(int(w) for w in args.widths.split(",") if w)
    if widths:
        import bench_wide

        bench_wide.print_targets(bench_wide.table(widths, args.repeats), startup / sympy_import)


if __name__ == "__main__":
    main()
