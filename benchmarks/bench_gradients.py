"""Benchmark of the DAG derivative engine on the issue-6 families.

For each family and size: the time of the full gradient (gradlang.dag), the
gradient's DAG size over the function's, the time of the tree path
(gradlang.derive.grad, i.e. sympy.diff) in a subprocess with a time-out, and
compiled evaluation of the gradient on many points: lambdify of the DAG result
(common subexpressions from the DAG) against hand-written NumPy and
jax.jit(jax.vmap(jax.grad(f))) in float64. Medians of 3 runs.

    python benchmarks/bench_gradients.py [--quick] [--timeout SECONDS] [--points N]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import sympy as sp

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

import families  # noqa: E402
import hand  # noqa: E402
from gradlang.derive import dag
from gradlang.expr.cse import lambdify_cse
from gradlang.expr.numeric import HELPERS, _Printer

MAKERS = {"nested sin": "nested_sin", "prod sin(x_i)": "product_of_sines",
          "softmax CE, sg(max)": "softmax_cross_entropy", "iterated map": "iterated_map"}


def family_call(family) -> str:
    """The constructor call that rebuilds a family in the subprocess."""
    if family.name in MAKERS:
        return f"{MAKERS[family.name]}({family.size})"
    layers = int(family.name[0])
    inputs = len(family.data) - 1
    hidden = sum(1 for v in family.variables if str(v).startswith("v["))
    return f"mlp({layers}, {inputs}, {hidden})"


def tree_path_time(family, timeout: float) -> str:
    """Seconds for derive.grad in a fresh process, or '> timeout'."""
    code = (
        "import sys, time; sys.path[:0] = [%r, %r]\n"
        "import families, sympy as sp\nfrom gradlang import derive\n"
        "f = families.%s\nt = time.perf_counter()\n"
        "derive.grad(f.expr, sp.ImmutableDenseNDimArray(list(f.variables)))\n"
        "print(time.perf_counter() - t)\n"
    ) % (str(HERE), str(HERE.parent), family_call(family))
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)
        return f"{float(out.stdout):.2f}"
    except subprocess.TimeoutExpired:
        return f"> {timeout:.0f}"
    except ValueError:
        return "error"


def median_time(function, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def point_count(family, budget: int) -> int:
    """Points so that inputs and outputs together stay near `budget` floats."""
    width = len(family.variables) + len(family.data) + len(family.variables)
    return int(min(budget // 20, budget // width))


def sample(family, n: int, rng):
    """Values of the variables (fixed for an MLP) and the data, as the compiled functions take them."""
    if family.data:
        values = list(rng.uniform(-0.5, 0.5, len(family.variables)))
        data = [rng.uniform(-1, 1, n) for _ in family.data]
        return values, data
    return [rng.uniform(-0.5, 0.5, n) for _ in family.variables], []


def compiled_times(family, gradient, n: int, use_jax: bool) -> tuple[float, float, float | None]:
    rng = np.random.default_rng(0)
    values, data = sample(family, n, rng)
    ours = sp.lambdify(list(family.variables) + list(family.data), gradient,
                       modules=[HELPERS, "numpy"], printer=_Printer, cse=lambdify_cse,
                       use_imps=False)  # _imp_namespace walks the tree: exponential on a DAG
    ours_time = median_time(lambda: ours(*values, *data))
    handwritten = hand.numpy_gradient(family)
    hand_time = median_time(lambda: handwritten(values, data))
    check = np.broadcast_to(np.asarray(ours(*values, *data)[-1]), (n,))
    reference = np.asarray(handwritten(values, data)[-1])
    assert np.allclose(check, reference, rtol=1e-6, atol=1e-9), family.name
    return ours_time, hand_time, jax_time(family, values, data) if use_jax else None


def jax_time(family, values, data) -> float:
    import jax
    import jax.numpy as jnp

    f = hand.jax_function(family)
    if family.data:
        g = jax.jit(jax.vmap(jax.grad(f), in_axes=(None, 0)))
        args = (jnp.asarray(values), jnp.stack([jnp.asarray(d) for d in data], axis=1))
    else:
        g = jax.jit(jax.vmap(jax.grad(f), in_axes=(0, None)))
        args = (jnp.stack([jnp.asarray(v) for v in values], axis=1), jnp.zeros(1))
    g(*args).block_until_ready()
    return median_time(lambda: g(*args).block_until_ready())


def row(family, timeout: float, budget: int, use_jax: bool) -> list[str]:
    sp.core.cache.clear_cache()
    start = time.perf_counter()
    gradient = dag.gradient_list(family.expr, family.variables)
    grad_time = time.perf_counter() - start
    ratio = dag.dag_size(gradient) / dag.dag_size(family.expr)
    n = point_count(family, budget)
    ours, handwritten, jax_t = compiled_times(family, gradient, n, use_jax)
    return [
        family.name, str(family.size), f"{grad_time:.3f}", f"{dag.dag_size(family.expr)}",
        f"{ratio:.2f}", tree_path_time(family, timeout), f"{n:.0e}", f"{ours:.3f}", f"{handwritten:.3f}",
        f"{ours / handwritten:.2f}", "-" if jax_t is None else f"{jax_t:.3f}",
    ]


HEADER = ["family", "size", "grad s", "f DAG", "grad/f DAG", "tree path s", "points",
          "ours s", "NumPy s", "ours/NumPy", "JAX s"]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only")
    parser.add_argument("--timeout", type=float, default=None, help="seconds for the tree path")
    parser.add_argument("--points", type=int, default=20_000_000, help="budget of floats per evaluation")
    parser.add_argument("--no-jax", action="store_true")
    parser.add_argument("--family", default="", help="only families whose name contains this")
    args = parser.parse_args(argv)
    timeout = args.timeout or (5.0 if args.quick else 15.0)
    try:
        import jax
        jax.config.update("jax_enable_x64", True)
        use_jax = not args.no_jax
    except ImportError:
        use_jax = False
    budget = args.points // (10 if args.quick else 1)
    print("| " + " | ".join(HEADER) + " |")
    print("|" + "---|" * len(HEADER))
    for family in families.all_families(quick=args.quick):
        if args.family not in family.name:
            continue
        print("| " + " | ".join(row(family, timeout, budget, use_jax)) + " |", flush=True)
    print_startup()


def _command_seconds(command: list[str], repeats: int = 5) -> float:
    """Median wall time of a whole command, start-up included."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def print_startup() -> None:
    """gradlang's start-up beside SymPy's import, the floor any SymPy tool pays."""
    ours = _command_seconds([sys.executable, "-m", "gradlang", "--plain", "-e", "1 + 1"])
    sympy = _command_seconds([sys.executable, "-c", "import sympy"])
    print()
    print("| start-up | seconds |")
    print("|---|---|")
    print(f"| `gradlang --plain -e '1 + 1'` | {ours:.2f} |")
    print(f"| `python -c 'import sympy'` | {sympy:.2f} |")
    print(f"| ratio | {ours / sympy:.2f} |")


if __name__ == "__main__":
    main()
