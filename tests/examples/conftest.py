"""Fixtures for the example tests."""

from __future__ import annotations

import pytest

from example_support import run_example


@pytest.fixture(scope="session")
def example_run():
    """`example_run(name, fmt="--plain")`: the cached CompletedProcess of one example."""
    return run_example
