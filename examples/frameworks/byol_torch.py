"""BYOL and SimSiam losses in PyTorch: the target branch runs under torch.no_grad(), SimSiam's under .detach().

    gradlang --from-torch byol_torch:BYOL --shapes 'x=3' --explain-wrt online
"""

import torch
import torch.nn.functional as F
from torch import nn


class BYOL(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.online = nn.Linear(3, 2, bias=False)
        self.predictor = nn.Linear(2, 2)
        self.target = nn.Linear(3, 2, bias=False)

    def forward(self, x):
        prediction = self.predictor(torch.tanh(self.online(x)))
        with torch.no_grad():
            target = torch.tanh(self.target(x))
        return 2 - 2 * F.cosine_similarity(prediction, target, dim=0)


class SimSiam(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(1)
        self.encoder = nn.Linear(3, 3)
        self.predictor = nn.Linear(3, 3, bias=False)

    def forward(self, x1, x2):
        z1, z2 = torch.tanh(self.encoder(x1)), torch.tanh(self.encoder(x2))
        p1, p2 = self.predictor(z1), self.predictor(z2)
        return -(F.cosine_similarity(p1, z2.detach(), dim=0) + F.cosine_similarity(p2, z1.detach(), dim=0)) / 2


class BatchBYOL(nn.Module):
    """BYOL over a batch of rows: cosine_similarity along dim 1, the target under no_grad, averaged."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(8)
        self.online = nn.Linear(3, 2)
        self.target = nn.Linear(3, 2)

    def forward(self, X):
        prediction = self.online(X)
        with torch.no_grad():
            target = self.target(X)
        return (2 - 2 * F.cosine_similarity(prediction, target, dim=1)).mean() + torch.logsumexp(prediction, 1).mean()
