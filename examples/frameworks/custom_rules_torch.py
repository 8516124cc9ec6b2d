"""A straight-through rounding written as a torch.autograd.Function.

    gradlang --from-torch custom_rules_torch:Quantised --shapes 'x=3' --emit
The export keeps only the forward (a round); the program's header says that the
Function's backward (the identity) is not read. Written with .detach() instead
(`x + (torch.round(x) - x).detach()`, the Plain module), the estimator is kept.
"""

import torch
from torch import nn


class RoundThrough(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.round(x)

    @staticmethod
    def backward(ctx, grad):
        return grad


class Quantised(nn.Module):
    def forward(self, x):
        return (RoundThrough.apply(x) * x).sum()


class Plain(nn.Module):
    def forward(self, x):
        return ((x + (torch.round(x) - x).detach()) * x).sum()
