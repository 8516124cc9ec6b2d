"""Losses of reinforcement learning in PyTorch: a TD target under no_grad, an actor-critic, a hard Gumbel-softmax.

    gradlang --from-torch rl_torch:TD --shapes 's=3 s2=3' --emit
"""

import torch
import torch.nn.functional as F
from torch import nn

GAMMA, REWARD, ACTION = 0.9, 1.0, 1


class TD(nn.Module):
    """Q-learning: the target is computed without a graph, as DQN's training loops do."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(5)
        self.q = nn.Linear(3, 2, bias=False)

    def forward(self, s, s2):
        with torch.no_grad():
            target = REWARD + GAMMA * self.q(s2).max()
        return F.smooth_l1_loss(self.q(s)[ACTION], target)


class ActorCritic(nn.Module):
    """One-step actor-critic: the advantage is detached in the policy term, not in the value term."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(6)
        self.policy = nn.Linear(3, 2)
        self.value = nn.Linear(3, 1)

    def forward(self, s, s2):
        advantage = REWARD + GAMMA * self.value(s2).squeeze(-1).detach() - self.value(s).squeeze(-1)
        log_pi = F.log_softmax(self.policy(s), dim=-1)[ACTION]
        return -log_pi * advantage.detach() + 0.5 * advantage ** 2


class GumbelHard(nn.Module):
    """Straight-through Gumbel-softmax (the hard=True path of F.gumbel_softmax), noise given as an input."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(7)
        self.logits = nn.Parameter(torch.randn(3))
        self.w = nn.Parameter(torch.randn(3))

    def forward(self, g):
        soft = F.softmax((self.logits + g) / 0.5, dim=-1)
        hard = F.one_hot(soft.argmax(), 3).to(soft.dtype)
        sample = hard - soft.detach() + soft
        return (sample * self.w).sum() ** 2


class DQNBatch(nn.Module):
    """DQN over a batch: Q(s, a) by gather with the actions, the target under no_grad, Huber loss."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(9)
        self.q = nn.Linear(4, 3)

    def forward(self, S, actions, S2):
        q = self.q(S).gather(1, actions.unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            target = REWARD + GAMMA * self.q(S2).max(dim=1).values
        return F.smooth_l1_loss(q, target)


def batch():
    torch.manual_seed(10)
    return torch.randn(3, 4, dtype=torch.float64), torch.tensor([0, 2, 1]), torch.randn(3, 4, dtype=torch.float64)
