"""Where the examples live, and one cached CLI run of each (shared by the example tests).

Every example is run once per test session with `--plain` (the golden test and
the run test share that transcript), so the directory stays well under a
minute on two cores.
"""

from __future__ import annotations

import os
import subprocess
import sys
from functools import lru_cache
from pathlib import Path
from tests.safety import SAFETY_NET

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
GOLDEN = Path(__file__).resolve().parent / "golden"
NAMES = sorted(path.stem for path in EXAMPLES.glob("*.grad"))


@lru_cache(maxsize=None)
def run_example(name: str, fmt: str = "--plain") -> subprocess.CompletedProcess:
    """Run examples/NAME.grad through the CLI in a subprocess, as a user would."""
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run(
        [sys.executable, "-m", "gradlang", fmt, str(EXAMPLES / f"{name}.grad")],
        capture_output=True, text=True, timeout=SAFETY_NET, cwd=REPO, env=env,
    )


def run_all(workers: int = 2) -> None:
    """Run every example in both tested formats, two at a time (CI has two cores)."""
    from concurrent.futures import ThreadPoolExecutor

    jobs = [(name, fmt) for name in NAMES for fmt in ("--plain", "--json")]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(lambda job: run_example(*job), jobs))
