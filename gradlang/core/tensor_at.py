"""Kept for one importer: core/tensor_explaining.py reads `components` here until explain evaluates a
statement once (issue #36, step 3). `at` is core/at.py; the components are expr/tensor/lower.py's."""

from gradlang.expr.tensor.lower import components  # noqa: F401
