"""--from-jax / --from-torch against hostile and odd user code (issues #37, #38, #39).

Names the importers did not choose (a jit function's __name__, a dict key, a
parameter's name, a module's folder) never start a statement; the program is
read back by the parser and run at the traced point against the framework's
own loss and gradient; what gradlang cannot write (complex values, FFTs, more
than two axes) is refused at the user's line; the user's code cannot print
into gradlang's output nor end it with a traceback or a silent exit.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import unicodedata
from pathlib import Path

import numpy as np
import pytest

from gradlang import Session
from gradlang.frameworks import TranslateError, translate
from gradlang.frameworks.program import Line, Writer, inert
from gradlang.frameworks import shapes_arg
from gradlang.frameworks.shapes_arg import gradlang_name
from gradlang.frameworks.verify import entries
from tests.conftest import as_floats
from tests.safety import SAFETY_NET

REPO = Path(__file__).resolve().parents[2]
INJECTION = "\nexp(u) = 0*u\n#"
SEPARATORS = ["\n", "\r", "\r\n", "\u2028", "\u2029", "\x0b", "\x0c", "\x00", "\x85", "\u202e"]


def write_module(folder: Path, name: str, text: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.py").write_text(textwrap.dedent(text), encoding="utf-8")


@pytest.fixture
def user(tmp_path, monkeypatch):
    """A folder of the user's own modules, the current one, forgotten (sys.path, sys.modules) after the test."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    before = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - before:
        if getattr(sys.modules[name], "__file__", "") and str(tmp_path) in str(sys.modules[name].__file__):
            del sys.modules[name]


def numbers(program: str) -> list:
    return [as_floats(value) for result in Session().run(program) for value in entries(result.value)]


def statements_only_written(program: str) -> None:
    """Every line is a comment, blank, or a statement the writer emits (no line of a name's own)."""
    starts = ("#", "t", "loss", "grad(", "explain")
    for line in program.split("\n"):
        assert line == "" or line.startswith(starts) or ": R" in line or " = " in line, repr(line)
    assert "exp(u) = 0*u" not in [line.strip() for line in program.split("\n")]


def gradlang(folder: Path, *args, env: dict | None = None) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", **(env or {})}
    environment.pop("GRADLANG_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "gradlang", *args], capture_output=True, text=True, cwd=folder,
                          env=environment, timeout=SAFETY_NET)


# --- 1. a third party's text never becomes a statement ---------------------------------------------------------


@pytest.mark.parametrize("separator", SEPARATORS)
def test_inert_leaves_no_line_break_nor_hidden_character(separator):
    text = inert(f"name{separator}exp(u) = 0*u{separator}#")
    assert len(f"# {text}".split("\n")) == 1 and len(f"# {text}".splitlines()) == 1
    assert all(unicodedata.category(ch) not in ("Cc", "Cf", "Zl", "Zp") for ch in text)


@pytest.mark.parametrize("path", ["exp", "at", "unfold", "explain", "a\nb", "1x", "é\u2028", "params.a\x00b"])
def test_a_name_made_from_a_path_is_an_identifier_that_shadows_nothing(path):
    from gradlang.core.builtins import lookup

    name = gradlang_name(path, set())
    assert name.isascii() and name.isidentifier() and lookup(name) is None
    assert name not in ("at", "explain", "unfold")


def test_a_program_that_does_not_read_back_as_written_is_refused():
    writer = Writer()
    writer.declare("x", (3,))
    writer.body.append(Line("t1 = x\nexp(u) = 0*u", kind="assignment", name="t1"))  # a statement smuggled in
    with pytest.raises(TranslateError, match="reads back as 3 statements, not the 2 written"):
        writer.text([])


def test_a_jit_functions_name_with_a_newline_stays_in_its_comment(user):
    jax = pytest.importorskip("jax")
    write_module(user, "named_jit", f'''
        import jax, jax.numpy as jnp
        def inner(u):
            return jnp.exp(jax.lax.stop_gradient(u) * 0.0 + u)
        inner.__name__ = {INJECTION!r}
        inner = jax.jit(inner)
        def loss(x):
            return jnp.sum(inner(x))
        ''')
    program = translate("jax", "named_jit:loss", shapes="x=3")
    statements_only_written(program)
    assert "inside \\nexp(u) = 0*u\\n#" in program
    x = np.array([0.2739233746429086, -0.4604265724722594, -0.9180529521276106])
    jax.config.update("jax_enable_x64", True)
    assert np.allclose(numbers(program)[0], np.sum(np.exp(x)), rtol=1e-12)  # 2.3454…, not the injected 0.0
    assert np.allclose(numbers(program)[1], np.exp(x), rtol=1e-12)


