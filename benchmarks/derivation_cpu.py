"""CPU seconds of every derivation (issue 40: no derivation of the language's primitives over a second; issue 39:
`--explain-wrt` on a real model within 120 s).

    PYTHONPATH=$PWD python benchmarks/derivation_cpu.py              # every program, then the published losses
    PYTHONPATH=$PWD python benchmarks/derivation_cpu.py softmax      # only the programs whose name holds a word
    PYTHONPATH=$PWD python benchmarks/derivation_cpu.py --published  # only the published losses' --explain-wrt
    PYTHONPATH=$PWD python benchmarks/derivation_cpu.py --top 40     # the 40 slowest (20 by default)

Each program of tests/explain/every_program.py runs in-process in a fresh Session, each result rendered plain;
the CPU seconds (time.process_time) of its slowest explain statement (the statements since the printing one
before it and the rendering included) are printed slowest first, beside the same statement with `explain`
left out (`grad(…)` alone, run first: the reference, as the machine is shared, compare the two rather than
read either alone). The published losses of examples/frameworks are translated with --explain-wrt
(translation not timed) and run the same way.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

PUBLISHED = (  # (kind, spec, --shapes, wrt): the published losses of tests/frameworks/test_published_losses.py
    ("torch", "published_torch:SwAV", "x1=3,3 x2=3,3", "prototypes"),
    ("torch", "published_torch:NormHead", "x=3,4", "fc"),
    ("torch", "published_torch:SACActor", "obs=3,3", "log_alpha"),
    ("torch", "published_torch:BYOLProjector", "x1=3,3 x2=3,3", "online.1"),
    ("torch", "published_torch:GumbelBatch", "x=2,3", "codebook"),
    ("jax", "published_jax:td_lambda", "params.w1=3,2 params.w2=2 obs=5,3 r_t=4 discount_t=4", "params.w2"),
)


def cpu(source: str) -> list[tuple[bool, float]]:
    """(is an explain, CPU seconds) of each printing statement of the program run in a fresh session: the
    seconds since the printing statement before it (the statements between included) and its plain rendering."""
    from gradlang.core.session import Session
    from gradlang.render import to_plain

    out = []
    start = time.process_time()
    for result in Session().iter_run(source):
        if result is not None:
            to_plain(result)
        out.append((result is not None and result.kind == "explain", time.process_time() - start))
        start = time.process_time()
    return out


def slowest(source: str) -> tuple[float, float]:
    """(CPU seconds of the program's slowest explain, of the same statement without `explain`): the reference
    runs first, so the explain finds no cache warmed by it."""
    reference = cpu(without_explain(source))
    explained = cpu(source)
    seconds = [(t, reference[k][1] if k < len(reference) else 0.0) for k, (e, t) in enumerate(explained) if e]
    return max(seconds, default=(0.0, 0.0))


def without_explain(source: str) -> str:
    """The program with each `explain E` statement written `E`: the value alone, the reference."""
    return re.sub(r"^(\s*)explain\s+", r"\1", source, flags=re.MULTILINE)


def programs(words: list[str]) -> list[tuple[str, float, float]]:
    """(name, CPU seconds, reference seconds) of each program of every_program whose name holds a word."""
    from tests.explain.every_program import every_program

    out = []
    for name, source in every_program():
        if not words or any(w in name for w in words):
            out.append((name, *slowest(source)))
    return sorted(out, key=lambda row: -row[1])


def published() -> list[tuple[str, float, float]]:
    """(name, CPU seconds, reference seconds) of --explain-wrt on each published loss."""
    from gradlang.frameworks import translate
    from tests.frameworks.harness import in_examples

    out = []
    for kind, spec, shapes, wrt in PUBLISHED:
        with in_examples():
            program = translate(kind, spec, shapes=shapes, explain_wrt=(wrt,))
        out.append((f"{spec} wrt {wrt}", *slowest(program)))
    return out


def show(rows: list[tuple[str, float, float]]) -> None:
    for name, seconds, reference in rows:
        print(f"{seconds:7.2f} s  {reference:6.2f} s as grad  {name}", flush=True)


def main(argv: list[str]) -> int:
    top = int(argv[argv.index("--top") + 1]) if "--top" in argv else 20
    words = [a for k, a in enumerate(argv) if not a.startswith("--") and (k == 0 or argv[k - 1] != "--top")]
    if "--published" not in argv:
        rows = programs(words)
        print(f"{len(rows)} programs; the slowest explain of each, the {min(top, len(rows))} slowest:")
        show(rows[:top])
    if not words:
        print("--explain-wrt on the published losses:")
        show(published())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
