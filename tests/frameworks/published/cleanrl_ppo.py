"""CleanRL's PPO loss (vwxyzjn/cleanrl, cleanrl/ppo.py: Agent, and the update of the training loop), transcribed
small: GAE under torch.no_grad() from the agent's bootstrap value (advantages[t] = lastgaelam = ... written in
place), the batch flattened, one minibatch (its shuffled indices passed in as data), the Categorical policy's
log-prob and entropy, the approx-KL and clip-fraction diagnostics under torch.no_grad(), normalised advantages,
the clipped surrogate with torch.max, and the clipped value loss (clip_vloss). The rollout buffer (observations,
actions, their log-probs and values, rewards, dones) is passed in as data."""

import numpy as np
import torch
import torch.nn as nn
from torch.distributions.categorical import Categorical


class args:
    num_envs = 2
    num_steps = 3
    gamma = 0.99
    gae_lambda = 0.95
    clip_coef = 0.2
    norm_adv = True
    clip_vloss = True
    ent_coef = 0.01
    vf_coef = 0.5
    batch_size = 6


def layer_init(layer, std=np.sqrt(2), bias_const=0.0):
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


class Agent(nn.Module):
    def __init__(self, obs_dim=4, n_actions=3):
        super().__init__()
        self.critic = nn.Sequential(
            layer_init(nn.Linear(obs_dim, 5)),
            nn.Tanh(),
            layer_init(nn.Linear(5, 5)),
            nn.Tanh(),
            layer_init(nn.Linear(5, 1), std=1.0),
        )
        self.actor = nn.Sequential(
            layer_init(nn.Linear(obs_dim, 5)),
            nn.Tanh(),
            layer_init(nn.Linear(5, 5)),
            nn.Tanh(),
            layer_init(nn.Linear(5, n_actions), std=0.01),
        )

    def get_value(self, x):
        return self.critic(x)

    def get_action_and_value(self, x, action=None):
        logits = self.actor(x)
        probs = Categorical(logits=logits)
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.critic(x)


class Loss(nn.Module):
    def __init__(self):
        super().__init__()
        self.agent = Agent()

    def forward(self, obs, actions, logprobs, rewards, dones, values, next_obs, next_done, mb_inds):
        agent = self.agent
        # bootstrap value if not done
        with torch.no_grad():
            next_value = agent.get_value(next_obs).reshape(1, -1)
            advantages = torch.zeros_like(rewards)
            lastgaelam = 0
            for t in reversed(range(args.num_steps)):
                if t == args.num_steps - 1:
                    nextnonterminal = 1.0 - next_done
                    nextvalues = next_value
                else:
                    nextnonterminal = 1.0 - dones[t + 1]
                    nextvalues = values[t + 1]
                delta = rewards[t] + args.gamma * nextvalues * nextnonterminal - values[t]
                advantages[t] = lastgaelam = delta + args.gamma * args.gae_lambda * nextnonterminal * lastgaelam
            returns = advantages + values

        # flatten the batch
        b_obs = obs.reshape((-1, 4))
        b_logprobs = logprobs.reshape(-1)
        b_actions = actions.reshape(-1)
        b_advantages = advantages.reshape(-1)
        b_returns = returns.reshape(-1)
        b_values = values.reshape(-1)

        clipfracs = []
        _, newlogprob, entropy, newvalue = agent.get_action_and_value(b_obs[mb_inds], b_actions.long()[mb_inds])
        logratio = newlogprob - b_logprobs[mb_inds]
        ratio = logratio.exp()

        with torch.no_grad():
            # calculate approx_kl http://joschu.net/blog/kl-approx.html
            old_approx_kl = (-logratio).mean()
            approx_kl = ((ratio - 1) - logratio).mean()
            clipfracs += [((ratio - 1.0).abs() > args.clip_coef).float().mean().item()]

        mb_advantages = b_advantages[mb_inds]
        if args.norm_adv:
            mb_advantages = (mb_advantages - mb_advantages.mean()) / (mb_advantages.std() + 1e-8)

        # Policy loss
        pg_loss1 = -mb_advantages * ratio
        pg_loss2 = -mb_advantages * torch.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef)
        pg_loss = torch.max(pg_loss1, pg_loss2).mean()

        # Value loss
        newvalue = newvalue.view(-1)
        if args.clip_vloss:
            v_loss_unclipped = (newvalue - b_returns[mb_inds]) ** 2
            v_clipped = b_values[mb_inds] + torch.clamp(
                newvalue - b_values[mb_inds],
                -args.clip_coef,
                args.clip_coef,
            )
            v_loss_clipped = (v_clipped - b_returns[mb_inds]) ** 2
            v_loss_max = torch.max(v_loss_unclipped, v_loss_clipped)
            v_loss = 0.5 * v_loss_max.mean()
        else:
            v_loss = 0.5 * ((newvalue - b_returns[mb_inds]) ** 2).mean()

        entropy_loss = entropy.mean()
        loss = pg_loss - args.ent_coef * entropy_loss + v_loss * args.vf_coef
        return loss


def example():
    g = torch.Generator().manual_seed(15)
    s, e = args.num_steps, args.num_envs

    def r(*shape):
        return torch.randn(*shape, generator=g, dtype=torch.float64)

    return (r(s, e, 4), torch.tensor([[0.0, 2.0], [1.0, 1.0], [2.0, 0.0]], dtype=torch.float64),
            -1.1 + 0.3 * r(s, e), r(s, e), torch.tensor([[0.0, 0.0], [0.0, 1.0], [0.0, 0.0]], dtype=torch.float64),
            r(s, e), r(e, 4), torch.tensor([0.0, 1.0], dtype=torch.float64), torch.tensor([3, 0, 5, 1, 4, 2]))
