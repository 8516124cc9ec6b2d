"""Conservative Q-learning's SAC losses (young-geng/CQL, SimpleSAC/conservative_sac.py: ConservativeSAC.train, with
SimpleSAC/model.py extend_and_repeat, multiple_action_q_function, FullyConnectedNetwork, ReparameterizedTanhGaussian,
TanhGaussianPolicy, FullyConnectedQFunction and Scalar), transcribed small: the tanh-Gaussian policy as a
TransformedDistribution(Normal, TanhTransform(cache_size=1)) sampled with rsample, the temperature loss with
(log_pi + target_entropy).detach(), the TD target detached in F.mse_loss(q1_pred, td_target.detach()), and the
CQL regulariser: uniform random actions drawn with new_empty(…).uniform_(-1, 1), the policy's current and next
actions repeated over the batch (rank-3 actions, reshaped by the Q-function's decorator) and detached, their
Q-values concatenated with torch.cat and importance-weighted, torch.logsumexp at temperature cql_temp, torch.std
of the concatenation (logged there), and the clamped difference from the data's Q-value. The three losses,
stepped by three optimizers there, are summed here. Networks are small ('4-4'); the draws are PyTorch's, as
written."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal
from torch.distributions.transformed_distribution import TransformedDistribution
from torch.distributions.transforms import TanhTransform


class config:
    discount = 0.99
    alpha_multiplier = 1.0
    target_entropy = -2.0
    backup_entropy = False
    cql_n_actions = 2
    cql_importance_sample = True
    cql_temp = 1.0
    cql_min_q_weight = 5.0
    cql_clip_diff_min = -np.inf
    cql_clip_diff_max = np.inf


def extend_and_repeat(tensor, dim, repeat):
    # Extend and repeast the tensor along dim axie and repeat it
    ones_shape = [1 for _ in range(tensor.ndim + 1)]
    ones_shape[dim] = repeat
    return torch.unsqueeze(tensor, dim) * tensor.new_ones(ones_shape)


def multiple_action_q_function(forward):
    # Forward the q function with multiple actions on each state, to be used as a decorator
    def wrapped(self, observations, actions, **kwargs):
        multiple_actions = False
        batch_size = observations.shape[0]
        if actions.ndim == 3 and observations.ndim == 2:
            multiple_actions = True
            observations = extend_and_repeat(observations, 1, actions.shape[1]).reshape(-1, observations.shape[-1])
            actions = actions.reshape(-1, actions.shape[-1])
        q_values = forward(self, observations, actions, **kwargs)
        if multiple_actions:
            q_values = q_values.reshape(batch_size, -1)
        return q_values
    return wrapped


class FullyConnectedNetwork(nn.Module):

    def __init__(self, input_dim, output_dim, arch='4-4', orthogonal_init=False):
        super().__init__()
        self.input_dim = input_dim
        self.output_dim = output_dim
        self.arch = arch
        self.orthogonal_init = orthogonal_init

        d = input_dim
        modules = []
        hidden_sizes = [int(h) for h in arch.split('-')]

        for hidden_size in hidden_sizes:
            fc = nn.Linear(d, hidden_size)
            if orthogonal_init:
                nn.init.orthogonal_(fc.weight, gain=np.sqrt(2))
                nn.init.constant_(fc.bias, 0.0)
            modules.append(fc)
            modules.append(nn.ReLU())
            d = hidden_size

        last_fc = nn.Linear(d, output_dim)
        if orthogonal_init:
            nn.init.orthogonal_(last_fc.weight, gain=1e-2)
        else:
            nn.init.xavier_uniform_(last_fc.weight, gain=1e-2)

        nn.init.constant_(last_fc.bias, 0.0)
        modules.append(last_fc)
        self.network = nn.Sequential(*modules)

    def forward(self, input_tensor):
        return self.network(input_tensor)


class ReparameterizedTanhGaussian(nn.Module):

    def __init__(self, log_std_min=-20.0, log_std_max=2.0, no_tanh=False):
        super().__init__()
        self.log_std_min = log_std_min
        self.log_std_max = log_std_max
        self.no_tanh = no_tanh

    def forward(self, mean, log_std, deterministic=False):
        log_std = torch.clamp(log_std, self.log_std_min, self.log_std_max)
        std = torch.exp(log_std)

        if self.no_tanh:
            action_distribution = Normal(mean, std)
        else:
            action_distribution = TransformedDistribution(
                Normal(mean, std), TanhTransform(cache_size=1)
            )

        if deterministic:
            action_sample = torch.tanh(mean)
        else:
            action_sample = action_distribution.rsample()

        log_prob = torch.sum(
            action_distribution.log_prob(action_sample), dim=-1
        )

        return action_sample, log_prob


class TanhGaussianPolicy(nn.Module):

    def __init__(self, observation_dim, action_dim, arch='4-4',
                 log_std_multiplier=1.0, log_std_offset=-1.0,
                 orthogonal_init=False, no_tanh=False):
        super().__init__()
        self.observation_dim = observation_dim
        self.action_dim = action_dim
        self.arch = arch
        self.orthogonal_init = orthogonal_init
        self.no_tanh = no_tanh

        self.base_network = FullyConnectedNetwork(
            observation_dim, 2 * action_dim, arch, orthogonal_init
        )
        self.log_std_multiplier = Scalar(log_std_multiplier)
        self.log_std_offset = Scalar(log_std_offset)
        self.tanh_gaussian = ReparameterizedTanhGaussian(no_tanh=no_tanh)

    def forward(self, observations, deterministic=False, repeat=None):
        if repeat is not None:
            observations = extend_and_repeat(observations, 1, repeat)
        base_network_output = self.base_network(observations)
        mean, log_std = torch.split(base_network_output, self.action_dim, dim=-1)
        log_std = self.log_std_multiplier() * log_std + self.log_std_offset()
        return self.tanh_gaussian(mean, log_std, deterministic)


class FullyConnectedQFunction(nn.Module):

    def __init__(self, observation_dim, action_dim, arch='4-4', orthogonal_init=False):
        super().__init__()
        self.observation_dim = observation_dim
        self.action_dim = action_dim
        self.arch = arch
        self.orthogonal_init = orthogonal_init
        self.network = FullyConnectedNetwork(
            observation_dim + action_dim, 1, arch, orthogonal_init
        )

    @multiple_action_q_function
    def forward(self, observations, actions):
        input_tensor = torch.cat([observations, actions], dim=-1)
        return torch.squeeze(self.network(input_tensor), dim=-1)


class Scalar(nn.Module):
    def __init__(self, init_value):
        super().__init__()
        self.constant = nn.Parameter(
            torch.tensor(init_value, dtype=torch.float32)
        )

    def forward(self):
        return self.constant


class Loss(nn.Module):
    def __init__(self, observation_dim=3, action_dim=2):
        super().__init__()
        self.policy = TanhGaussianPolicy(observation_dim, action_dim)
        self.qf1 = FullyConnectedQFunction(observation_dim, action_dim)
        self.qf2 = FullyConnectedQFunction(observation_dim, action_dim)
        self.target_qf1 = FullyConnectedQFunction(observation_dim, action_dim)
        self.target_qf2 = FullyConnectedQFunction(observation_dim, action_dim)
        self.target_qf1.load_state_dict(self.qf1.state_dict())
        self.target_qf2.load_state_dict(self.qf2.state_dict())
        self.log_alpha = Scalar(0.0)

    def forward(self, observations, actions, rewards, next_observations, dones):
        new_actions, log_pi = self.policy(observations)

        alpha_loss = -(self.log_alpha() * (log_pi + config.target_entropy).detach()).mean()
        alpha = self.log_alpha().exp() * config.alpha_multiplier

        """ Policy loss """
        q_new_actions = torch.min(
            self.qf1(observations, new_actions),
            self.qf2(observations, new_actions),
        )
        policy_loss = (alpha*log_pi - q_new_actions).mean()

        """ Q function loss """
        q1_pred = self.qf1(observations, actions)
        q2_pred = self.qf2(observations, actions)

        new_next_actions, next_log_pi = self.policy(next_observations)
        target_q_values = torch.min(
            self.target_qf1(next_observations, new_next_actions),
            self.target_qf2(next_observations, new_next_actions),
        )

        if config.backup_entropy:
            target_q_values = target_q_values - alpha * next_log_pi

        td_target = rewards + (1. - dones) * config.discount * target_q_values
        qf1_loss = F.mse_loss(q1_pred, td_target.detach())
        qf2_loss = F.mse_loss(q2_pred, td_target.detach())

        ### CQL
        batch_size = actions.shape[0]
        action_dim = actions.shape[-1]
        cql_random_actions = actions.new_empty((batch_size, config.cql_n_actions, action_dim), requires_grad=False).uniform_(-1, 1)
        cql_current_actions, cql_current_log_pis = self.policy(observations, repeat=config.cql_n_actions)
        cql_next_actions, cql_next_log_pis = self.policy(next_observations, repeat=config.cql_n_actions)
        cql_current_actions, cql_current_log_pis = cql_current_actions.detach(), cql_current_log_pis.detach()
        cql_next_actions, cql_next_log_pis = cql_next_actions.detach(), cql_next_log_pis.detach()

        cql_q1_rand = self.qf1(observations, cql_random_actions)
        cql_q2_rand = self.qf2(observations, cql_random_actions)
        cql_q1_current_actions = self.qf1(observations, cql_current_actions)
        cql_q2_current_actions = self.qf2(observations, cql_current_actions)
        cql_q1_next_actions = self.qf1(observations, cql_next_actions)
        cql_q2_next_actions = self.qf2(observations, cql_next_actions)

        cql_cat_q1 = torch.cat(
            [cql_q1_rand, torch.unsqueeze(q1_pred, 1), cql_q1_next_actions, cql_q1_current_actions], dim=1
        )
        cql_cat_q2 = torch.cat(
            [cql_q2_rand, torch.unsqueeze(q2_pred, 1), cql_q2_next_actions, cql_q2_current_actions], dim=1
        )
        cql_std_q1 = torch.std(cql_cat_q1, dim=1)
        cql_std_q2 = torch.std(cql_cat_q2, dim=1)

        if config.cql_importance_sample:
            random_density = np.log(0.5 ** action_dim)
            cql_cat_q1 = torch.cat(
                [cql_q1_rand - random_density,
                 cql_q1_next_actions - cql_next_log_pis.detach(),
                 cql_q1_current_actions - cql_current_log_pis.detach()],
                dim=1
            )
            cql_cat_q2 = torch.cat(
                [cql_q2_rand - random_density,
                 cql_q2_next_actions - cql_next_log_pis.detach(),
                 cql_q2_current_actions - cql_current_log_pis.detach()],
                dim=1
            )

        cql_qf1_ood = torch.logsumexp(cql_cat_q1 / config.cql_temp, dim=1) * config.cql_temp
        cql_qf2_ood = torch.logsumexp(cql_cat_q2 / config.cql_temp, dim=1) * config.cql_temp

        """Subtract the log likelihood of data"""
        cql_qf1_diff = torch.clamp(
            cql_qf1_ood - q1_pred,
            config.cql_clip_diff_min,
            config.cql_clip_diff_max,
        ).mean()
        cql_qf2_diff = torch.clamp(
            cql_qf2_ood - q2_pred,
            config.cql_clip_diff_min,
            config.cql_clip_diff_max,
        ).mean()

        cql_min_qf1_loss = cql_qf1_diff * config.cql_min_q_weight
        cql_min_qf2_loss = cql_qf2_diff * config.cql_min_q_weight

        qf1_loss = qf1_loss + cql_min_qf1_loss
        qf2_loss = qf2_loss + cql_min_qf2_loss
        qf_loss = qf1_loss + qf2_loss
        return alpha_loss + policy_loss + qf_loss


def example():
    g = torch.Generator().manual_seed(31)
    b = 3
    return (torch.randn(b, 3, generator=g, dtype=torch.float64),
            torch.rand(b, 2, generator=g, dtype=torch.float64) * 1.8 - 0.9,
            torch.randn(b, generator=g, dtype=torch.float64), torch.randn(b, 3, generator=g, dtype=torch.float64),
            torch.tensor([0.0, 1.0, 0.0], dtype=torch.float64))
