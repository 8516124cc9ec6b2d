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

Models of the same kinds, named on the command line (MORE): `mlp2-list`, a
2-layer tanh MLP with softmax cross-entropy, 256×784 inputs, 256 hidden, 10
classes, by [W1, b1, W2, b2], its biases broadcast as `X @ W1 + b1`;
`layernorm-head`, a batched layer norm (512×1024, `axis=-1, keepdims=true`)
followed by a linear head to 16 outputs, by [X, gamma, beta, W]; `rmsnorm`
over 4096 by [x, g]; `attention-512x128`, the attention at 512 tokens of width 128.

Columns are CPU seconds (user + system, start-up included) of each whole child
process, the median of the repeats, the commands interleaved (the machine's two
cores are shared); the ratio of gradlang's median over JAX's, and the median
over the rounds of gradlang's CPU over JAX's in the same round (`--before TREE`
adds gradlang from another tree, a `git archive` of an earlier commit, to each
round); gradlang over hand NumPy; and the largest difference of gradlang's
numbers (the same program through Session.run in this process) from JAX's,
over the largest magnitude. The load average is printed before and after.

    PYTHONPATH=. python benchmarks/bench_models.py                    # the first table, 3 repeats
    PYTHONPATH=. python benchmarks/bench_models.py --repeats 5 layernorm attention
    PYTHONPATH=. python benchmarks/bench_models.py --before /tmp/old mlp2-list rmsnorm
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
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

MLP2 = Model(
    "mlp2-list", {"X": (256, 784), "W1": (784, 256), "b1": (256,), "W2": (256, 10), "b2": (10,), "Y": (256, 10)},
    """b, d, h, k: size
X: R^(b,d)
W1: R^(d,h)
b1: R^h
W2: R^(h,k)
b2: R^k
Y: R^(b,k)
H = tanh(X @ W1 + b1)
L = -sum(Y * log_softmax(H @ W2 + b2, axis=-1)) / b
g = grad(L, [W1, b1, W2, b2])
""", ("W1", "b1", "W2", "b2"),
    """def loss(p, A):
    W1, b1, W2, b2 = p
    H = jnp.tanh(A["X"] @ W1 + b1)
    return -jnp.sum(A["Y"] * jax.nn.log_softmax(H @ W2 + b2, axis=-1)) / A["X"].shape[0]
""",
    """def gradient(A):
    H = np.tanh(A["X"] @ A["W1"] + A["b1"])
    z = H @ A["W2"] + A["b2"]
    s = np.exp(z - z.max(axis=1, keepdims=True))
    s /= s.sum(axis=1, keepdims=True)
    r = (s * A["Y"].sum(axis=1, keepdims=True) - A["Y"]) / len(z)
    d = (r @ A["W2"].T) * (1 - H * H)
    return [A["X"].T @ d, d.sum(axis=0), H.T @ r, r.sum(axis=0)]
""", {"W1": 784 ** -0.5, "W2": 256 ** -0.5})

LAYERNORM_HEAD = Model(
    "layernorm-head", {"X": (512, 1024), "gamma": (1024,), "beta": (1024,), "W": (1024, 16), "T": (512, 16)},
    """b, d, k: size
X: R^(b,d)
gamma, beta: R^d
W: R^(d,k)
T: R^(b,k)
mu = mean(X, axis=-1, keepdims=true)
v = mean((X - mu)^2, axis=-1, keepdims=true)
H = gamma * (X - mu) / sqrt(v + 1e-5) + beta
L = 0.5 * sum((H @ W - T)^2) / b
g = grad(L, [X, gamma, beta, W])
""", ("X", "gamma", "beta", "W"),
    """def loss(p, A):
    X, gamma, beta, W = p
    mu = jnp.mean(X, axis=-1, keepdims=True)
    v = jnp.mean((X - mu) ** 2, axis=-1, keepdims=True)
    H = gamma * (X - mu) / jnp.sqrt(v + 1e-5) + beta
    return 0.5 * jnp.sum((H @ W - A["T"]) ** 2) / X.shape[0]
""",
    """def gradient(A):
    u = A["X"] - A["X"].mean(axis=1, keepdims=True)
    s = np.sqrt((u * u).mean(axis=1, keepdims=True) + 1e-5)
    xhat = u / s
    H = A["gamma"] * xhat + A["beta"]
    dY = (H @ A["W"] - A["T"]) / len(H)
    dH = dY @ A["W"].T
    dx = dH * A["gamma"]
    dX = (dx - dx.mean(axis=1, keepdims=True) - xhat * (dx * xhat).mean(axis=1, keepdims=True)) / s
    return [dX, (dH * xhat).sum(axis=0), dH.sum(axis=0), H.T @ dY]
""", {"W": 1 / 32})

