"""A non-editable install works from another folder: the grammar ships in the wheel.

The wheel is built once per module with pip (hatchling is fetched from PyPI
into pip's isolated build environment).
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from tests.safety import SAFETY_NET

REPO = Path(__file__).resolve().parents[2]


def _clean_env() -> dict:
    """The environment without anything that would put the checkout on the path."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(REPO)],
                   check=True, env=_clean_env(), cwd=out, timeout=SAFETY_NET)
    (built,) = out.glob("gradlang-*.whl")
    return built


def test_wheel_carries_the_grammar(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert "gradlang/grammar/gradlang.lark" in names
    assert "gradlang/__init__.py" in names


def test_wheel_grammar_is_the_checkout_grammar(wheel):
    shipped = zipfile.ZipFile(wheel).read("gradlang/grammar/gradlang.lark")
    assert shipped == (REPO / "grammar" / "gradlang.lark").read_bytes()


def _dependencies_pth(venv: Path) -> None:
    """Let `venv` import the running environment's packages (the dependencies), and nothing of the base's.

    `venv --system-site-packages` would give the *base* interpreter's packages,
    which inside a project venv (.venv, as the README makes) lack lark and
    sympy. A .pth file appends the running environment's site-packages after
    the new venv's own, so the wheel installed there is still imported first.
    """
    (site,) = venv.glob("lib/python*/site-packages")
    paths = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    (site / "_running_environment.pth").write_text("".join(f"{path}\n" for path in paths))


@pytest.mark.slow
def test_installed_wheel_runs_from_another_folder(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=SAFETY_NET)
    _dependencies_pth(venv)
    python = venv / "bin" / "python"
    # --ignore-installed: the running environment (seen through the .pth) may hold gradlang
    # itself, as CI's non-editable install does, and pip would then install nothing here.
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--ignore-installed", str(wheel)],
                   check=True, env=_clean_env(), timeout=SAFETY_NET)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code = ("import gradlang; from gradlang import Session; "
            "print(gradlang.__file__); print(Session().eval('diff(x^2, x)'))")
    run = subprocess.run([str(python), "-c", code], cwd=elsewhere, env=_clean_env(),
                         capture_output=True, text=True, timeout=SAFETY_NET)
    assert run.returncode == 0, run.stderr
    location, value = run.stdout.split()
    assert Path(location).is_relative_to(venv), "imported the checkout, not the installed wheel"
    assert value == "2*x"
