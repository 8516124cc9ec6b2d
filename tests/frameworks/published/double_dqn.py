"""Double DQN as RL-Adventure writes it (higgsfield/RL-Adventure, "2.double dqn.ipynb": DQN and compute_td_loss),
transcribed small: the current model picks the next action (torch.max(next_q_values, 1)[1]), the target model
values it by gather, and the target is cut from the graph the 2017 way, Variable(expected_q_value.data). The
replay sample is passed in as data (the notebook's Variable(torch.FloatTensor(...)) wrappers of it kept)."""

import torch
import torch.nn as nn
from torch.autograd import Variable

gamma = 0.99


class DQN(nn.Module):
    def __init__(self, num_inputs, num_actions):
        super(DQN, self).__init__()

        self.layers = nn.Sequential(
            nn.Linear(num_inputs, 5),
            nn.ReLU(),
            nn.Linear(5, 5),
            nn.ReLU(),
            nn.Linear(5, num_actions)
        )

    def forward(self, x):
        return self.layers(x)


class Loss(nn.Module):
    def __init__(self):
        super().__init__()
        self.current_model = DQN(4, 3)
        self.target_model = DQN(4, 3)

    def forward(self, state, action, reward, next_state, done):
        state      = Variable(state)
        next_state = Variable(next_state)
        action     = Variable(action)
        reward     = Variable(reward)
        done       = Variable(done)

        q_values      = self.current_model(state)
        next_q_values = self.current_model(next_state)
        next_q_state_values = self.target_model(next_state)

        q_value       = q_values.gather(1, action.unsqueeze(1)).squeeze(1)
        next_q_value = next_q_state_values.gather(1, torch.max(next_q_values, 1)[1].unsqueeze(1)).squeeze(1)
        expected_q_value = reward + gamma * next_q_value * (1 - done)

        loss = (q_value - Variable(expected_q_value.data)).pow(2).mean()
        return loss


def example():
    g = torch.Generator().manual_seed(12)
    b = 5
    return (torch.randn(b, 4, generator=g, dtype=torch.float64), torch.tensor([0, 2, 1, 1, 0]),
            torch.randn(b, generator=g, dtype=torch.float64), torch.randn(b, 4, generator=g, dtype=torch.float64),
            torch.tensor([0.0, 0.0, 1.0, 0.0, 0.0], dtype=torch.float64))
