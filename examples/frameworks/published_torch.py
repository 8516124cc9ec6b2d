"""Published PyTorch losses as their authors write them, transcribed small (docs/from-frameworks.md, issue #39):
SwAV's Sinkhorn codes with in-place updates, a SAC actor with torch.distributions, a BYOL projector with batch
norm, a layer- and group-normalised head, a hard Gumbel quantiser."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal, kl_divergence


def sinkhorn(scores, iterations=3, epsilon=0.05):
    """SwAV's equal-partition codes: rows and columns of exp(scores / eps) normalised in turn, in place."""
    Q = torch.exp(scores / epsilon).t()
    K, B = Q.shape
    Q /= torch.sum(Q)
    for _ in range(iterations):
        Q /= torch.sum(Q, dim=1, keepdim=True)
        Q /= K
        Q /= torch.sum(Q, dim=0, keepdim=True)
        Q /= B
    Q *= B
    return Q.t()


class SwAV(nn.Module):
    """Swapped prediction: each view's codes (no gradient) are the targets of the other view's scores."""

    def __init__(self):
        super().__init__()
        self.head = nn.Sequential(nn.Linear(3, 3), nn.ReLU(inplace=True))
        self.proj = nn.Linear(3, 3)
        self.prototypes = nn.Linear(3, 4, bias=False)

    def forward(self, x1, x2):
        h1, h2 = self.head(x1), self.head(x2)
        z1, z2 = self.proj(h1), self.proj(h2)
        z1 += 0.1 * h1
        z1 = z1 / z1.norm(dim=1, keepdim=True).clamp(min=1e-6)
        z2 = F.normalize(z2, dim=1)
        s1, s2 = self.prototypes(z1), self.prototypes(z2)
        with torch.no_grad():
            q1, q2 = sinkhorn(s1), sinkhorn(s2)
        s1.div_(0.1)
        s2 /= 0.1
        p1, p2 = F.log_softmax(s1, dim=1), F.log_softmax(s2, dim=1)
        return -0.5 * (torch.sum(q1 * p2, dim=1).mean() + torch.sum(q2 * p1, dim=1).mean())


class SACActor(nn.Module):
    """A SAC actor and temperature loss with a Gaussian policy (reparameterised) and a KL to a unit prior."""

    def __init__(self):
        super().__init__()
        self.mu = nn.Linear(3, 2)
        self.log_std = nn.Linear(3, 2)
        self.q = nn.Linear(2, 1)
        self.log_alpha = nn.Parameter(torch.tensor(-1.0))

    def forward(self, obs):
        log_std = self.log_std(obs)
        log_std.clamp_(-5.0, 2.0)
        mu, std = self.mu(obs), log_std.exp()
        policy = Normal(mu, std)
        action = policy.rsample()
        log_prob = policy.log_prob(action).sum(-1)
        q = self.q(torch.tanh(action)).squeeze(-1)
        alpha = self.log_alpha.exp().detach()
        actor = (alpha * log_prob - q).mean()
        temperature = -(self.log_alpha * (log_prob + 2.0).detach()).mean()
        prior = Normal(torch.zeros_like(mu), torch.ones_like(std))
        return actor + temperature + 0.01 * kl_divergence(policy, prior).sum(-1).mean()


class BYOLProjector(nn.Module):
    """BYOL's projector (Linear, BatchNorm1d in training mode, ReLU) on both branches; the target's output stopped."""

    def __init__(self):
        super().__init__()
        self.online = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 2))
        self.target = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 2))

    def forward(self, x1, x2):
        p = F.normalize(self.online(x1), dim=-1)
        z = F.normalize(self.target(x2), dim=-1).detach()
        return (2 - 2 * (p * z).sum(dim=-1)).mean()


class FrozenStats(BYOLProjector):
    """The same projector in eval mode: batch norm reads its running statistics, constants of the program."""

    def __init__(self):
        super().__init__()
        self.eval()


class NormHead(nn.Module):
    """A transformer-style head: LayerNorm, F.layer_norm without affine, GroupNorm; a stopped baseline."""

    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(4)
        self.gn = nn.GroupNorm(2, 4)
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = self.fc(self.ln(x))
        h = self.gn(torch.tanh(h))
        g = F.layer_norm(h, (4,), eps=1e-5)
        baseline = g.mean().detach()
        return ((g - baseline) ** 2 * torch.arange(4.0)).sum()


class GumbelQuantiser(nn.Module):
    """A discrete bottleneck: hard Gumbel-softmax codes (straight through) pick code vectors for one sample."""

    def __init__(self):
        super().__init__()
        self.logits = nn.Linear(3, 4)
        self.codebook = nn.Linear(4, 2, bias=False)

    def forward(self, x):
        codes = F.gumbel_softmax(self.logits(x), tau=0.7, hard=True)
        return (self.codebook(codes) ** 2).sum()


class GumbelBatch(GumbelQuantiser):
    """The same quantiser over a batch of samples: a one-hot row per sample."""


class Scattered(nn.Module):
    """A scatter that is not a one-hot at an argmax: refused at its line."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        h = self.fc(x)
        index = torch.tensor([2, 0, 1])
        return torch.zeros(3).scatter(0, index, h).pow(2).sum()


def scaled_in_place(obs, q):
    """A DQN-style input scaled in place (obs /= 255.0) before it is read."""
    obs /= 255.0
    obs.clamp_(0.0, 1.0)
    return ((obs @ q) ** 2).sum()


def pixels():
    """Observations in 0..255 and a linear read-out."""
    return torch.tensor([[12.0, 200.0, 250.0], [0.5, 64.0, 128.0]]), torch.tensor([0.3, -0.2, 0.5])


def view_written(x):
    """An in-place write through a view (a row of y) with y read after it: y at the entries the write reached."""
    y = x * 2.0
    row = y[0]
    row.mul_(3.0)
    return (y ** 2).sum()


class ImageNorm(nn.Module):
    """BatchNorm2d over (batch, channels, height, width): more than two axes, refused at the user's line."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 8)
        self.bn = nn.BatchNorm2d(2)

    def forward(self, x):
        return self.bn(self.fc(x).view(-1, 2, 2, 2)).pow(2).sum()


class VQCodes(nn.Module):
    """A VQ-VAE's codes as a one-hot written by index (one_hot[arange(b), codes] = 1), straight through."""

    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(3, 2)
        self.codebook = nn.Parameter(torch.tensor([[0.5, -0.5], [0.0, 1.0], [-1.0, 0.25], [1.0, 1.0]]))

    def forward(self, x):
        z = self.encoder(x)
        distances = (z.unsqueeze(1) - self.codebook.unsqueeze(0)).pow(2).sum(-1) if z.dim() == 1 else (
            (z ** 2).sum(1, keepdim=True) - 2 * z @ self.codebook.t() + (self.codebook ** 2).sum(1))
        codes = distances.argmin(1)
        one_hot = torch.zeros_like(distances)
        one_hot[torch.arange(z.shape[0]), codes] = 1.0
        quantised = one_hot @ self.codebook
        return ((z - quantised.detach()) ** 2).sum() + ((quantised - z.detach()) ** 2).sum()
