"""Derivation programs of the kind issue 40 is judged on, written fresh (tests/explain/hidden_like/).

Issue 40 is judged on hidden derivation programs "of the same kind" as the 70 it names. These nineteen were
written by someone who had not seen the engine's output (SimSiam, Barlow Twins, VICReg, double DQN, a soft
Q target, a hinge discriminator, focal loss, label smoothing, straight-through Gumbel-softmax, a mixture's
M-step with stopped responsibilities, an actor-critic, DINO, batch and group norm with stopped statistics,
a Huber TD target, feature matching, a soft actor, a Hessian and a second derivative through a stop), each
at a literal size (R^3) and a symbolic one (R^n). Each is held to the judge's bar: at most 25 plain lines
of at most 100 columns; the value equal to grad and to JAX's in float64 at a random point (other sizes for
the symbolic program); one ledger entry per stop written with the verdict worked out by hand, and the
identity true = kept + removed; no letter a line does not introduce, no stop called by a made-up letter, no
generated name that is a user's; the closing check; LaTeX that compiles without an overfull box; the same
bytes under three hash seeds; no error in any format. What still fails is a strict xfail saying exactly what.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gradlang import Session
from gradlang.render import to_json, to_latex, to_plain, to_rich
from tests.explain.hidden_like_jax import derivative
from tests.safety import SAFETY_NET

FOLDER = Path(__file__).resolve().parent / "hidden_like"
ROOT = FOLDER.parents[2]
SIZES = {"n": 4, "m": 3, "b": 2, "g": 3, "c": 2, "t": 3}  # the symbolic programs' random sizes
_RNG = np.random.default_rng(4040)

# program: the verdicts of its stops, worked out by hand, in the order written
VERDICTS = {
    "simsiam": ["blocking"], "barlow_twins": ["irrelevant"], "vicreg": ["irrelevant"],
    "double_dqn": ["neutral"],  # the stop reaches W only through argmax, whose derivative is 0
    "soft_q": ["blocking"], "hinge_discriminator": ["irrelevant"], "focal": ["blocking"],
    "label_smoothing": ["irrelevant"], "gumbel_st": ["inventing"], "gmm_estep": ["blocking"],
    "gae_actor_critic": ["blocking", "blocking"], "dino": ["irrelevant", "irrelevant"],
    "batch_norm": ["blocking", "blocking", "neutral"],  # the running mean's sg: the same stop as mu's
    "group_norm": ["blocking", "blocking"],
    "huber_td": ["irrelevant"], "feature_matching": ["irrelevant"], "soft_actor": ["irrelevant"],
    "hessian_stop": ["blocking"], "second_diff_stop": ["blocking"],
}
# (program, property) -> exactly what fails; strict: remove the line when it passes
OPEN = {
}


def _cases(prop: str) -> list:
    out = []
    for path in sorted(FOLDER.glob("*.grad")):
        name = re.sub(r"_(literal|symbolic)$", "", path.stem)
        why = OPEN.get((name, prop)) or OPEN.get((path.stem, prop))
        marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
        out.append(pytest.param(path, id=path.stem, marks=marks))
    return out


def _name(path: Path) -> str:
    return re.sub(r"_(literal|symbolic)$", "", path.stem)


def _explained(path: Path):
    result = Session().run(path.read_text())[-1]
    assert result is not None and result.kind == "explain"
    return result


def _plain(path: Path) -> str:
    return to_plain(_explained(path))


def test_every_program_is_here_at_both_sizes():
    names = {_name(p) for p in FOLDER.glob("*.grad")}
    assert names == set(VERDICTS)
    for name in names - {"second_diff_stop"}:  # a scalar program has one size
        assert (FOLDER / f"{name}_literal.grad").exists() and (FOLDER / f"{name}_symbolic.grad").exists()
    for path in FOLDER.glob("*.grad"):
        lines = path.read_text().splitlines()
        assert len(lines) <= 25 and max(map(len, lines)) <= 100


@pytest.mark.parametrize("path", _cases("fits"))
def test_the_derivation_fits_25_lines_of_100_columns(path):
    text = _plain(path)
    lines = text.splitlines()
    assert len(lines) <= 25, f"{len(lines)} lines\n{text}"
    assert max(map(len, lines)) <= 100, text


@pytest.mark.parametrize("path", _cases("jax"))
def test_the_value_is_grads_and_jaxs(path):
    """The derivation's closing check agrees with grad, and grad's numbers at a random point are JAX's."""
    source = path.read_text()
    explanation = _explained(path).steps[-1]
    assert explanation.check is not None and explanation.check.agrees, _plain(path)
    arrays = _point(source)
    session = Session()
    for name, array in arrays.items():
        session.bind(f"{name}0", array)
    session.run("\n".join(line for line in source.splitlines() if not line.startswith("explain ")))
    statement = source.strip().splitlines()[-1].removeprefix("explain ")
    ours = np.asarray(session.eval(statement + " at " + ", ".join(f"{n} = {n}0" for n in arrays)), dtype=float)
    wrt = re.search(r"\(\w+, (\w+)", statement).group(1)
    theirs = np.asarray(derivative(_name(path), wrt, arrays))
    assert ours.shape == theirs.shape and np.allclose(ours, theirs, rtol=1e-9, atol=1e-12), (ours, theirs)


