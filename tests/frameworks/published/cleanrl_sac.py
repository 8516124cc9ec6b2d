"""CleanRL's SAC losses (vwxyzjn/cleanrl, cleanrl/sac_continuous_action.py), transcribed small: twin soft Q
networks on torch.cat([x, a], 1), the actor's tanh-squashed Gaussian with its log-prob correction (log_prob -=
in place), the target under torch.no_grad() with torch.min of the twin targets, the actor loss with torch.min of
the twin critics, alpha = log_alpha.exp().item(), and the autotuned temperature loss. The policy's noise (what
rsample draws) is passed in as data."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class args:
    gamma = 0.99


class SoftQNetwork(nn.Module):
    def __init__(self, obs_dim=3, act_dim=2):
        super().__init__()
        self.fc1 = nn.Linear(obs_dim + act_dim, 4)
        self.fc2 = nn.Linear(4, 4)
        self.fc3 = nn.Linear(4, 1)

    def forward(self, x, a):
        x = torch.cat([x, a], 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


LOG_STD_MAX = 2
LOG_STD_MIN = -5


class Actor(nn.Module):
    def __init__(self, obs_dim=3, act_dim=2):
        super().__init__()
        self.fc1 = nn.Linear(obs_dim, 4)
        self.fc2 = nn.Linear(4, 4)
        self.fc_mean = nn.Linear(4, act_dim)
        self.fc_logstd = nn.Linear(4, act_dim)
        # action rescaling
        self.register_buffer("action_scale", torch.tensor([1.0, 2.0], dtype=torch.float32))
        self.register_buffer("action_bias", torch.tensor([0.0, 0.5], dtype=torch.float32))

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        mean = self.fc_mean(x)
        log_std = self.fc_logstd(x)
        log_std = torch.tanh(log_std)
        log_std = LOG_STD_MIN + 0.5 * (LOG_STD_MAX - LOG_STD_MIN) * (log_std + 1)  # From SpinUp / Denis Yarats
        return mean, log_std

    def get_action(self, x, noise):
        mean, log_std = self(x)
        std = log_std.exp()
        normal = torch.distributions.Normal(mean, std)
        x_t = mean + std * noise  # for reparameterization trick (mean + std * N(0,1)): normal.rsample()
        y_t = torch.tanh(x_t)
        action = y_t * self.action_scale + self.action_bias
        log_prob = normal.log_prob(x_t)
        # Enforcing Action Bound
        log_prob -= torch.log(self.action_scale * (1 - y_t.pow(2)) + 1e-6)
        log_prob = log_prob.sum(1, keepdim=True)
        mean = torch.tanh(mean) * self.action_scale + self.action_bias
        return action, log_prob, mean


class Loss(nn.Module):
    def __init__(self):
        super().__init__()
        self.actor = Actor()
        self.qf1 = SoftQNetwork()
        self.qf2 = SoftQNetwork()
        self.qf1_target = SoftQNetwork()
        self.qf2_target = SoftQNetwork()
        self.qf1_target.load_state_dict(self.qf1.state_dict())
        self.qf2_target.load_state_dict(self.qf2.state_dict())
        self.target_entropy = -2.0
        self.log_alpha = nn.Parameter(torch.zeros(1))

    def forward(self, observations, actions, next_observations, rewards, dones, next_noise, noise, noise2):
        alpha = self.log_alpha.exp().item()
        with torch.no_grad():
            next_state_actions, next_state_log_pi, _ = self.actor.get_action(next_observations, next_noise)
            qf1_next_target = self.qf1_target(next_observations, next_state_actions)
            qf2_next_target = self.qf2_target(next_observations, next_state_actions)
            min_qf_next_target = torch.min(qf1_next_target, qf2_next_target) - alpha * next_state_log_pi
            next_q_value = rewards.flatten() + (1 - dones.flatten()) * args.gamma * (min_qf_next_target).view(-1)

        qf1_a_values = self.qf1(observations, actions).view(-1)
        qf2_a_values = self.qf2(observations, actions).view(-1)
        qf1_loss = F.mse_loss(qf1_a_values, next_q_value)
        qf2_loss = F.mse_loss(qf2_a_values, next_q_value)
        qf_loss = qf1_loss + qf2_loss

        pi, log_pi, _ = self.actor.get_action(observations, noise)
        qf1_pi = self.qf1(observations, pi)
        qf2_pi = self.qf2(observations, pi)
        min_qf_pi = torch.min(qf1_pi, qf2_pi)
        actor_loss = ((alpha * log_pi) - min_qf_pi).mean()

        with torch.no_grad():
            _, log_pi, _ = self.actor.get_action(observations, noise2)
        alpha_loss = (-self.log_alpha.exp() * (log_pi + self.target_entropy)).mean()
        return qf_loss + actor_loss + alpha_loss


def example():
    g = torch.Generator().manual_seed(4)
    b = 4

    def r(*s):
        return torch.randn(*s, generator=g, dtype=torch.float64)

    return (r(b, 3), r(b, 2).clamp(-1, 1), r(b, 3), r(b, 1), torch.tensor([[0.0], [1.0], [0.0], [0.0]],
            dtype=torch.float64), r(b, 2), r(b, 2), r(b, 2))
