"""The stop ledger: one entry per stop (the path it cuts, the adjoint arriving, what it removes, its
verdict), by components or at the tensor level, decided symbolically or at seeded random points, and
put into words once for every format.
"""