def _point(source: str) -> dict:
    """A random array for every declared tensor or scalar, symbolic sizes at SIZES."""
    arrays = {}
    for name, shape in re.findall(r"^(\w+): R(?:\^(\S+))?$", source, re.M):
        dims = [] if not shape else [d for d in shape.strip("()").split(",")]
        dims = [int(d) if d.strip().isdigit() else SIZES[d.strip()] for d in dims]
        arrays[name] = _RNG.normal(size=dims) if dims else np.array(_RNG.normal())
    return arrays


@pytest.mark.parametrize("path", _cases("ledger"))
def test_one_entry_per_written_stop_with_its_verdict_and_the_identity(path):
    source, text = path.read_text(), _plain(path)
    ledger = _explained(path).steps[-1].ledger
    written = len(re.findall(r"\b(sg|stop_gradient)\(", source))
    assert written == len(VERDICTS[_name(path)])
    assert sorted(e.verdict for e in ledger) == sorted(VERDICTS[_name(path)]), text
    assert len(re.findall(r"^# stop ", text, re.M)) == written, text
    op, loss, rest = re.fullmatch(r"explain (\w+)\((\w+)(, .*)\)", source.strip().splitlines()[-1]).groups()
    # the derivative asked for, of L, or of the user's name for it where the user's L is something else (soft_q)
    assert any(f"# true = kept + removed: {op}(unstopped({name}){rest}) = " in text for name in ("L", loss)), text


@pytest.mark.parametrize("path", _cases("check"))
def test_the_derivation_ends_with_its_check(path):
    text = _plain(path)
    assert re.search(r"^# ✓ equals (grad|hessian|diff)( \((symbolically|numerically)|$)", text, re.M), text


WORDS = {"where", "true", "false", "axis", "keepdims", "L", "e"}


def _formula_lines(text: str) -> list:
    """The formulas of a plain derivation: its title's, the let block's, the numbered lines' and the value,
    each without its rule in brackets or a note in parentheses."""
    out = []
    for line in text.splitlines():
        if not line.startswith("#"):
            out.append(line)
        elif re.match(r"# (grad|hessian|diff)\(", line):
            out.append(re.sub(r":( .*)?$", "", line))  # the title's formula, not its words
        elif re.match(r"# (let |\(\d+\)| {5}\S)", line):
            out.append(re.sub(r"\s+(\[[^\]]*\]|\(stopped:[^)]*\))$", "", line.replace("# let ", "#", 1)))
    return out


def _user_names(source: str) -> set:
    return set(re.findall(r"^(\w+)(?:\([^)]*\))?\s*(?::|=)", source, re.M)) | {
        s.strip() for line in re.findall(r"^([\w, ]+): size$", source, re.M) for s in line.split(",")}


@pytest.mark.parametrize("path", _cases("names"))
def test_every_letter_is_the_users_or_introduced_and_no_stop_is_a_made_up_letter(path):
    from gradlang.core import builtins  # noqa: F401  (registers the builtin table)
    from gradlang.core.builtin_table import lookup

    source, text = path.read_text(), _plain(path)
    users = _user_names(source)
    lets = set(re.findall(r"^# (?:let |     )\s*(\S+) = ", text, re.M))
    loss = re.search(r"\((\w+), \w+", source.strip().splitlines()[-1]).group(1)
    for line in _formula_lines(text):
        for word in re.findall(r"(?<![\w.])[A-Za-z_]\w*", line.replace("∂L/∂", " ")):
            assert word in users | lets | WORDS or lookup(word), f"{word!r} is introduced nowhere: {line}\n{text}"
    made_up = [n for n in re.findall(r"^# (?:let |     )\s*(\w+) = sg\(", text, re.M) if n not in users]
    assert not made_up, f"a stop called by a made-up letter {made_up}\n{text}"
    assert "L" not in users or loss == "L" or "∂L/∂" not in text, f"the user's L is not the loss\n{text}"


