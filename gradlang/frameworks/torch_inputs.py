"""The torch importer's inputs: float64 while tracing, a parameter exported under two names, Python numbers
among the arguments (constants), torch.distributions' value checks off while exporting.

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


@contextmanager
def unvalidated(torch):
    """torch.distributions' argument checks off while exporting: they test values (`support.check(value).all()`),
    which torch.export cannot trace, and they change no number of the loss."""
    distribution = torch.distributions.Distribution
    before = distribution._validate_args
    distribution.set_default_validate_args(False)
    try:
        yield
    finally:
        distribution.set_default_validate_args(before)


def is_number(value) -> bool:
    """A plain Python number (DINO's epoch, a temperature): fixed at its value, never a tensor input."""
    return isinstance(value, (int, float))  # bool and NumPy's float64 are among them


@contextmanager
def numbers_fixed(module, numbers: dict, count: int):
    """While exporting, the module's forward takes only its tensors; the Python numbers are passed as given
    (torch.export would make an int a symbolic size, which a NumPy array cannot be indexed by)."""
    if not numbers:
        yield
        return
    forward = module.forward

    def with_numbers(*tensors):
        given = iter(tensors)
        return forward(*[numbers[i] if i in numbers else next(given) for i in range(count)])

    own = module.__dict__.get("forward")  # a forward set on the instance itself, put back as it was
    module.forward = with_numbers
    try:
        yield
    finally:
        if own is None:
            del module.forward
        else:
            module.forward = own
