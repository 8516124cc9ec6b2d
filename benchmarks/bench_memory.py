"""Peak memory over the size of the arrays (issue #41): gradlang beside JAX and hand-written NumPy.

    PYTHONPATH=. python benchmarks/bench_memory.py [--widths 1024,4096,8192] [--hessian 256,1024]

Each measurement is one child process that reads its inputs from .npy files,
computes one derivative's numbers once and prints its own peak RSS
(ru_maxrss). `arrays MB` is what the computation must hold: the inputs and
the result. `extra MB` is the peak minus the peak of the same child at a
tiny size (the interpreter, the libraries, compiled code), and `ratio` =
extra MB / arrays MB: 1 would be only the arrays. Cases:

- the MLP gradient by W1 (programs.mlp_files) at each width: gradlang's
  Session with the four inputs loaded by its own `at`, JAX's jitted
  jax.grad (programs.JAX_MLP), and the backward pass by hand
  (programs.mlp_by_hand);
- the Hessian of softmax cross-entropy logsumexp(z) - dot(t, z) by z at a
  symbolic size: gradlang, jax.jit(jax.hessian(...)), and diag(s) - s sᵀ by
  hand (one n×n array).

A width whose estimated need (about 6 copies of W1 for the three children
in turn, one at a time) would not fit in the memory `free` reports as
available is skipped with a note: other people's work shares the machine.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

import programs

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
# A child's ru_maxrss starts at its parent's RSS when forked (this process holds the arrays it wrote):
# each child is started by a small runner, and the runner reports its children's peak.
RUNNER = ("import resource, subprocess, sys\n"
          "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)\n"
          "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")

GRADLANG_MLP = """
import sys
from gradlang.core.session import Session
folder, n = sys.argv[1], int(sys.argv[2])
given = ", ".join(f'{k} = load("{folder}/{k}_{n}.npy")' for k in ("W1", "b1", "w2", "x0"))
Session(time_limit=None, max_memory=64 * 1024 ** 3).run(
    f"W1: R^({n},{n}); b1: R^{n}; w2: R^{n}; x0: R^{n}; c: R\\n"
    "loss = (tanh(dot(w2, tanh(W1 @ x0 + b1) ) + c) - 0.3)^2\\n"
    f"g = grad(loss, W1)\\nv = g at {given}, c = 0.1\\n")
"""
HAND_MLP = """
import sys, numpy as np
sys.path.insert(0, sys.argv[3])
import programs
folder, n = sys.argv[1], int(sys.argv[2])
x0, W1, b1, w2 = (np.load(f"{folder}/{k}_{n}.npy") for k in ("x0", "W1", "b1", "w2"))
g = programs.mlp_by_hand(x0, W1, b1, w2)
"""
JAX_MLP = """
import sys, numpy as np, jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
folder, n = sys.argv[1], int(sys.argv[2])
x0, W1, b1, w2 = (jnp.asarray(np.load(f"{folder}/{k}_{n}.npy")) for k in ("x0", "W1", "b1", "w2"))
def loss(W):
    return (jnp.tanh(w2 @ jnp.tanh(W @ x0 + b1) + 0.1) - 0.3) ** 2
g = np.asarray(jax.jit(jax.grad(loss))(W1))
"""
GRADLANG_HESSIAN = """
import sys
from gradlang.core.session import Session
folder, n = sys.argv[1], int(sys.argv[2])
Session(time_limit=None, max_memory=64 * 1024 ** 3).run(
    "n: size\\nz, t: R^n\\nH = hessian(logsumexp(z) - dot(t, z), z)\\n"
    f'v = H at z = load("{folder}/z_{n}.npy"), t = load("{folder}/t_{n}.npy")\\n')
"""
HAND_HESSIAN = """
import sys, numpy as np
folder, n = sys.argv[1], int(sys.argv[2])
z, t = np.load(f"{folder}/z_{n}.npy"), np.load(f"{folder}/t_{n}.npy")
s = np.exp(z - z.max()); s /= s.sum()
H = np.outer(-s, s); H[np.diag_indices(n)] += s
"""
JAX_HESSIAN = """
import sys, numpy as np, jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
folder, n = sys.argv[1], int(sys.argv[2])
z, t = (jnp.asarray(np.load(f"{folder}/{k}_{n}.npy")) for k in ("z", "t"))
H = np.asarray(jax.jit(jax.hessian(lambda v: jax.scipy.special.logsumexp(v) - t @ v))(z))
"""
MLP = {"gradlang": GRADLANG_MLP, "JAX": JAX_MLP, "hand NumPy": HAND_MLP}
HESSIAN = {"gradlang": GRADLANG_HESSIAN, "JAX": JAX_HESSIAN, "hand NumPy": HAND_HESSIAN}


def peak_mb(script: str, folder: str, n: int) -> float:
    """Peak RSS in MB of one child process running `script` at size n."""
    env = {**os.environ, "PYTHONPATH": REPO, "JAX_PLATFORMS": "cpu"}
    done = subprocess.run([sys.executable, "-c", RUNNER, sys.executable, "-c", script, folder, str(n), HERE],
                          capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"a child failed at {n}: {done.stderr[-2000:]}")
    return int(done.stdout.split()[-1]) / 1024


def available_mb() -> float:
    """MemAvailable of /proc/meminfo, as `free -m` shows it."""
    with open("/proc/meminfo") as info:
        for line in info:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 1024
    return 0.0


def write_mlp(folder: str, n: int) -> float:
    """The MLP's inputs as .npy files; MB of the arrays (inputs and the gradient)."""
    programs.mlp_files(n, folder)
    return 8 * (2 * n * n + 3 * n) / 1e6


def write_hessian(folder: str, n: int) -> float:
    rng = np.random.default_rng(n)
    np.save(f"{folder}/z_{n}.npy", rng.normal(size=n))
    np.save(f"{folder}/t_{n}.npy", rng.normal(size=n))
    return 8 * (n * n + 2 * n) / 1e6


def rows(case: str, scripts: dict, write, sizes: list, folder: str, base_size: int) -> list:
    write(folder, base_size)
    base = {name: peak_mb(script, folder, base_size) for name, script in scripts.items()}
    table = []
    for n in sizes:
        arrays = write(folder, n)
        need = 6 * arrays + 1500
        if available_mb() < need:
            table.append(f"| {case} | {n} | {arrays:.1f} | skipped: {available_mb():.0f} MB available, "
                         f"about {need:.0f} MB needed | | | | | |")
            continue
        peaks = {name: peak_mb(script, folder, n) for name, script in scripts.items()}
        cells = [f"{peaks[k]:.0f} | {(peaks[k] - base[k]) / arrays:.2f}" for k in scripts]
        table.append(f"| {case} | {n} | {arrays:.1f} | " + " | ".join(cells) + " |")
        print(table[-1], flush=True)
    return table


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--widths", default="1024,4096,8192")
    parser.add_argument("--hessian", default="256,1024")
    args = parser.parse_args()
    header = ["| case | n | arrays MB | gradlang MB | ratio | JAX MB | ratio | hand NumPy MB | ratio |",
              "|---|---|---|---|---|---|---|---|---|"]
    print("\n".join(header), flush=True)
    with tempfile.TemporaryDirectory() as folder:
        table = rows("MLP grad(loss, W1)", MLP, write_mlp, [int(w) for w in args.widths.split(",") if w], folder, 16)
        table += rows("hessian of cross-entropy", HESSIAN, write_hessian,
                      [int(w) for w in args.hessian.split(",") if w], folder, 16)
    print("\n".join(header + table))


if __name__ == "__main__":
    main()