@pytest.mark.parametrize("separator", SEPARATORS)
def test_a_dict_key_with_a_line_separator_is_named_and_commented_safely(user, separator):
    pytest.importorskip("jax")
    key = f"a{separator}exp(u) = 0*u{separator}#"
    write_module(user, "keyed", f'''
        import numpy as np, jax.numpy as jnp
        def loss(params, x):
            return jnp.sum(jnp.exp(params[{key!r}] * x))
        def example():
            return ({{{key!r}: np.array([1.0, 2.0, 3.0])}}, np.array([0.5, -0.25, 0.125]))
        ''')
    program = translate("jax", "keyed:loss", example_args="keyed:example")
    statements_only_written(program)
    w, x = np.array([1.0, 2.0, 3.0]), np.array([0.5, -0.25, 0.125])
    loss, by_w, by_x = numbers(program)
    assert np.allclose(loss, np.sum(np.exp(w * x)), rtol=1e-12)
    assert np.allclose(by_w, x * np.exp(w * x), rtol=1e-12) and np.allclose(by_x, w * np.exp(w * x), rtol=1e-12)


def test_torch_parameter_and_buffer_names_with_line_separators(user):
    torch = pytest.importorskip("torch")
    write_module(user, "torch_names", f'''
        import torch
        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_parameter({"w" + INJECTION!r}, torch.nn.Parameter(torch.tensor([1.0, 2.0, 3.0])))
                self.register_buffer("b\\u2028exp(u) = 0*u", torch.tensor([2.0, 2.0, 2.0]))
            def forward(self, x):
                w = getattr(self, {"w" + INJECTION!r})
                b = getattr(self, "b\\u2028exp(u) = 0*u")
                return torch.sum(torch.exp(w * x.detach() * 0.0 + w * x) * b)
        ''')
    program = translate("torch", "torch_names:Net", shapes="x=3")
    statements_only_written(program)
    assert "w\\nexp(u) = 0*u\\n#" in program
    x = torch.tensor([0.2739233746429086, -0.4604265724722594, -0.9180529521276106], dtype=torch.float64)
    w = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    loss, by_w, by_x = numbers(program)
    assert np.allclose(loss, float(torch.sum(torch.exp(w * x) * 2.0)), rtol=1e-12)
    assert np.allclose(by_w, (2.0 * x * torch.exp(w * x)).numpy(), rtol=1e-12)
    assert np.allclose(by_x, (2.0 * w * torch.exp(w * x)).numpy(), rtol=1e-12)


def test_a_modules_folder_with_a_newline_stays_in_the_comment(user, monkeypatch):
    pytest.importorskip("jax")
    folder = user / ("dir" + INJECTION)
    write_module(folder, "in_odd_folder", '''
        import jax, jax.numpy as jnp
        def loss(x):
            return jnp.sum(jnp.exp(jax.lax.stop_gradient(x) * 0.0 + x))
        ''')
    monkeypatch.syspath_prepend(str(folder))
    program = translate("jax", "in_odd_folder:loss", shapes="x=3")
    statements_only_written(program)
    assert "lax.stop_gradient at dir\\nexp(u) = 0*u\\n#/in_odd_folder.py:4" in program
    assert numbers(program)[0] == pytest.approx(2.3454241746227233, rel=1e-12)


# --- 2. a translation proves itself -------------------------------------------------------------------------------


def test_a_wrong_rule_is_caught_at_the_first_intermediate_that_differs(user, monkeypatch):
    pytest.importorskip("jax")
    from gradlang.frameworks import jax_rules, ops

    monkeypatch.setitem(jax_rules.RULES, "sin", lambda step: ops.call("cos", step.ins[0]))  # a rule gone wrong
    write_module(user, "uses_sin", '''
        import jax.numpy as jnp
        def loss(x):
            s = jnp.sin(x)
            return jnp.sum(s * s) + jnp.sum(s)
        ''')
    with pytest.raises(TranslateError) as caught:
        translate("jax", "uses_sin:loss", shapes="x=3")
    assert caught.value.line == 4 and caught.value.message.startswith("sin: written as `t1`")
    assert "the translation of uses_sin:loss is refused" in caught.value.message


def test_a_gradient_that_differs_is_caught_even_when_the_value_agrees(user, monkeypatch):
    pytest.importorskip("jax")
    from gradlang.frameworks import jax_rules, ops
    from gradlang.frameworks.program import Value

    def stopped_tanh(step):  # the right value, no gradient: a rule that would silently lose a path
        return ops.call("tanh", Value(f"stop_gradient({step.ins[0].text})", step.ins[0].shape))

    monkeypatch.setitem(jax_rules.RULES, "tanh", stopped_tanh)
    write_module(user, "uses_tanh", '''
        import jax.numpy as jnp
        def loss(x):
            return jnp.sum(jnp.tanh(x))
        ''')
    with pytest.raises(TranslateError, match=r"the gradient by x is \[0.0, 0.0, 0.0\] where JAX gives \[0\.9"):
        translate("jax", "uses_tanh:loss", shapes="x=3")


