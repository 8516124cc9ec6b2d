"""Whole programs for every model beside whole JAX and hand-NumPy processes (issue #41).

Each model is a gradlang program that reads its arrays from .npy files and
evaluates one gradient (by a list of parameters where the model has several),
a Python script that imports JAX, loads the same files, jits `jax.grad` of the
same loss in float64 and runs it once, and a script with the backward pass
written by hand in NumPy. The models:

- `mlp3`: a 3-layer tanh MLP, `grad(L, [W1, b1, W2, b2, W3, b3])`, width 1024;
- `classifier`: a batched softmax classifier (512×784 inputs, 10 classes),
  `grad(L, [W, bias])` of the mean cross-entropy;
- `attention`: single-head attention with a stopped key,
  `softmax(Q @ transpose(sg(K)) / sqrt(e), axis=-1) @ V`, 256×64, by [Q, K, V];
- `layernorm`: layer norm over 4096 at a symbolic size, `grad(L, x)`;
- `mlp1-N`: the one-hidden-layer MLP of programs.mlp_files, `grad(loss, W1)`,
  at widths 1024, 4096 and 8192 (512 MB of weights).

Columns are CPU seconds (user + system, start-up included) of each whole child
process, the minimum of the repeats, the three commands interleaved (the
machine's two cores are shared); the ratios of gradlang's over JAX's and over
hand NumPy's; and the largest difference of gradlang's numbers (the same
program through Session.run in this process) from JAX's, over the largest
magnitude. The load average is printed before and after.

    PYTHONPATH=. python benchmarks/bench_models.py                    # every model, 3 repeats
    PYTHONPATH=. python benchmarks/bench_models.py --repeats 5 layernorm attention
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO = str(Path(__file__).resolve().parent.parent)


@dataclass(frozen=True)
class Model:
    """One model: its arrays (name -> shape), the gradlang statements before `g at …`, the names the
    gradient is taken by, and the loss for JAX and the gradient for NumPy as Python source (bodies that
    read the dict `A` of arrays)."""

    name: str
    shapes: dict
    program: str
    wrt: tuple
    jax_loss: str
    hand: str
    scale: dict


MLP3 = Model(
    "mlp3", {"W1": (1024, 1024), "W2": (1024, 1024), "W3": (1024, 1024), "b1": (1024,), "b2": (1024,),
             "b3": (1024,), "x": (1024,), "t": (1024,)},
    """n: size
W1, W2, W3: R^(n,n)
b1, b2, b3, x, t: R^n
h1 = tanh(W1 @ x + b1)
h2 = tanh(W2 @ h1 + b2)
y = W3 @ h2 + b3
L = 0.5 * sum((y - t)^2)
g = grad(L, [W1, b1, W2, b2, W3, b3])
""", ("W1", "b1", "W2", "b2", "W3", "b3"),
    """def loss(p, A):
    W1, b1, W2, b2, W3, b3 = p
    h1 = jnp.tanh(W1 @ A["x"] + b1)
    h2 = jnp.tanh(W2 @ h1 + b2)
    return 0.5 * jnp.sum((W3 @ h2 + b3 - A["t"]) ** 2)
""",
    """def gradient(A):
    h1 = np.tanh(A["W1"] @ A["x"] + A["b1"])
    h2 = np.tanh(A["W2"] @ h1 + A["b2"])
    d3 = A["W3"] @ h2 + A["b3"] - A["t"]
    d2 = (A["W3"].T @ d3) * (1 - h2 * h2)
    d1 = (A["W2"].T @ d2) * (1 - h1 * h1)
    return [np.outer(d1, A["x"]), d1, np.outer(d2, h1), d2, np.outer(d3, h2), d3]
""", {"W1": 1 / 32, "W2": 1 / 32, "W3": 1 / 32})

CLASSIFIER = Model(
    "classifier", {"X": (512, 784), "W": (784, 10), "bias": (10,), "Y": (512, 10)},
    """b, d, k: size
