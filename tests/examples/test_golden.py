"""Golden transcripts: each example's --plain output, checked in under golden/.

After changing an example on purpose, regenerate with
    GRADLANG_UPDATE_GOLDEN=1 pytest tests/examples
and review the diff before committing it.
"""

from __future__ import annotations

import os

import pytest

from example_support import GOLDEN, NAMES

UPDATE = os.environ.get("GRADLANG_UPDATE_GOLDEN") == "1"


@pytest.mark.parametrize("name", NAMES)
def test_transcript_matches_golden(example_run, name):
    done = example_run(name)
    assert done.returncode == 0, done.stderr
    golden = GOLDEN / f"{name}.txt"
    if UPDATE:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(done.stdout)
    assert golden.exists(), f"no transcript for {name}; run with GRADLANG_UPDATE_GOLDEN=1"
    assert done.stdout == golden.read_text()


def test_no_orphan_transcripts():
    assert {path.stem for path in GOLDEN.glob("*.txt")} <= set(NAMES)
