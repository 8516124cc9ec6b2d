"""With --json the warnings live in each result object, once."""

import json
import subprocess
import sys
from tests.safety import SAFETY_NET


def test_json_keeps_warnings_in_the_object_not_on_stderr():
    run = subprocess.run(
        [sys.executable, "-m", "gradlang", "--json", "-e", "diff(abs(t), t) at t = 0"],
        capture_output=True, text=True, timeout=SAFETY_NET,
    )
    (record,) = [json.loads(line) for line in run.stdout.splitlines()]
    assert record["warnings"] and "jump" in record["warnings"][0]
    assert "warning" not in run.stderr
