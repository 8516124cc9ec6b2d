"""CleanRL's PPG losses (vwxyzjn/cleanrl, cleanrl/ppg_procgen.py), transcribed small: observations (b, h, w, c)
permuted to (b, c, h, w) and scaled by 255, the network stubbed as Flatten and a small MLP, the critic on
hidden.detach() inside the Agent's helpers, the clipped policy and value losses with torch.max and the advantage
normalisation, then the auxiliary phase's KL (td.kl_divergence of two Categoricals) and aux value loss."""

import torch
import torch.distributions as td
import torch.nn as nn
from torch.distributions.categorical import Categorical


class args:
    norm_adv = True
    clip_coef = 0.2
    clip_vloss = True
    ent_coef = 0.01
    vf_coef = 0.5
    beta_clone = 1.0
    n_aux_grad_accum = 1


def layer_init_normed(layer, norm_dim, scale=1.0):
    with torch.no_grad():
        layer.weight.data *= scale / layer.weight.norm(dim=norm_dim, p=2, keepdim=True)
        layer.bias *= 0
    return layer


class Agent(nn.Module):
    def __init__(self, h=2, w=2, c=3, n_actions=3):
        super().__init__()
        self.network = nn.Sequential(
            nn.Flatten(),
            nn.ReLU(),
            layer_init_normed(nn.Linear(c * h * w, 4), norm_dim=1, scale=1.4),
            nn.ReLU(),
        )
        self.actor = layer_init_normed(nn.Linear(4, n_actions), norm_dim=1, scale=0.1)
        self.critic = layer_init_normed(nn.Linear(4, 1), norm_dim=1, scale=0.1)
        self.aux_critic = layer_init_normed(nn.Linear(4, 1), norm_dim=1, scale=0.1)

    def get_action_and_value(self, x, action=None):
        hidden = self.network(x.permute((0, 3, 1, 2)) / 255.0)  # "bhwc" -> "bchw"
        logits = self.actor(hidden)
        probs = Categorical(logits=logits)
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.critic(hidden.detach())

    def get_value(self, x):
        return self.critic(self.network(x.permute((0, 3, 1, 2)) / 255.0).detach())

    # PPG logic:
    def get_pi_value_and_aux_value(self, x):
        hidden = self.network(x.permute((0, 3, 1, 2)) / 255.0)
        return Categorical(logits=self.actor(hidden)), self.critic(hidden.detach()), self.aux_critic(hidden)

    def get_pi(self, x):
        return Categorical(logits=self.actor(self.network(x.permute((0, 3, 1, 2)) / 255.0)))


class Loss(nn.Module):
    def __init__(self):
        super().__init__()
        self.agent = Agent()

    def forward(self, b_obs, b_actions, b_logprobs, b_advantages, b_returns, b_values, aux_pis):
        # policy phase
        _, newlogprob, entropy, newvalue = self.agent.get_action_and_value(b_obs, b_actions.long())
        logratio = newlogprob - b_logprobs
        ratio = logratio.exp()

        mb_advantages = b_advantages
        if args.norm_adv:
            mb_advantages = (mb_advantages - mb_advantages.mean()) / (mb_advantages.std() + 1e-8)

        # Policy loss
        pg_loss1 = -mb_advantages * ratio
        pg_loss2 = -mb_advantages * torch.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef)
        pg_loss = torch.max(pg_loss1, pg_loss2).mean()

        # Value loss
        newvalue = newvalue.view(-1)
        if args.clip_vloss:
            v_loss_unclipped = (newvalue - b_returns) ** 2
            v_clipped = b_values + torch.clamp(
                newvalue - b_values,
                -args.clip_coef,
                args.clip_coef,
            )
            v_loss_clipped = (v_clipped - b_returns) ** 2
            v_loss_max = torch.max(v_loss_unclipped, v_loss_clipped)
            v_loss = 0.5 * v_loss_max.mean()
        else:
            v_loss = 0.5 * ((newvalue - b_returns) ** 2).mean()

        entropy_loss = entropy.mean()
        loss = pg_loss - args.ent_coef * entropy_loss + v_loss * args.vf_coef

        # auxiliary phase
        new_pi, new_values, new_aux_values = self.agent.get_pi_value_and_aux_value(b_obs)
        new_values = new_values.view(-1)
        new_aux_values = new_aux_values.view(-1)
        old_pi_logits = aux_pis
        old_pi = Categorical(logits=old_pi_logits)
        kl_loss = td.kl_divergence(old_pi, new_pi).mean()

        real_value_loss = 0.5 * ((new_values - b_returns) ** 2).mean()
        aux_value_loss = 0.5 * ((new_aux_values - b_returns) ** 2).mean()
        joint_loss = aux_value_loss + args.beta_clone * kl_loss

        return loss + (joint_loss + real_value_loss) / args.n_aux_grad_accum


def example():
    g = torch.Generator().manual_seed(5)
    b = 4

    def r(*s):
        return torch.randn(*s, generator=g, dtype=torch.float64)

    obs = torch.randint(0, 256, (b, 2, 2, 3), generator=g).to(torch.float64)
    return (obs, torch.tensor([0.0, 2.0, 1.0, 2.0], dtype=torch.float64), -r(b).abs() - 1.0, r(b), r(b), r(b),
            r(b, 3))
