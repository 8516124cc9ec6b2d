"""CleanRL's DQN loss (vwxyzjn/cleanrl, cleanrl/dqn.py), transcribed small: the Q-network and its target network
as CleanRL builds them (smaller), the TD target under torch.no_grad() with the target network's max, the taken
action's value by gather, F.mse_loss. A replay sample is passed in as data."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class args:
    gamma = 0.99


class QNetwork(nn.Module):
    def __init__(self, obs_dim=4, n_actions=2):
        super().__init__()
        self.network = nn.Sequential(
            nn.Linear(obs_dim, 5),
            nn.ReLU(),
            nn.Linear(5, 4),
            nn.ReLU(),
            nn.Linear(4, n_actions),
        )

    def forward(self, x):
        return self.network(x)


class Loss(nn.Module):
    def __init__(self):
        super().__init__()
        self.q_network = QNetwork()
        self.target_network = QNetwork()
        self.target_network.load_state_dict(self.q_network.state_dict())

    def forward(self, observations, actions, next_observations, rewards, dones):
        with torch.no_grad():
            target_max, _ = self.target_network(next_observations).max(dim=1)
            td_target = rewards.flatten() + args.gamma * target_max * (1 - dones.flatten())
        old_val = self.q_network(observations).gather(1, actions).squeeze()
        loss = F.mse_loss(td_target, old_val)
        return loss


def example():
    g = torch.Generator().manual_seed(3)
    b = 5
    return (torch.randn(b, 4, generator=g, dtype=torch.float64), torch.tensor([[0], [1], [1], [0], [1]]),
            torch.randn(b, 4, generator=g, dtype=torch.float64), torch.randn(b, 1, generator=g, dtype=torch.float64),
            torch.tensor([[0.0], [0.0], [1.0], [0.0], [0.0]], dtype=torch.float64))
