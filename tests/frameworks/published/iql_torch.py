"""Implicit Q-learning's three losses (gwthomas/IQL-PyTorch, src/iql.py: ImplicitQLearning.update, with
src/util.py mlp / Squeeze, src/value_functions.py TwinQ / ValueFunction, src/policy.py GaussianPolicy),
transcribed small: the target twin Q and the next value under torch.no_grad(), the expectile (asymmetric L2) value
loss torch.abs(tau - (u < 0).float()) * u**2, the Q loss against rewards + (1 - terminals.float()) * discount *
next_v.detach(), and the advantage-weighted policy loss torch.exp(beta * adv.detach()).clamp(max=EXP_ADV_MAX)
times the negative log-likelihood of a MultivariateNormal with scale_tril=torch.diag(std). The three losses,
stepped by three optimizers there, are summed here (one backward pass over the sum gives each its gradient)."""

import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import MultivariateNormal

EXP_ADV_MAX = 100.
LOG_STD_MIN = -5.0
LOG_STD_MAX = 2.0


class Squeeze(nn.Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return x.squeeze(dim=self.dim)


def mlp(dims, activation=nn.ReLU, output_activation=None, squeeze_output=False):
    n_dims = len(dims)
    assert n_dims >= 2, 'MLP requires at least two dims (input and output)'

    layers = []
    for i in range(n_dims - 2):
        layers.append(nn.Linear(dims[i], dims[i+1]))
        layers.append(activation())
    layers.append(nn.Linear(dims[-2], dims[-1]))
    if output_activation is not None:
        layers.append(output_activation())
    if squeeze_output:
        assert dims[-1] == 1
        layers.append(Squeeze(-1))
    net = nn.Sequential(*layers)
    net.to(dtype=torch.float32)
    return net


class TwinQ(nn.Module):
    def __init__(self, state_dim, action_dim, hidden_dim=4, n_hidden=2):
        super().__init__()
        dims = [state_dim + action_dim, *([hidden_dim] * n_hidden), 1]
        self.q1 = mlp(dims, squeeze_output=True)
        self.q2 = mlp(dims, squeeze_output=True)

    def both(self, state, action):
        sa = torch.cat([state, action], 1)
        return self.q1(sa), self.q2(sa)

    def forward(self, state, action):
        return torch.min(*self.both(state, action))


class ValueFunction(nn.Module):
    def __init__(self, state_dim, hidden_dim=4, n_hidden=2):
        super().__init__()
        dims = [state_dim, *([hidden_dim] * n_hidden), 1]
        self.v = mlp(dims, squeeze_output=True)

    def forward(self, state):
        return self.v(state)


class GaussianPolicy(nn.Module):
    def __init__(self, obs_dim, act_dim, hidden_dim=4, n_hidden=2):
        super().__init__()
        self.net = mlp([obs_dim, *([hidden_dim] * n_hidden), act_dim])
        self.log_std = nn.Parameter(torch.zeros(act_dim, dtype=torch.float32))

    def forward(self, obs):
        mean = self.net(obs)
        std = torch.exp(self.log_std.clamp(LOG_STD_MIN, LOG_STD_MAX))
        scale_tril = torch.diag(std)
        return MultivariateNormal(mean, scale_tril=scale_tril)


def asymmetric_l2_loss(u, tau):
    return torch.mean(torch.abs(tau - (u < 0).float()) * u**2)


class Loss(nn.Module):
    def __init__(self, state_dim=3, act_dim=2, tau=0.7, beta=3.0, discount=0.99):
        super().__init__()
        self.qf = TwinQ(state_dim, act_dim)
        self.q_target = copy.deepcopy(self.qf).requires_grad_(False)
        self.vf = ValueFunction(state_dim)
        self.policy = GaussianPolicy(state_dim, act_dim)
        self.tau = tau
        self.beta = beta
        self.discount = discount

    def forward(self, observations, actions, next_observations, rewards, terminals):
        with torch.no_grad():
            target_q = self.q_target(observations, actions)
            next_v = self.vf(next_observations)

        # Update value function
        v = self.vf(observations)
        adv = target_q - v
        v_loss = asymmetric_l2_loss(adv, self.tau)

        # Update Q function
        targets = rewards + (1. - terminals.float()) * self.discount * next_v.detach()
        qs = self.qf.both(observations, actions)
        q_loss = sum(F.mse_loss(q, targets) for q in qs) / len(qs)

        # Update policy
        exp_adv = torch.exp(self.beta * adv.detach()).clamp(max=EXP_ADV_MAX)
        policy_out = self.policy(observations)
        if isinstance(policy_out, torch.distributions.Distribution):
            bc_losses = -policy_out.log_prob(actions)
        elif torch.is_tensor(policy_out):
            assert policy_out.shape == actions.shape
            bc_losses = torch.sum((policy_out - actions)**2, dim=1)
        else:
            raise NotImplementedError
        policy_loss = torch.mean(exp_adv * bc_losses)
        return v_loss + q_loss + policy_loss


def example():
    g = torch.Generator().manual_seed(24)
    b = 4
    return (torch.randn(b, 3, generator=g, dtype=torch.float64), torch.randn(b, 2, generator=g, dtype=torch.float64),
            torch.randn(b, 3, generator=g, dtype=torch.float64), torch.randn(b, generator=g, dtype=torch.float64),
            torch.tensor([0.0, 0.0, 1.0, 0.0], dtype=torch.float64))
