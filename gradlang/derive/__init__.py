"""Derivatives: diff, grad, jacobian, hessian, blocked, and the reverse-mode DAG engine."""