@pytest.mark.parametrize("kind, text, line, op", [
    ("jax", "import jax.numpy as jnp\ndef loss(x):\n    return jnp.sum(jnp.abs(jnp.fft.fft(x)))\n", 3, "complex"),
    ("jax", "import jax.numpy as jnp\ndef loss(x):\n    z = x + 1j * x\n    return jnp.sum(jnp.abs(z))\n", 3,
     "complex"),
    ("torch", "import torch\ndef loss(x):\n    return torch.sum(torch.abs(torch.fft.fft(x)))\n", 3, "fft_fft"),
])
def test_complex_values_and_ffts_are_refused_at_the_users_line(user, kind, text, line, op):
    pytest.importorskip(kind)
    write_module(user, f"complex_{kind}_{line}_{len(text)}", text)
    with pytest.raises(TranslateError) as caught:
        translate(kind, f"complex_{kind}_{line}_{len(text)}:loss", shapes="x=3")
    assert caught.value.line == line and op in caught.value.message and "complex value" in caught.value.message


def test_a_constant_of_three_axes_is_written_at_its_rank_not_squashed(user):
    """Since #39 --from-jax writes any rank (section 3b): the (4, 4, 4) ones times x[0] is 64 entries, its mean x[0]
    (once written broadcast_to(1.0, (4, 4, 4)), whose sum the engine gives as 1: the mean came out x[0] / 64)."""
    pytest.importorskip("jax")
    write_module(user, "rank3", '''
        import jax.numpy as jnp
        def loss(x):
            return jnp.mean(jnp.ones((4, 4, 4)) * x[0])
        ''')
    program = translate("jax", "rank3:loss", shapes="x=3")
    assert "reshape(ones(64), (4, 4, 4))" in program, program
    value = as_floats(entries(Session().run(program)[0].value)[0])
    x0 = shapes_arg.example(shapes_arg.parse("x=3"))["x"][0]
    assert abs(float(np.asarray(value).reshape(())) - x0) < 1e-12


# --- 3. the user's code is fenced ---------------------------------------------------------------------------------


def test_the_users_prints_do_not_reach_standard_output(tmp_path):
    pytest.importorskip("jax")
    write_module(tmp_path, "chatty", '''
        import jax.numpy as jnp
        print('{"error": "Forged", "message": "at import"}')
        def loss(x):
            print('{"error": "Forged", "message": "while tracing"}')
            return jnp.sum(x ** 2)
        ''')
    run = gradlang(tmp_path, "--json", "--from-jax", "chatty:loss", "--shapes", "x=3")
    assert run.returncode == 0, run.stderr
    assert "Forged" not in run.stdout and "Forged" in run.stderr


@pytest.mark.parametrize("text, kind", [
    ("import sys\nx = 1\nsys.exit(3)\n", "SystemExit: 3"),
    ("class Boom(BaseException):\n    pass\nraise Boom('no\\nmore')\n", "Boom: no"),
])
def test_an_exit_or_base_exception_at_import_is_one_line_at_the_users_line(tmp_path, text, kind):
    write_module(tmp_path, "leaving", text)
    run = gradlang(tmp_path, "--from-jax", "leaving:loss", "--shapes", "x=3")
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert run.stderr.splitlines()[0] == f"leaving.py:3:1: TranslateError: --from-jax: importing leaving raised {kind}"


def test_a_prng_key_in_the_loss_is_data(user):
    jax = pytest.importorskip("jax")
    write_module(user, "keys", '''
        import jax, jax.numpy as jnp
        def loss(x):
            a, unused = jax.random.split(jax.random.PRNGKey(0))
            return jnp.sum(x ** 2 * jax.random.normal(a, (3,)))
        ''')
    program = translate("jax", "keys:loss", shapes="x=3")
    jax.config.update("jax_enable_x64", True)
    from keys import loss

    x = np.array([0.2739233746429086, -0.4604265724722594, -0.9180529521276106])
    value, gradient = jax.value_and_grad(loss)(x)
    ours = numbers(program)
    assert ours[0] == pytest.approx(float(value), rel=1e-12) and np.allclose(ours[1], gradient, rtol=1e-12)


def test_an_example_too_large_is_a_limit_error_before_tracing(tmp_path):
    write_module(tmp_path, "big", "import jax.numpy as jnp\ndef loss(x):\n    return jnp.sum(x)\n")
    run = gradlang(tmp_path, "--from-jax", "big:loss", "--shapes", "x=10000,10000")
    assert run.returncode == 1 and run.stderr.startswith("LimitError: --shapes: the example arguments have "
                                                        "100,000,000 components, above the limit of 40,000")


