"""What an expression is: shapes, primitives, stop_gradient, exact arithmetic, DAG walks, compiled NumPy."""
