"""SymPy's own cache between sessions: emptied before a full cache can let part of a formula go.

Called by core/session.py when a Session is made (a program run in a new session, as a fuzzer or a test
suite runs one after another). docs/decisions.md
("A statement run again reuses what it read") has the decision; benchmarks/FUZZ.md the measurements.
"""

from __future__ import annotations

from sympy.core.cache import CACHE, clear_cache

FORMULA_CACHE_ENTRIES = 500  # entries of one of SymPy's cached constructors past which it is emptied between statements


def forget_earlier_formulas() -> None:
    """Empty SymPy's cache when a session starts once one of its constructors' caches is half full.

    SymPy's cache (an LRU of 1,000 entries per function, cacheit) finds a key by its hash, then `==`. When
    the sums' cache is full it lets the oldest go, and an old power whose base was one of them stays in
    the powers' cache: a statement that builds that base again builds it apart, and the lookup of its
    power compares the two bases path by path, exponential in a shared formula (30 nested softmaxes,
    hostile seed 9535: 0.13 s alone, past the 120 s limit after 234 other programs in the process).
    Emptied when a session starts, an earlier program's formulas leave the cache all at once. Not between
    the statements of one session: a later statement builds again parts of the formulas the earlier ones
    bound, and SymPy's cache is what makes those one object; emptied between statements, the copies are
    compared part by part (a traced I-JEPA loss's explain: 17 s of CPU, 40 s emptied between statements).
    The bound is by entries, never by clock."""
    if any(_half_full(cached) for cached in _constructors()):
        clear_cache()


def _constructors() -> list:
    """SymPy's cached __new__s (sums, products, powers, functions, numbers), found on first use."""
    if not _CONSTRUCTORS:
        _CONSTRUCTORS.extend(cached for cached in CACHE if cached.__name__ == "__new__")
    return _CONSTRUCTORS


def _half_full(cached) -> bool:
    """Whether a cache holds FORMULA_CACHE_ENTRIES, or half its own bound (SYMPY_CACHE_SIZE), if that is less."""
    info = cached.cache_info()
    bound = FORMULA_CACHE_ENTRIES if info.maxsize is None else min(FORMULA_CACHE_ENTRIES, info.maxsize // 2)
    return info.currsize >= bound


_CONSTRUCTORS: list = []