RMSNORM = Model(
    "rmsnorm", {"x": (4096,), "g": (4096,), "t": (4096,)},
    """n: size
x, g, t: R^n
r = sqrt(mean(x^2) + 1e-6)
L = 0.5 * sum((g * x / r - t)^2)
grads = grad(L, [x, g])
""", ("x", "g"),
    """def loss(p, A):
    x, g = p
    return 0.5 * jnp.sum((g * x / jnp.sqrt(jnp.mean(x ** 2) + 1e-6) - A["t"]) ** 2)
""",
    """def gradient(A):
    r = np.sqrt((A["x"] ** 2).mean() + 1e-6)
    y = A["x"] / r
    e = A["g"] * y - A["t"]
    d = A["g"] * e
    return [(d - y * (d * y).mean()) / r, e * y]
""", {})


def attention(t: int, e: int) -> Model:
    """ATTENTION's program and gradients at t tokens of width e."""
    return Model(f"attention-{t}x{e}", {name: (t, e) for name in "QKVT"}, ATTENTION.program, ATTENTION.wrt,
                 ATTENTION.jax_loss, ATTENTION.hand, {})


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
# Models of the same kinds the first table did not measure (issue #41: "other models of the same kind").
MORE = {m.name: m for m in (MLP2, LAYERNORM_HEAD, RMSNORM, attention(512, 128))}

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


def cpu(command: list, tree: str = REPO) -> float:
    """CPU seconds (user + system) of one whole child process; its output is not read. `tree` is the
    gradlang it imports (PYTHONPATH, and the working directory, which `python -m` looks in first)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = {**os.environ, "PYTHONPATH": tree, "JAX_PLATFORMS": "cpu"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed copy has its bytecode
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env, cwd=tree)
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


def commands(model: Model, folder: Path, before: str | None) -> dict:
    """label -> (command, tree): gradlang (and gradlang from the tree `before`), JAX, hand NumPy."""
    path = folder / f"{model.name}.grad"
    path.write_text(gradlang_source(model, folder))
    names = tuple(model.shapes)
    ours = [sys.executable, "-m", "gradlang", "--plain", str(path)]
    found = {"gradlang": (ours, REPO)}
    if before is not None:
        found["before"] = (ours, before)
    found["JAX"] = ([sys.executable, "-c", JAX.format(names=names, loss=model.jax_loss, wrt=model.wrt),
                     str(folder), str(folder / "jax.npz")], REPO)
    found["NumPy"] = ([sys.executable, "-c", HAND.format(names=names, hand=model.hand), str(folder),
                       str(folder / "hand.npz")], REPO)
    return found


def row(model: Model, repeats: int, before: str | None = None) -> list:
    """The commands interleaved `repeats` times (one round first, not counted); the median CPU of each, and
    the median over the rounds of gradlang's CPU over JAX's in the same round."""
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        write_arrays(model, folder)
        runs = commands(model, folder, before)
        times: dict = {label: [] for label in runs}
        for index in range(repeats + 1):
            for label, (command, tree) in runs.items():
                seconds = cpu(command, tree)
                if index:
                    times[label].append(seconds)
        diff = difference(model, (folder / f"{model.name}.grad").read_text(), folder / "jax.npz")
    middle = {label: statistics.median(seconds) for label, seconds in times.items()}
    ratio = statistics.median(g / j for g, j in zip(times["gradlang"], times["JAX"]))
    cells = [model.name, *(f"{middle[k]:.2f}" for k in runs), f"{middle['gradlang'] / middle['JAX']:.2f}",
             f"{ratio:.2f}"]
    if before is not None:
        cells.append(f"{statistics.median(b / j for b, j in zip(times['before'], times['JAX'])):.2f}")
    return cells + [f"{middle['gradlang'] / middle['NumPy']:.2f}", f"{diff:.1e}"]


def header(before: bool) -> list:
    return ["model", "gradlang s", *(["before s"] if before else []), "JAX s", "NumPy s", "gradlang/JAX",
            "median of rounds' gradlang/JAX", *(["before: median of rounds' before/JAX"] if before else []),
            "gradlang/NumPy", "diff vs JAX"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    every = {**MODELS, **MORE}
    parser.add_argument("models", nargs="*", default=[],
                        help=f"of {sorted(every)}; all of the first table ({sorted(MODELS)}) when none is named")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--before", metavar="TREE", help="also run gradlang from this tree (a `git archive` of an "
                        "earlier commit), interleaved")
    options = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    columns = header(options.before is not None)
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns), flush=True)
    for name in options.models or list(MODELS):
        print("| " + " | ".join(row(every[name], options.repeats, options.before)) + " |", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
