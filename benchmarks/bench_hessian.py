"""One Hessian evaluation beside jax.hessian's jitted call, in one process (issue #41).

The Hessian of softmax cross-entropy, `H = hessian(logsumexp(z) - dot(t, z), z)`
at a symbolic size (`diag(s) − s sᵀ`, evaluated by whole-array NumPy as one
n×n array), then `H at z = zd, t = td` with the arrays bound from Python, each
call through Session.run. Beside it the jitted `jax.hessian` of the same loss
in float64 and the Hessian written by hand in NumPy.

Two pairs are compared, since an n×n result that is kept costs the page faults
of a fresh 8 MiB array at n = 1024 (the previous one is freed only after the
new one is made) while one that is dropped reuses the freed memory:
`kept` — gradlang's `v = H at …` (the session keeps v) beside `r = f(z, t)`
kept in a dict, and `dropped` — gradlang's `H at …` beside `f(z, t)` not kept.
Columns are CPU milliseconds a call (process time over 300 calls, the least of
3 rounds, so the load of a shared machine does not inflate them), the ratios,
and max |gradlang − JAX|.

    PYTHONPATH=. python benchmarks/bench_hessian.py            # n = 256 and 1024
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np


def cpu_ms(function, calls: int = 300) -> float:
    """CPU milliseconds a call of `function`, over `calls` calls after one not counted."""
    function()
    start = time.process_time()
    for _ in range(calls):
        function()
    return (time.process_time() - start) / calls * 1e3


def cases(n: int) -> tuple[dict, float]:
    """The calls to time at size n, and max |gradlang − JAX|."""
    import jax
    import jax.numpy as jnp

    from gradlang.core.session import Session

    jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(n)
    z, t = rng.normal(size=n), rng.normal(size=n)
    session = Session(time_limit=None)
    session.run("n: size\nz, t: R^n\nH = hessian(logsumexp(z) - dot(t, z), z)")
    session.bind("zd", z)
    session.bind("td", t)
    f = jax.jit(jax.hessian(lambda v, w: jax.scipy.special.logsumexp(v) - w @ v))
    zj, tj = jnp.asarray(z), jnp.asarray(t)
    kept: dict = {}

    def jax_kept():
        kept["r"] = f(zj, tj).block_until_ready()

    def hand_kept():
        e = np.exp(z - z.max())
        s = e / e.sum()
        h = np.outer(-s, s)
        h[np.arange(n), np.arange(n)] += s
        kept["h"] = h

    calls = {"gradlang kept": lambda: session.run("v = H at z = zd, t = td"),
             "JAX kept": jax_kept, "hand NumPy kept": hand_kept,
             "gradlang dropped": lambda: session.run("H at z = zd, t = td"),
             "JAX dropped": lambda: f(zj, tj).block_until_ready()}
    value = np.asarray(session.run("H at z = zd, t = td")[-1].value, dtype=float)
    return calls, float(np.max(np.abs(value - np.asarray(f(zj, tj)))))


def row(n: int) -> list:
    calls, diff = cases(n)
    best = {name: min(cpu_ms(call) for _ in range(3)) for name, call in calls.items()}
    return [str(n), *(f"{best[k]:.3f}" for k in calls), f"{best['gradlang kept'] / best['JAX kept']:.2f}",
            f"{best['gradlang dropped'] / best['JAX dropped']:.2f}", f"{diff:.1e}"]


HEADER = ["n", "gradlang kept ms", "JAX kept ms", "hand NumPy kept ms", "gradlang dropped ms", "JAX dropped ms",
          "kept ratio", "dropped ratio", "max diff vs JAX"]


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [256, 1024]
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    print("| " + " | ".join(HEADER) + " |")
    print("|" + "---|" * len(HEADER), flush=True)
    for n in sizes:
        print("| " + " | ".join(row(n)) + " |", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
