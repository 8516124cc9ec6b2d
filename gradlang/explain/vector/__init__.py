"""Vector-level derivations by identity (the softmax Jacobian, an elementwise Jacobian, the sigmoid
cross-entropy, stopped weights): derived once in vector form where a gradient is not a tensor formula.
"""
