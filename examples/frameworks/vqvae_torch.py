"""The VQ-VAE quantiser in PyTorch, straight through with .detach(), and a softmax cross-entropy.

    gradlang --from-torch vqvae_torch:Quantiser --shapes 'z=3' --emit
    gradlang --from-torch vqvae_torch:Classifier --example-args vqvae_torch:labelled --emit
"""

import torch
import torch.nn.functional as F
from torch import nn


class Quantiser(nn.Module):
    def __init__(self, codes=4, width=3, beta=0.25):
        super().__init__()
        torch.manual_seed(2)
        self.codebook = nn.Parameter(torch.randn(codes, width))
        self.beta = beta

    def forward(self, z):
        distances = ((self.codebook - z) ** 2).sum(dim=1)
        k = torch.argmin(distances)
        e = self.codebook[k]
        quantised = z + (e - z).detach()
        codebook_loss = F.mse_loss(e, z.detach())
        commitment = F.mse_loss(z, e.detach())
        return (torch.tanh(quantised) ** 2).sum() + codebook_loss + self.beta * commitment


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(3)
        self.layer = nn.Linear(4, 3)

    def forward(self, x, label):
        logits = self.layer(x)
        return F.cross_entropy(logits, label) + 0.1 * F.smooth_l1_loss(logits, torch.zeros(2, 3))


def labelled():
    torch.manual_seed(4)
    return torch.randn(2, 4, dtype=torch.float64), torch.tensor([2, 0])
