"""Same program, same bytes: every example and every tensor-level derivation, under three hash seeds.

Sets and dicts of SymPy objects iterate in an order that depends on the hash
seed; a printer or a pass that walks one without sorting would print
differently from run to run. A fresh interpreter per seed runs every example
and the derivations of the tables (gradients, Jacobians, gradients by a list
of scalars), and prints each result in all four formats.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

from tests.explain.test_forward_pass import TABLE as JACOBIANS, _program as jacobians
from tests.explain.test_scalar_list_pass import DECLARED as BY_LIST, TABLE as LISTS
from tests.explain.test_tensor_derivations import TABLE, _program
from tests.safety import SAFETY_NET

ROOT = Path(__file__).resolve().parents[2]
SEEDS = ("0", "1", "2024")

SCRIPT = """
import io, json, sys
from pathlib import Path
from rich.console import Console
from gradlang.core.session import Session
from gradlang.render import to_json, to_latex, to_plain, to_rich

def shown(result):
    console = Console(width=100, color_system=None, record=True, file=io.StringIO())
    console.print(to_rich(result))
    return "\\n".join([to_plain(result), to_latex(result), console.export_text(),
                      json.dumps(to_json(result), sort_keys=True)])

programs = [path.read_text() for path in sorted(Path("examples").glob("*.grad"))] + json.loads(sys.argv[1])
for source in programs:
    for result in Session().run(source):
        if result is not None:
            print(shown(result))
"""


def _printed(seed: str, programs: list) -> str:
    import json

    env = {**os.environ, "PYTHONHASHSEED": seed}
    run = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(programs)], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=SAFETY_NET)
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout


def test_every_example_and_derivation_prints_the_same_bytes_under_three_hash_seeds():
    programs = [_program(3, statement) for _, statement, *_ in TABLE] + [_program("n", TABLE[1][1])]
    programs += [jacobians(size, statement) for size in (3, "n") for _, statement, *_ in JACOBIANS]
    programs += [BY_LIST + f"explain {statement}" for _, statement, *_ in LISTS]
    outputs = {seed: _printed(seed, programs) for seed in SEEDS}
    digests = {seed: hashlib.sha256(text.encode()).hexdigest() for seed, text in outputs.items()}
    assert "tensor reverse pass" in outputs["0"] and "tensor forward pass" in outputs["0"]
    assert len(set(digests.values())) == 1, digests