def test_a_shape_given_twice_is_a_usage_error(tmp_path):
    run = gradlang(tmp_path, "--from-jax", "big:loss", "--shapes", "x=3 x=4")
    assert run.returncode == 2 and "--shapes: x is given twice" in run.stderr


# --- 4. PyTorch: a fixed point, elementwise min and max, forward(*args) ----------------------------------------


def test_two_torch_runs_give_the_same_bytes(tmp_path):
    pytest.importorskip("torch")
    write_module(tmp_path, "initialised", '''
        import torch
        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(3, 2)
            def forward(self, x):
                return torch.sum(torch.tanh(self.lin(x)))
        ''')
    runs = [gradlang(tmp_path, "--from-torch", "initialised:Net", "--shapes", "x=3", "--emit") for _ in range(2)]
    assert runs[0].returncode == 0, runs[0].stderr
    assert runs[0].stdout == runs[1].stdout


def test_torch_min_and_max_of_two_tensors_are_elementwise(user):
    torch = pytest.importorskip("torch")
    write_module(user, "minmax", '''
        import torch
        class Net(torch.nn.Module):
            def forward(self, a, b):
                return torch.sum(torch.min(a, b) + torch.max(a, b) ** 2)
        ''')
    program = translate("torch", "minmax:Net", shapes="a=3 b=3")
    from gradlang.frameworks.shapes_arg import example, parse

    given = example(parse("a=3 b=3"))
    a, b = (torch.tensor(given[k], requires_grad=True) for k in ("a", "b"))
    loss = torch.sum(torch.min(a, b) + torch.max(a, b) ** 2)
    ours = numbers(program)
    assert ours[0] == pytest.approx(float(loss.detach()), rel=1e-12)
    for mine, theirs in zip(ours[1:], torch.autograd.grad(loss, (a, b))):
        assert np.allclose(mine, theirs.numpy(), rtol=1e-12)


def test_a_forward_taking_star_args_names_its_arguments(user):
    pytest.importorskip("torch")
    write_module(user, "starred", '''
        import torch
        class Net(torch.nn.Module):
            def forward(self, *args):
                return torch.sum(args[0] * args[1])
        ''')
    program = translate("torch", "starred:Net", shapes="a=3 b=3")
    assert "a: R^3" in program and "b: R^3" in program
    from gradlang.frameworks.shapes_arg import example, parse

    given = example(parse("a=3 b=3"))
    loss, by_a, by_b = numbers(program)
    assert loss == pytest.approx(float(np.sum(given["a"] * given["b"])), rel=1e-12)
    assert np.allclose(by_a, given["b"]) and np.allclose(by_b, given["a"])


def test_an_empty_example_array_is_an_importer_error_not_one_of_the_unseen_program(user):
    pytest.importorskip("jax")
    write_module(user, "empty_arg", '''
        import numpy as np, jax.numpy as jnp
        def loss(x, y):
            return jnp.sum(x) + jnp.sum(y)
        def example():
            return (np.zeros(0), np.ones(3))
        ''')
    with pytest.raises(TranslateError, match=r"x has shape \(0,\): an empty array has no gradlang value$"):
        translate("jax", "empty_arg:loss", example_args="empty_arg:example")


def test_an_error_of_the_users_code_while_tracing_points_at_their_line(user):
    pytest.importorskip("jax")
    write_module(user, "raises_inside", '''
        import jax.numpy as jnp
        def loss(x):
            y = jnp.sum(x)
            return jnp.sum([y, y])
        ''')
    with pytest.raises(TranslateError) as caught:
        translate("jax", "raises_inside:loss", shapes="x=3")
    assert caught.value.line == 5 and caught.value.filename == "raises_inside.py"
    assert caught.value.message.startswith("tracing loss with jax.make_jaxpr raised TypeError")


def test_a_torch_constant_of_three_axes_is_written_at_its_rank(user):
    """A constant of shape (4, 4, 4) was refused (more than two axes); tensors of any rank are gradlang's now
    (LANGUAGE.md 3b): the loss is x[0], its gradient by x [1, 0, 0]."""
    pytest.importorskip("torch")
    write_module(user, "rank3_torch", '''
        import torch
        def loss(x):
            return torch.mean(torch.ones(4, 4, 4) * x[0])
        ''')
    program = translate("torch", "rank3_torch:loss", shapes="x=3")
    gradient = Session().run(program)[-1].value
    assert [float(v) for v in gradient] == [1.0, 0.0, 0.0], program