X: R^(b,d)
W: R^(d,k)
bias: R^k
Y: R^(b,k)
L = -sum(Y * log_softmax(X @ W + outer(ones(b), bias), axis=-1)) / b
g = grad(L, [W, bias])
""", ("W", "bias"),
    """def loss(p, A):
    W, bias = p
    return -jnp.sum(A["Y"] * jax.nn.log_softmax(A["X"] @ W + bias, axis=-1)) / A["X"].shape[0]
""",
    """def gradient(A):
    z = A["X"] @ A["W"] + A["bias"]
    s = np.exp(z - z.max(axis=1, keepdims=True))
    s /= s.sum(axis=1, keepdims=True)
    r = (s * A["Y"].sum(axis=1, keepdims=True) - A["Y"]) / len(z)
    return [A["X"].T @ r, r.sum(axis=0)]
""", {"W": 0.05})

ATTENTION = Model(
    "attention", {"Q": (256, 64), "K": (256, 64), "V": (256, 64), "T": (256, 64)},
    """t, e: size
Q, K, V, T: R^(t,e)
A = softmax(Q @ transpose(sg(K)) / sqrt(e), axis=-1) @ V
g = grad(sum(A * T), [Q, K, V])
""", ("Q", "K", "V"),
    """def loss(p, A):
    Q, K, V = p
    S = Q @ jax.lax.stop_gradient(K).T / jnp.sqrt(Q.shape[1])
    return jnp.sum(jax.nn.softmax(S, axis=-1) @ V * A["T"])
