"""Every example runs without error, in plain text and in JSON (issue 5)."""

from __future__ import annotations

import json

import pytest

from example_support import NAMES


def test_there_are_examples():
    assert "stable_softmax" in NAMES and len(NAMES) >= 11


@pytest.mark.parametrize("name", NAMES)
def test_plain_run_succeeds(example_run, name):
    done = example_run(name)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert done.stdout.strip(), "an example should print its lesson's results"


@pytest.mark.parametrize("name", NAMES)
def test_json_is_one_object_per_line(example_run, name):
    done = example_run(name, "--json")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines
    for line in lines:
        record = json.loads(line)
        assert isinstance(record, dict)
        assert record["kind"] in ("value", "explain")


@pytest.mark.parametrize("name", NAMES)
def test_a_lesson_prints_no_warning_it_does_not_teach(example_run, name):
    """Kink warnings are lessons (a tie, a jump); an `at` warning would say the lesson's author erred."""
    done = example_run(name)
    said = " ".join(done.stderr.split())  # warnings are wrapped at 80 columns
    assert "changes nothing" not in said and "does not occur" not in said, done.stderr
