"""The command-line options every long fuzz run shares: how many programs, from which seed, how deep, where to."""

from __future__ import annotations

import argparse


def fuzz_parser(doc: str, programs: int, seed: int, out: str) -> argparse.ArgumentParser:
    """A parser with --programs, --seed, --depth and --out, described by the first line of the script's doc."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--programs", type=int, default=programs)
    parser.add_argument("--seed", type=int, default=seed)
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--out", default=out)
    return parser
