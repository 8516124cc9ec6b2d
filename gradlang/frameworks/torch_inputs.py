"""The torch importer's inputs: float64 while tracing, and a parameter exported under two names.

torch.export lists a sub-module registered twice (BYOL's backbone is `net` and `online_encoder.net`) once per
name, both the same tensor; torch's parameters() counts it once, so the program declares it once.
"""

from __future__ import annotations

from contextlib import contextmanager


@contextmanager
def float64(torch):
    """torch's default dtype is float64 while the user's module is built and traced, and is restored after."""
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        torch.set_default_dtype(before)


def shared(walker, node, earlier) -> None:
    """A parameter's second exported name reads the first name's leaf (its Value, its point, traced as it is);
    torch.autograd is asked by the first only (walker.same maps the second to the first)."""
    walker.same[node] = earlier
    walker.at[node], walker.start[node] = walker.at[earlier], walker.start[earlier]
    walker.env[node] = walker.env[earlier]
    if earlier in walker.traced:
        walker.traced.add(node)
