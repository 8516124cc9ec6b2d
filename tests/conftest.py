"""Shared fixtures: a fresh session, and a helper that turns a program's last value into floats."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run against the checkout when gradlang is not installed
    sys.path.insert(0, str(REPO))

from gradlang import Session


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: takes more than 30 seconds")


def as_floats(value) -> np.ndarray:
    """A gradlang value with no free symbols (number, vector, matrix, array) as float64."""
    if isinstance(value, np.ndarray):
        return value.astype(np.float64)
    if hasattr(value, "tolist"):  # SymPy arrays and matrices
        value = value.tolist()
    return np.array(_floats(value), dtype=np.float64)


def _floats(value):
    if isinstance(value, (list, tuple)):
        return [_floats(item) for item in value]
    return float(value)


def run_values(source: str) -> np.ndarray:
    """Run `source` in a fresh session and return its last value as floats."""
    return as_floats(Session().eval(source))


@pytest.fixture
def session() -> Session:
    return Session()


@pytest.fixture(scope="session")
def values():
    """`values(source)`: the last value of a program, as a float64 NumPy array."""
    return run_values


# In CI (.ci/run sets GRADLANG_REQUIRE_FRAMEWORKS=1) every framework is installed on
# purpose, so a test skipped because one of them cannot be imported is a failure:
# a broken install must not pass as "skipped".
_REQUIRED = ("jax", "torch", "tensorflow", "IPython", "matplotlib", "nbclient", "nbformat", "ipykernel")


def _missing_framework(report) -> bool:
    if not (report.skipped and os.environ.get("GRADLANG_REQUIRE_FRAMEWORKS") == "1"):
        return False
    text = str(report.longrepr)
    return "could not import" in text and any(f"'{name}" in text for name in _REQUIRED)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if _missing_framework(report):
        report.outcome = "failed"


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    report = outcome.get_result()
    if _missing_framework(report):
        report.outcome = "failed"