""",
    """def gradient(A):
    Q, K, V, T = A["Q"], A["K"], A["V"], A["T"]
    c = np.sqrt(Q.shape[1])
    S = Q @ K.T / c
    P = np.exp(S - S.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    dP = T @ V.T
    dS = P * (dP - (dP * P).sum(axis=1, keepdims=True))
    return [dS @ K / c, np.zeros_like(K), P.T @ T]
""", {})

LAYERNORM = Model(
    "layernorm", {"x": (4096,), "g": (4096,), "beta": (4096,), "t": (4096,)},
    """n: size
x, g, beta, t: R^n
mu = mean(x)
v = mean((x - mu)^2)
xhat = (x - mu) / sqrt(v + 1e-5)
L = 0.5 * sum((g*xhat + beta - t)^2)
grad_x = grad(L, x)
""", ("x",),
    """def loss(p, A):
    (x,) = p
    xhat = (x - jnp.mean(x)) / jnp.sqrt(jnp.mean((x - jnp.mean(x)) ** 2) + 1e-5)
    return 0.5 * jnp.sum((A["g"] * xhat + A["beta"] - A["t"]) ** 2)
""",
    """def gradient(A):
    u = A["x"] - A["x"].mean()
    s = np.sqrt((u * u).mean() + 1e-5)
    xhat = u / s
    d = A["g"] * (A["g"] * xhat + A["beta"] - A["t"])
    return [(d - d.mean() - xhat * (d * xhat).mean()) / s]
""", {})


def mlp1(width: int) -> Model:
    """The one-hidden-layer MLP of programs.mlp_files (issue 13's program with .npy inputs)."""
    return Model(
        f"mlp1-{width}", {"W1": (width, width), "b1": (width,), "w2": (width,), "x0": (width,)},
        f"""W1: R^({width},{width})
b1, w2, x0: R^{width}
c: R
h = tanh(W1 @ x0 + b1)
loss = (tanh(dot(w2, h) + c) - 0.3)^2
g = grad(loss, W1)
""", ("W1",),
        """def loss(p, A):
    (W1,) = p
    return (jnp.tanh(A["w2"] @ jnp.tanh(W1 @ A["x0"] + A["b1"]) + 0.1) - 0.3) ** 2
""",
        """def gradient(A):
    h = np.tanh(A["W1"] @ A["x0"] + A["b1"])
    out = np.tanh(A["w2"] @ h + 0.1)
    return [np.outer(2 * (out - 0.3) * (1 - out**2) * A["w2"] * (1 - h**2), A["x0"])]
""", {"W1": width ** -0.5, "w2": width ** -0.5})


MODELS = {m.name: m for m in (MLP3, CLASSIFIER, ATTENTION, LAYERNORM, mlp1(1024), mlp1(4096), mlp1(8192))}

JAX = """
import sys, numpy as np, jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
folder, out = sys.argv[1], sys.argv[2]
A = {{k: jnp.asarray(np.load(f"{{folder}}/{{k}}.npy")) for k in {names!r}}}
{loss}
g = jax.jit(jax.grad(loss))(tuple(A[k] for k in {wrt!r}), A)
np.savez(out, *[np.asarray(v) for v in g])
"""

HAND = """
import sys, numpy as np
folder, out = sys.argv[1], sys.argv[2]
A = {{k: np.load(f"{{folder}}/{{k}}.npy") for k in {names!r}}}
{hand}
np.savez(out, *gradient(A))
"""


def write_arrays(model: Model, folder: Path) -> None:
    """The model's inputs as .npy files: normal draws, weights scaled as a network is initialised;
    a matrix named Y is one-hot rows (the classifier's labels)."""
    rng = np.random.default_rng(41)
    for name, shape in model.shapes.items():
        array = rng.normal(size=shape) * model.scale.get(name, 1.0)
        if name == "Y":
            array = np.eye(shape[1])[rng.integers(0, shape[1], shape[0])]
        np.save(folder / f"{name}.npy", array)


def gradlang_source(model: Model, folder: Path) -> str:
    given = ", ".join(f'{k} = load("{folder}/{k}.npy")' for k in model.shapes)
    given += ", c = 0.1" if model.name.startswith("mlp1") else ""
    last = model.program.strip().splitlines()[-1].split("=")[0].strip()
    return model.program + f"{last} at {given}\n"


def cpu(command: list) -> float:
    """CPU seconds (user + system) of one whole child process; its output is not read."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = {**os.environ, "PYTHONPATH": REPO, "JAX_PLATFORMS": "cpu"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed copy has its bytecode
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{command[:4]} failed: {done.stderr[-2000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def difference(model: Model, source: str, reference: Path) -> float:
    """max |gradlang − JAX| over max |JAX| across the gradient's parts (Session.run in this process)."""
    from gradlang.core.session import Session

    value = Session(time_limit=None).run(source)[-1].value
    parts = list(value) if len(model.wrt) > 1 else [value]
    with np.load(reference) as saved:
        jax_parts = [saved[f"arr_{i}"] for i in range(len(parts))]
    worst = max(float(np.max(np.abs(np.asarray(p, float) - j))) for p, j in zip(parts, jax_parts))
    return worst / max(float(np.max(np.abs(j))) for j in jax_parts)


def row(model: Model, repeats: int) -> list:
    """The three commands interleaved `repeats` times (one run first, not counted), the least CPU of each."""
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        write_arrays(model, folder)
        path = folder / f"{model.name}.grad"
        path.write_text(gradlang_source(model, folder))
        names = tuple(model.shapes)
        commands = {
            "gradlang": [sys.executable, "-m", "gradlang", "--plain", str(path)],
            "JAX": [sys.executable, "-c", JAX.format(names=names, loss=model.jax_loss, wrt=model.wrt),
                    str(folder), str(folder / "jax.npz")],
            "NumPy": [sys.executable, "-c", HAND.format(names=names, hand=model.hand), str(folder),
                      str(folder / "hand.npz")]}
        times: dict = {label: [] for label in commands}
        for index in range(repeats + 1):
            for label, command in commands.items():
                seconds = cpu(command)
                if index:
                    times[label].append(seconds)
        best = {label: min(seconds) for label, seconds in times.items()}
        diff = difference(model, path.read_text(), folder / "jax.npz")
    return [model.name, *(f"{best[k]:.2f}" for k in commands), f"{best['gradlang'] / best['JAX']:.2f}",
            f"{best['gradlang'] / best['NumPy']:.2f}", f"{diff:.1e}"]


HEADER = ["model", "gradlang s", "JAX s", "NumPy s", "gradlang/JAX", "gradlang/NumPy", "diff vs JAX"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", default=[], help=f"of {sorted(MODELS)}; all when none is named")
    parser.add_argument("--repeats", type=int, default=3)
    options = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    print("| " + " | ".join(HEADER) + " |")
    print("|" + "---|" * len(HEADER), flush=True)
    for name in options.models or list(MODELS):
        print("| " + " | ".join(row(MODELS[name], options.repeats)) + " |", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
