"""A PyTorch loss gradlang cannot translate: a cumulative product has no gradlang spelling.

    gradlang --from-torch unsupported_torch:Running --shapes 'x=3'   # TranslateError at the cumprod's line
"""

import torch
from torch import nn


class Running(nn.Module):
    def forward(self, x):
        # the error points at the next line
        return torch.cumprod(torch.tanh(x), 0).sum()
