"""Resource limits: the bounds that keep any input from hanging or exhausting memory.

Each is checked at the place that could blow up, and exceeding it raises a
`LimitError` at the offending source position. The numbers are generous for
teaching-sized programs and documented in docs/limits.md.
"""

MAX_SOURCE_CHARS = 1_000_000    # characters of one program (a file, a cell, a line pasted)
MAX_TYPED_CHARS = 5_000         # characters typed key by key into one REPL input (shell/typed.py)
MAX_STATEMENTS = 10_000         # statements of one program
MAX_SOURCE_NESTING = 200        # open ( and [ at once
MAX_TREE_DEPTH = 400            # depth of the parse tree after parsing
MAX_ELEMENTS = 100_000          # components of one vector or matrix value
MAX_TENSOR_ELEMENTS = 16_777_216  # components of one declared tensor (4096×4096, 128 MiB of float64 numbers)
MAX_ROW_ARGUMENTS = 4_000_000   # arguments a row-wise function's components hold (softmax of n: n², core/builtins.py)
MAX_NUMERIC_POINTS = 1_000_000  # points of linspace / elementwise evaluation
MAX_GRADCHECK_CELLS = 20_000_000  # numbers gradcheck's finite differences evaluate at once (160 MB)
MAX_MATMUL_PRODUCTS = 125_000  # products of entries one symbolic matrix product builds (50×50 @ 50×50)
MAX_INTEGER_BITS = 100_000      # size of an exact integer power (about 30 000 digits)
MAX_DERIVATIVE_ORDER = 100      # n in diff(e, x, n), summed over all variables
MAX_DERIVATIVE_NODES = 20_000   # distinct subexpressions a derivative may add before it is differentiated again
NAMED_PARTS_ABOVE = 2_000       # tree nodes above which a result is shown as t1 = …, t2 = …
MAX_LAID_OUT_COMPONENTS = 400  # components of a value the pretty format lays out in 2-D (else one line)
MAX_ORDERED_TERMS = 256        # terms of a sum printed in polynomial order (a longer one keeps its own)
MAX_EXPLAINED_TREE_NODES = 100_000  # tree nodes of an expression explain derives step by step (core/explaining.py)
MAX_PRINTED_NODES = 200_000     # nodes of a result written out, with its shared parts named
MAX_CALL_DEPTH = 100            # nested calls of user functions (recursion)
MAX_USER_CALLS = 10_000         # calls of user functions in one statement (f2(y) = f1(f1(y)), … doubles them)
STATEMENT_TIME_LIMIT = 60.0     # CPU seconds of a statement's thread (budget.py), where a timer can be set
SIMPLIFY_MAX_NODES = 500        # tree nodes of a component that simplify/expand/factor will rewrite
MAX_EXPANDED_TERMS = 10_000     # terms a component of simplify/expand/factor may multiply out to (expr/bounded.py)
DECIDED_COMPARISON_NODES = 500  # tree nodes of a comparison SymPy decides before numbers are given (expr/walk.py)
BLOCKED_SIMPLIFY_WORK = 4_500   # nodes times generators of a component blocked() simplifies (expr/bounded.py)
BLOCKED_SIMPLIFY_SYMBOLS = 6    # symbols of a component blocked() simplifies (expr/bounded.py)
MAX_SYMBOLIC_MATRIX_ORDER = 5   # n of an n×n matrix of symbols under det, logdet, inv (the formula has n! terms)
MAX_EXACT_MATRIX_ORDER = 100   # n of an n×n matrix of integers or rationals under det, logdet, inv
MAX_TRANSLATED_STATEMENTS = 200  # bindings of a --from-jax/--from-torch program (frameworks/program.py)
MAX_LOAD_BYTES = 8 * MAX_TENSOR_ELEMENTS + 4096  # bytes of a file load() reads (an .npz member too, uncompressed)
MAX_LOAD_ELEMENTS = MAX_TENSOR_ELEMENTS  # numbers of one loaded array (its float64 copy: 128 MiB), as a declared tensor
MAX_EVALUATION_BYTES = 2 * 1024 ** 3  # bytes of the arrays one whole-array evaluation holds at once (given, made, result)
MAX_LOADED_BYTES = MAX_EVALUATION_BYTES  # bytes of the float64 arrays load() gives in one statement, together
MAX_NUMERIC_PRODUCTS = 10_000_000_000  # multiply-adds of the @, inv and det one whole-array evaluation computes
