"""TD3's critic and actor losses (sfujim/TD3, TD3.py: Actor, Critic, TD3.train), transcribed small: target policy
smoothing under torch.no_grad() (the clipped Gaussian noise on the target actor's action, as written with
torch.randn_like), the min of the twin target critics, the twin critics' MSE, and the delayed actor loss
-critic.Q1(state, actor(state)).mean() (its step taken here). The replay sample is passed in as data; the two
losses are summed, as one backward pass over both would take them."""

import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class Actor(nn.Module):
	def __init__(self, state_dim, action_dim, max_action):
		super(Actor, self).__init__()

		self.l1 = nn.Linear(state_dim, 5)
		self.l2 = nn.Linear(5, 5)
		self.l3 = nn.Linear(5, action_dim)

		self.max_action = max_action


	def forward(self, state):
		a = F.relu(self.l1(state))
		a = F.relu(self.l2(a))
		return self.max_action * torch.tanh(self.l3(a))


class Critic(nn.Module):
	def __init__(self, state_dim, action_dim):
		super(Critic, self).__init__()

		# Q1 architecture
		self.l1 = nn.Linear(state_dim + action_dim, 5)
		self.l2 = nn.Linear(5, 5)
		self.l3 = nn.Linear(5, 1)

		# Q2 architecture
		self.l4 = nn.Linear(state_dim + action_dim, 5)
		self.l5 = nn.Linear(5, 5)
		self.l6 = nn.Linear(5, 1)


	def forward(self, state, action):
		sa = torch.cat([state, action], 1)

		q1 = F.relu(self.l1(sa))
		q1 = F.relu(self.l2(q1))
		q1 = self.l3(q1)

		q2 = F.relu(self.l4(sa))
		q2 = F.relu(self.l5(q2))
		q2 = self.l6(q2)
		return q1, q2


	def Q1(self, state, action):
		sa = torch.cat([state, action], 1)

		q1 = F.relu(self.l1(sa))
		q1 = F.relu(self.l2(q1))
		q1 = self.l3(q1)
		return q1


class Loss(nn.Module):
	def __init__(self, state_dim=3, action_dim=2, max_action=1.0, discount=0.99, policy_noise=0.2, noise_clip=0.5):
		super().__init__()
		self.actor = Actor(state_dim, action_dim, max_action)
		self.actor_target = copy.deepcopy(self.actor)
		self.critic = Critic(state_dim, action_dim)
		self.critic_target = copy.deepcopy(self.critic)
		self.max_action = max_action
		self.discount = discount
		self.policy_noise = policy_noise
		self.noise_clip = noise_clip

	def forward(self, state, action, next_state, reward, not_done):
		with torch.no_grad():
			# Select action according to policy and add clipped noise
			noise = (
				torch.randn_like(action) * self.policy_noise
			).clamp(-self.noise_clip, self.noise_clip)

			next_action = (
				self.actor_target(next_state) + noise
			).clamp(-self.max_action, self.max_action)

			# Compute the target Q value
			target_Q1, target_Q2 = self.critic_target(next_state, next_action)
			target_Q = torch.min(target_Q1, target_Q2)
			target_Q = reward + not_done * self.discount * target_Q

		# Get current Q estimates
		current_Q1, current_Q2 = self.critic(state, action)

		# Compute critic loss
		critic_loss = F.mse_loss(current_Q1, target_Q) + F.mse_loss(current_Q2, target_Q)

		# Compute actor losse
		actor_loss = -self.critic.Q1(state, self.actor(state)).mean()
		return critic_loss + actor_loss


def example():
	g = torch.Generator().manual_seed(13)
	b = 4
	return (torch.randn(b, 3, generator=g, dtype=torch.float64),
			torch.randn(b, 2, generator=g, dtype=torch.float64).clamp(-1, 1),
			torch.randn(b, 3, generator=g, dtype=torch.float64), torch.randn(b, 1, generator=g, dtype=torch.float64),
			torch.tensor([[1.0], [1.0], [0.0], [1.0]], dtype=torch.float64))
