"""--from-jax and --from-torch: the user's own JAX function or PyTorch module written as a gradlang program.

tracing.py drives a translation (example arguments, header, the statements
that run); trace_jax.py walks a jaxpr with the rules of jax_rules.py;
trace_torch.py walks a torch.export graph with the rules of torch_rules.py;
both write through ops.py (the operations they share) into program.py's
Writer. The result is gradlang source text, which the shell runs through the
ordinary parser; nothing the user wrote is evaluated as gradlang.
"""

from gradlang.frameworks.program import TranslateError
from gradlang.frameworks.tracing import translate

__all__ = ["TranslateError", "translate"]
