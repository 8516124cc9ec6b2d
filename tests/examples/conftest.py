"""Fixtures for the example tests."""

from __future__ import annotations

import pytest

from example_support import run_all, run_example


@pytest.fixture(scope="session")
def example_run():
    """`example_run(name, fmt="--plain")`: the cached CompletedProcess of one example."""
    run_all()
    return run_example
