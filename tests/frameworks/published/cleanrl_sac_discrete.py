"""CleanRL's discrete SAC (vwxyzjn/cleanrl, cleanrl/sac_atari.py), transcribed small: the actor's
Categorical(logits=logits) with its .probs and F.log_softmax, the soft target under torch.no_grad() as the
expectation over the next state's action probabilities of the min of the twin target critics, the critics'
Q-values read with .gather(1, actions.long()), the actor loss against the min of the twin critics computed under
torch.no_grad(), and the autotuned temperature loss with action_probs.detach() and (log_pi +
target_entropy).detach(). The Atari conv encoders are stubbed as small MLPs; the sampled actions, which no loss
reads, are left out."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions.categorical import Categorical


class args:
    gamma = 0.99
    target_entropy_scale = 0.89


def layer_init(layer, bias_const=0.0):
    nn.init.kaiming_normal_(layer.weight)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


class SoftQNetwork(nn.Module):
    def __init__(self, obs_dim=3, n_actions=3):
        super().__init__()
        self.conv = nn.Sequential(layer_init(nn.Linear(obs_dim, 4)), nn.ReLU(), nn.Flatten())
        self.fc1 = layer_init(nn.Linear(4, 4))
        self.fc_q = layer_init(nn.Linear(4, n_actions))

    def forward(self, x):
        x = F.relu(self.conv(x / 255.0))
        x = F.relu(self.fc1(x))
        q_vals = self.fc_q(x)
        return q_vals


class Actor(nn.Module):
    def __init__(self, obs_dim=3, n_actions=3):
        super().__init__()
        self.conv = nn.Sequential(layer_init(nn.Linear(obs_dim, 4)), nn.ReLU(), nn.Flatten())
        self.fc1 = layer_init(nn.Linear(4, 4))
        self.fc_logits = layer_init(nn.Linear(4, n_actions))

    def forward(self, x):
        x = F.relu(self.conv(x))
        x = F.relu(self.fc1(x))
        logits = self.fc_logits(x)
        return logits

    def get_action(self, x):
        logits = self(x / 255.0)
        policy_dist = Categorical(logits=logits)
        action_probs = policy_dist.probs
        log_prob = F.log_softmax(logits, dim=1)
        return log_prob, action_probs


class Loss(nn.Module):
    def __init__(self, n_actions=3):
        super().__init__()
        self.actor = Actor()
        self.qf1 = SoftQNetwork()
        self.qf2 = SoftQNetwork()
        self.qf1_target = SoftQNetwork()
        self.qf2_target = SoftQNetwork()
        self.qf1_target.load_state_dict(self.qf1.state_dict())
        self.qf2_target.load_state_dict(self.qf2.state_dict())
        self.target_entropy = -args.target_entropy_scale * torch.log(1 / torch.tensor(n_actions))
        self.log_alpha = nn.Parameter(torch.zeros(1))

    def forward(self, observations, actions, next_observations, rewards, dones):
        alpha = self.log_alpha.exp().item()
        # CRITIC training
        with torch.no_grad():
            next_state_log_pi, next_state_action_probs = self.actor.get_action(next_observations)
            qf1_next_target = self.qf1_target(next_observations)
            qf2_next_target = self.qf2_target(next_observations)
            # we can use the action probabilities instead of MC sampling to estimate the expectation
            min_qf_next_target = next_state_action_probs * (
                torch.min(qf1_next_target, qf2_next_target) - alpha * next_state_log_pi
            )
            # adapt Q-target for discrete Q-function
            min_qf_next_target = min_qf_next_target.sum(dim=1)
            next_q_value = rewards.flatten() + (1 - dones.flatten()) * args.gamma * (min_qf_next_target)

        # use Q-values only for the taken actions
        qf1_values = self.qf1(observations)
        qf2_values = self.qf2(observations)
        qf1_a_values = qf1_values.gather(1, actions.long()).view(-1)
        qf2_a_values = qf2_values.gather(1, actions.long()).view(-1)
        qf1_loss = F.mse_loss(qf1_a_values, next_q_value)
        qf2_loss = F.mse_loss(qf2_a_values, next_q_value)
        qf_loss = qf1_loss + qf2_loss

        # ACTOR training
        log_pi, action_probs = self.actor.get_action(observations)
        with torch.no_grad():
            qf1_values = self.qf1(observations)
            qf2_values = self.qf2(observations)
            min_qf_values = torch.min(qf1_values, qf2_values)
        # no need for reparameterization, the expectation can be calculated for discrete actions
        actor_loss = (action_probs * ((alpha * log_pi) - min_qf_values)).mean()

        # re-use action probabilities for temperature loss
        alpha_loss = (action_probs.detach() * (-self.log_alpha.exp() * (log_pi + self.target_entropy).detach())).mean()
        return qf_loss + actor_loss + alpha_loss


def example():
    g = torch.Generator().manual_seed(27)
    b = 4
    return (255 * torch.rand(b, 3, generator=g, dtype=torch.float64), torch.tensor([[0], [2], [1], [2]]),
            255 * torch.rand(b, 3, generator=g, dtype=torch.float64), torch.randn(b, 1, generator=g, dtype=torch.float64),
            torch.tensor([[0.0], [0.0], [1.0], [0.0]], dtype=torch.float64))
