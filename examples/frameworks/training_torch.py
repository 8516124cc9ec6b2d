"""Patterns of published PyTorch training losses, transcribed small (docs/from-frameworks.md): SAC's and TD3's
clipped double Q, MoCo v3's normalised keys from a momentum encoder, a cast, DINO's epoch, PPG's detached
features, a forward taking *args, random draws."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class ClippedDoubleQ(nn.Module):
    """SAC's critic target and actor loss: the smaller of two critics (torch.min of two tensors)."""

    def __init__(self):
        super().__init__()
        self.q1 = nn.Linear(3, 1)
        self.q2 = nn.Linear(3, 1)

    def forward(self, obs, next_obs, rewards):
        with torch.no_grad():
            min_q_next = torch.min(self.q1(next_obs), self.q2(next_obs))
            target = rewards + 0.99 * min_q_next.view(-1)
        q1, q2 = self.q1(obs).view(-1), self.q2(obs).view(-1)
        critic = F.mse_loss(q1, target) + F.mse_loss(q2, target)
        actor = -torch.min(self.q1(obs), self.q2(obs)).mean()
        return critic + actor + torch.maximum(q1, q2).mean() - torch.minimum(q1, q2.detach()).mean()


def tied():
    """Arguments where the two critics tie at every row (both q's the same function): the tie rule is met."""
    return {"a": torch.tensor([1.0, -2.0, 3.0]), "b": torch.tensor([1.0, -2.0, 0.5])}


def extremes(a, b):
    return torch.max(a, b).sum() + 2 * torch.min(a, b).sum() + 3 * torch.maximum(a, b).sum()


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        return F.relu(self.fc(x))


class MoCo(nn.Module):
    """MoCo v3's keys: normalised outputs of a momentum encoder under no_grad; the queries' ReLUs all off (one
    sample's, as the issue met it; here every sample's): all-zero rows under F.normalize."""

    def __init__(self):
        super().__init__()
        self.base = Encoder()
        self.momentum = Encoder()
        with torch.no_grad():
            self.base.fc.bias.fill_(-10.0)

    def forward(self, x):
        q = F.normalize(self.base(x), dim=1)
        with torch.no_grad():
            k = F.normalize(self.momentum(x), dim=1)
        return -(q * k).sum() + F.normalize(self.base(x), dim=1).sum()


def zero_row(v):
    return (F.normalize(v, dim=-1) * torch.arange(1.0, 4.0)).sum() + F.normalize(v[0] * 0.0, dim=0).sum()


def rows():
    return (torch.tensor([[0.0, 0.0, 0.0], [0.5, -1.0, 2.0]]),)


def cast(x):
    """A cast to float32 and back (Acme casts its TD error): the program keeps it as float32(…)."""
    return ((x.float() * 3).double() ** 2).sum() + x.to(torch.float32).sum()


class Sum(nn.Module):
    """forward(self, *args): every argument is an input."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, *args):
        return sum(torch.tanh(self.fc(a)).sum() for a in args)


class DINOLoss(nn.Module):
    """DINO's loss: the teacher's temperature picked by a plain Python int (the epoch) from a NumPy schedule."""

    def __init__(self):
        super().__init__()
        self.register_buffer("center", torch.zeros(1, 3))
        self.teacher_temp_schedule = np.concatenate((np.linspace(0.04, 0.07, 3), np.ones(7) * 0.07))

    def forward(self, student_output, teacher_output, epoch):
        temp = self.teacher_temp_schedule[epoch]
        teacher_out = F.softmax((teacher_output - self.center) / temp, dim=-1)
        teacher_out = teacher_out.detach()
        loss = torch.sum(-teacher_out * F.log_softmax(student_output / 0.1, dim=-1), dim=-1)
        return loss.mean()


def dino_args():
    return (torch.linspace(-1.0, 1.0, 6).reshape(2, 3), torch.linspace(1.0, -0.5, 6).reshape(2, 3), 1)


class PPG(nn.Module):
    """PPG's auxiliary phase: the value head reads detached features from a helper method."""

    def __init__(self):
        super().__init__()
        self.body = nn.Linear(3, 4)
        self.head = nn.Linear(4, 1)

    def features(self, x):
        hidden = torch.tanh(self.body(x))
        return hidden.detach()

    def forward(self, x):
        return (self.head(self.features(x)) ** 2).mean() + (torch.tanh(self.body(x)) ** 2).mean()


class Noisy(nn.Module):
    """A random draw in the forward: a named data input of the program."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        noise = torch.randn(2)
        return ((self.fc(x) + noise) ** 2).sum()


def half(x):
    """A cast to float16: gradlang keeps float32 casts only, so it is refused at this line."""
    return x.half().double().sum()


def numpy_drawn():
    """Example arguments drawn from NumPy's global generator: the same on every run (it is seeded)."""
    return (np.random.randn(3),)


def hinge(x):
    """A clamp whose input meets its bound at the traced point (x = 0 for the first entry)."""
    return (x.clamp(min=0.0) ** 2).sum() + torch.clamp(x, max=0.5).sum() + F.relu(x).clamp_min(0.0).sum()


def at_bounds():
    return (torch.tensor([0.0, 0.5, -1.0, 2.0]),)


def bare_norm(v):
    """A norm not clamped, at a zero vector: PyTorch's gradient is 0 there, gradlang's NaN: refused at this line."""
    return torch.linalg.vector_norm(v * torch.tensor([0.0, 1.0, 1.0]) - torch.tensor([0.0, 0.5, 0.5]))


def halves():
    return (torch.tensor([3.0, 0.5, 0.5]),)


def gumbel_soft(logits):
    """A soft Gumbel-softmax sample (its noise is -log of an exponential_ draw inside F.gumbel_softmax)."""
    return (F.gumbel_softmax(logits, tau=0.5) * torch.arange(3.0)).sum()


class RowScaled(nn.Module):
    """A write through a view whose base is read after it: y[0] tripled in place, then all of y read."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        y = self.fc(x)
        row = y[0]
        row.mul_(3.0)
        return (y * y).sum()


class EMABuffer(nn.Module):
    """A buffer updated in place through .data (an EMA, as VQ-VAE-2's codebook), then read: its new numbers,
    no gradient through it (torch records none through .data)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.register_buffer("avg", torch.ones(2))

    def forward(self, x):
        h = self.fc(x)
        self.avg.data.mul_(0.9).add_(h.sum(0), alpha=0.1)
        return (h * self.avg).sum()


class SharedBackbone(nn.Module):
    """One sub-module registered under two names (BYOL's `net` and `online_encoder.net`): one set of leaves."""

    def __init__(self):
        super().__init__()
        self.net = nn.Linear(3, 2)
        self.wrapper = nn.Sequential(self.net, nn.Tanh())

    def forward(self, x):
        return self.wrapper(x).sum()


class UnreadDetach(nn.Module):
    """A forward computing values the loss never reads (an actor-critic's logged probabilities and a detached
    copy kept for a metric) beside a detached baseline it does read."""

    def __init__(self):
        super().__init__()
        self.net = nn.Linear(3, 3)

    def forward(self, x):
        h = torch.tanh(self.net(x))
        logged = F.softmax(h.detach(), dim=0)  # for a metric: never read by the loss
        with torch.no_grad():
            peak = h.max()
        shown = peak * 2  # for a log line: never read by the loss
        baseline = h.detach().mean()
        return ((h - baseline) ** 2).sum()
