"""Layer norm's gradient at symbolic size, whole processes, beside JAX and hand NumPy (issue #41).

The program (`n: size`, so the gradient is derived once for every n, then
evaluated by whole-array NumPy on the .npy inputs):

    n: size
    x, g, beta, t: R^n
    mu = mean(x)
    v = mean((x - mu)^2)
    xhat = (x - mu) / sqrt(v + 1e-5)
    L = HALF * sum((g*xhat + beta - t)^2)
    grad(L, x) at x = load(…), g = load(…), beta = load(…), t = load(…)

run with HALF spelled `0.5` and `1/2` (before issue #41 the first failed the
60 s statement limit in the tensor rewrites; the second took 0.03 s), each as
`python -m gradlang --plain FILE`. Beside them: a whole Python process that
imports JAX, loads the same files, jits `jax.grad` of the same loss in float64
and runs it once; and a whole Python process that loads the files and runs the
gradient written by hand in NumPy (the backward pass of layer norm). Columns
are CPU seconds of the child process (user + system, start-up included; the
minimum of the repeats, the commands interleaved, since the machine's two cores
are shared), the ratios of gradlang's CPU over JAX's and over hand NumPy's, and
the largest difference of gradlang's numbers (Session.run, in process) from
hand NumPy's and from JAX's, over the largest magnitude.

    python benchmarks/bench_layernorm.py              # n = 1024 and 4096, 3 repeats
    python benchmarks/bench_layernorm.py --repeats 5 1024
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

SIZES = (1024, 4096)
NAMES = ("x", "g", "beta", "t")
PROGRAM = """n: size
x, g, beta, t: R^n
mu = mean(x)
v = mean((x - mu)^2)
xhat = (x - mu) / sqrt(v + 1e-5)
L = {half} * sum((g*xhat + beta - t)^2)
grad(L, x) at {given}
"""

JAX = """
import sys, numpy as np, jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
folder, out = sys.argv[1], sys.argv[2]
x, g, beta, t = (jnp.asarray(np.load(f"{folder}/{k}.npy")) for k in ("x", "g", "beta", "t"))
def loss(x, g, beta, t):
    xhat = (x - jnp.mean(x)) / jnp.sqrt(jnp.mean((x - jnp.mean(x)) ** 2) + 1e-5)
    return 0.5 * jnp.sum((g * xhat + beta - t) ** 2)
np.save(out, np.asarray(jax.jit(jax.grad(loss))(x, g, beta, t)))
"""

HAND = """
import sys, numpy as np
folder, out = sys.argv[1], sys.argv[2]
x, g, beta, t = (np.load(f"{folder}/{k}.npy") for k in ("x", "g", "beta", "t"))
u = x - x.mean()
s = np.sqrt((u * u).mean() + 1e-5)
xhat = u / s
d = g * (g * xhat + beta - t)
np.save(out, (d - d.mean() - xhat * (d * xhat).mean()) / s)
"""


def _cpu(command: list) -> float:
    """CPU seconds (user + system) of one whole child process; its output is not read."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{command[:4]} failed: {done.stderr[-2000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _program(folder: Path, half: str) -> str:
    given = ", ".join(f'{name} = load("{folder}/{name}.npy")' for name in NAMES)
    return PROGRAM.format(half=half, given=given)


def _gradlang_value(source: str) -> np.ndarray:
    """gradlang's gradient, by the same program run in this process (Session.run), as an array."""
    from gradlang.core.session import Session

    return np.asarray(Session(time_limit=None).run(source)[-1].value, dtype=float)


def _difference(value: np.ndarray, reference: np.ndarray) -> float:
    return float(np.max(np.abs(value - reference)) / np.max(np.abs(reference)))


def row(size: int, repeats: int) -> list[str]:
    """One size: the commands interleaved `repeats` times, the minimum CPU of each."""
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        rng = np.random.default_rng(size)
        for array in NAMES:
            np.save(folder / f"{array}.npy", rng.normal(size=size))
        commands = {}
        for label, half in (("0.5", "0.5"), ("1/2", "1/2")):
            path = folder / f"layernorm_{label.replace('/', '_')}.grad"
            path.write_text(_program(folder, half))
            commands[label] = [sys.executable, "-m", "gradlang", "--plain", str(path)]
        commands["JAX"] = [sys.executable, "-c", JAX, str(folder), str(folder / "jax.npy")]
        commands["NumPy"] = [sys.executable, "-c", HAND, str(folder), str(folder / "hand.npy")]
        times: dict = {label: [] for label in commands}
        for _ in range(repeats):
            for label, command in commands.items():
                times[label].append(_cpu(command))
        best = {label: min(seconds) for label, seconds in times.items()}
        value = _gradlang_value(_program(folder, "0.5"))
        hand, jax_value = np.load(folder / "hand.npy"), np.load(folder / "jax.npy")
    return [str(size), *(f"{best[k]:.2f}" for k in commands), f"{best['0.5'] / best['JAX']:.2f}",
            f"{best['1/2'] / best['JAX']:.2f}", f"{best['0.5'] / best['NumPy']:.2f}",
            f"{_difference(value, hand):.1e}", f"{_difference(value, jax_value):.1e}"]


HEADER = ["n", "gradlang 0.5 s", "gradlang 1/2 s", "JAX s", "NumPy s", "0.5/JAX", "1/2/JAX", "0.5/NumPy",
          "diff vs NumPy", "diff vs JAX"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=list(SIZES))
    parser.add_argument("--repeats", type=int, default=3)
    options = parser.parse_args()
    print("| " + " | ".join(HEADER) + " |")
    print("|" + "---|" * len(HEADER))
    for size in options.sizes:
        print("| " + " | ".join(row(size, options.repeats)) + " |", flush=True)


if __name__ == "__main__":
    main()