def _four(result) -> list:
    from rich.console import Console

    console = Console(width=100, color_system=None, record=True, file=io.StringIO())
    console.print(to_rich(result))
    return [to_plain(result), to_latex(result), console.export_text(), json.dumps(to_json(result), sort_keys=True)]


@pytest.mark.parametrize("path", _cases("formats"))
def test_no_error_in_any_format(path):
    for text in _four(_explained(path)):
        assert text and "Error" not in text and "Traceback" not in text


@pytest.mark.parametrize("path", _cases("latex"))
def test_the_latex_compiles_and_fits_the_page(path, tmp_path):
    import shutil

    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed")
    from tests.explain.test_latex_compiles import _compile

    log = _compile(_cli_latex(path), tmp_path)
    assert "Overfull \\hbox" not in log, log[log.index("Overfull"):][:400]


SCRIPT = """
import sys
from pathlib import Path
from gradlang import Session
from tests.explain.test_hidden_like import _four
for path in sorted(Path(sys.argv[1]).glob("*.grad")):
    print("\\n".join(_four(Session().run(path.read_text())[-1])))
"""


def test_the_same_bytes_under_three_hash_seeds():
    digests = {}
    for seed in ("0", "1", "2024"):
        run = subprocess.run([sys.executable, "-c", SCRIPT, str(FOLDER)], cwd=ROOT, capture_output=True, text=True,
                             env={**os.environ, "PYTHONHASHSEED": seed}, timeout=SAFETY_NET)
        assert run.returncode == 0, run.stderr[-2000:]
        digests[seed] = hashlib.sha256(run.stdout.encode()).hexdigest()
    assert len(set(digests.values())) == 1, digests


# Found by these programs and fixed: VICReg's LaTeX did not compile, twice over.
UNDERSCORE = "m, n: size\nZ: R^(m,n)\nexplain grad(sum((Z - mean(Z, axis=0))^2), Z)"


def _cli_latex(path: Path) -> str:
    run = subprocess.run([sys.executable, "-m", "gradlang", "--latex", str(path)], capture_output=True, text=True,
                         cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=SAFETY_NET)
    assert run.returncode == 0 and run.stdout, run.stderr[-2000:]
    return run.stdout


def _compiles(latex: str, tmp_path) -> None:
    import shutil

    if shutil.which("pdflatex"):
        from tests.explain.test_latex_compiles import _compile

        _compile(latex, tmp_path)


def test_a_rule_whose_name_has_an_underscore_is_latex_text(tmp_path):
    """broadcast_to's rule was set as \\text{broadcast_to}: a bare _ in a text box ("Missing $ inserted")."""
    program = tmp_path / "mean.grad"
    program.write_text(UNDERSCORE)
    latex = _cli_latex(program)
    assert r"\text{broadcast\_to}" in latex and r"\text{broadcast_to}" not in latex, latex
    _compiles(latex, tmp_path)


def test_a_let_name_of_explains_in_the_value_is_latex(tmp_path):
    """VICReg's value reads its let δ; LaTeX printed the Unicode δ, which pdflatex does not know."""
    latex = _cli_latex(FOLDER / "vicreg_symbolic.grad")
    value = latex.rsplit("\\[", 1)[1]
    assert "δ" not in value and r"\delta" in value, value
    _compiles(latex, tmp_path)


def test_a_long_formula_in_latex_is_broken_as_the_derivation_shows_it():
    """Group norm's stop var = sg(expand_dims(sum(u3, …)/6, …)) was broken in LaTeX as the formula u3 stands for
    (sg(expand(0.1666… ⊙ sum((X − broadcast(sg(…)))²)))), one row 46.7 pt wider than the page."""
    latex = _cli_latex(FOLDER / "group_norm_literal.grad")
    [head] = [row for row in latex.splitlines() if row.startswith(r"&\quad var = ")]
    assert "u_{3}" in head and r"\operatorname{broadcast}" not in head, head
