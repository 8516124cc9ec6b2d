"""CURL's contrastive and actor losses (MishaLaskin/curl, curl_sac.py: CURL.encode / compute_logits,
CurlSacAgent.update_cpc / update_actor_and_alpha, with encoder.py PixelEncoder and curl_sac.py Actor), transcribed
small: the key encoded by the momentum target encoder under torch.no_grad(), the bilinear logits z_a W z_pos^T made
stable by subtracting their row max (torch.max(logits, 1)[0][:, None], not detached), cross-entropy against
torch.arange labels; the actor on features detached from the critic's encoder (detach_encoder=True: h.detach()),
its tanh squashing with log_pi -= log(relu(1 - pi^2) + 1e-6), the min of the twin critics, self.alpha.detach() in
the actor loss and (-log_pi - target_entropy).detach() in the temperature loss. The encoder's convs are stubbed as
one Linear; the actor's Gaussian noise torch.randn_like(mu) is drawn as written."""


import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def gaussian_logprob(noise, log_std):
    """Compute Gaussian log probability."""
    residual = (-0.5 * noise.pow(2) - log_std).sum(-1, keepdim=True)
    return residual - 0.5 * np.log(2 * np.pi) * noise.size(-1)


def squash(mu, pi, log_pi):
    """Apply squashing function.
    See appendix C from https://arxiv.org/pdf/1812.05905.pdf.
    """
    mu = torch.tanh(mu)
    if pi is not None:
        pi = torch.tanh(pi)
    if log_pi is not None:
        log_pi -= torch.log(F.relu(1 - pi.pow(2)) + 1e-6).sum(-1, keepdim=True)
    return mu, pi, log_pi


class PixelEncoder(nn.Module):
    """Convolutional encoder of pixels observations."""
    def __init__(self, obs_dim=4, feature_dim=3):
        super().__init__()
        self.feature_dim = feature_dim
        self.convs = nn.ModuleList([nn.Linear(obs_dim, 5)])
        self.fc = nn.Linear(5, self.feature_dim)
        self.ln = nn.LayerNorm(self.feature_dim)

    def forward_conv(self, obs):
        obs = obs / 255.
        conv = torch.relu(self.convs[0](obs))
        h = conv.view(conv.size(0), -1)
        return h

    def forward(self, obs, detach=False):
        h = self.forward_conv(obs)
        if detach:
            h = h.detach()
        h_fc = self.fc(h)
        h_norm = self.ln(h_fc)
        out = torch.tanh(h_norm)
        return out


class Actor(nn.Module):
    """MLP actor network."""
    def __init__(self, action_dim=2, log_std_min=-10, log_std_max=2):
        super().__init__()
        self.encoder = PixelEncoder()
        self.log_std_min = log_std_min
        self.log_std_max = log_std_max
        self.trunk = nn.Sequential(
            nn.Linear(self.encoder.feature_dim, 4), nn.ReLU(),
            nn.Linear(4, 4), nn.ReLU(),
            nn.Linear(4, 2 * action_dim)
        )

    def forward(self, obs, compute_pi=True, compute_log_pi=True, detach_encoder=False):
        obs = self.encoder(obs, detach=detach_encoder)
        mu, log_std = self.trunk(obs).chunk(2, dim=-1)
        # constrain log_std inside [log_std_min, log_std_max]
        log_std = torch.tanh(log_std)
        log_std = self.log_std_min + 0.5 * (self.log_std_max - self.log_std_min) * (log_std + 1)
        if compute_pi:
            std = log_std.exp()
            noise = torch.randn_like(mu)
            pi = mu + noise * std
        else:
            pi = None
        if compute_log_pi:
            log_pi = gaussian_logprob(noise, log_std)
        else:
            log_pi = None
        mu, pi, log_pi = squash(mu, pi, log_pi)
        return mu, pi, log_pi, log_std


class QFunction(nn.Module):
    """MLP for q-function."""
    def __init__(self, obs_dim, action_dim, hidden_dim):
        super().__init__()
        self.trunk = nn.Sequential(
            nn.Linear(obs_dim + action_dim, hidden_dim), nn.ReLU(),
            nn.Linear(hidden_dim, 1)
        )

    def forward(self, obs, action):
        assert obs.size(0) == action.size(0)
        obs_action = torch.cat([obs, action], dim=1)
        return self.trunk(obs_action)


class Critic(nn.Module):
    """Critic network, employes two q-functions."""
    def __init__(self, action_dim=2):
        super().__init__()
        self.encoder = PixelEncoder()
        self.Q1 = QFunction(self.encoder.feature_dim, action_dim, 4)
        self.Q2 = QFunction(self.encoder.feature_dim, action_dim, 4)

    def forward(self, obs, action, detach_encoder=False):
        # detach_encoder allows to stop gradient propogation to encoder
        obs = self.encoder(obs, detach=detach_encoder)
        q1 = self.Q1(obs, action)
        q2 = self.Q2(obs, action)
        return q1, q2


class CURL(nn.Module):
    """
    CURL
    """
    def __init__(self, z_dim, critic, critic_target):
        super(CURL, self).__init__()
        self.encoder = critic.encoder
        self.encoder_target = critic_target.encoder
        self.W = nn.Parameter(torch.rand(z_dim, z_dim))

    def encode(self, x, detach=False, ema=False):
        """
        Encoder: z_t = e(x_t)
        :param x: x_t, x y coordinates
        :return: z_t, value in r2
        """
        if ema:
            with torch.no_grad():
                z_out = self.encoder_target(x)
        else:
            z_out = self.encoder(x)
        if detach:
            z_out = z_out.detach()
        return z_out

    def compute_logits(self, z_a, z_pos):
        """
        Uses logits trick for CURL:
        - compute (B,B) matrix z_a (W z_pos.T)
        - positives are all diagonal elements
        - negatives are all other elements
        - to compute loss use multiclass cross entropy with identity matrix for labels
        """
        Wz = torch.matmul(self.W, z_pos.T)  # (z_dim,B)
        logits = torch.matmul(z_a, Wz)  # (B,B)
        logits = logits - torch.max(logits, 1)[0][:, None]
        return logits


class Loss(nn.Module):
    def __init__(self, init_temperature=0.1, action_shape=(2,)):
        super().__init__()
        self.actor = Actor()
        self.critic = Critic()
        self.critic_target = Critic()
        self.critic_target.load_state_dict(self.critic.state_dict())
        self.CURL = CURL(3, self.critic, self.critic_target)
        self.log_alpha = nn.Parameter(torch.tensor(np.log(init_temperature)))
        self.target_entropy = -np.prod(action_shape)
        self.cross_entropy_loss = nn.CrossEntropyLoss()

    @property
    def alpha(self):
        return self.log_alpha.exp()

    def forward(self, obs, obs_anchor, obs_pos):
        # update_cpc
        z_a = self.CURL.encode(obs_anchor)
        z_pos = self.CURL.encode(obs_pos, ema=True)
        logits = self.CURL.compute_logits(z_a, z_pos)
        labels = torch.arange(logits.shape[0]).long()
        cpc_loss = self.cross_entropy_loss(logits, labels)

        # update_actor_and_alpha: detach encoder, so we don't update it with the actor loss
        _, pi, log_pi, log_std = self.actor(obs, detach_encoder=True)
        actor_Q1, actor_Q2 = self.critic(obs, pi, detach_encoder=True)
        actor_Q = torch.min(actor_Q1, actor_Q2)
        actor_loss = (self.alpha.detach() * log_pi - actor_Q).mean()
        alpha_loss = (self.alpha *
                      (-log_pi - self.target_entropy).detach()).mean()
        return cpc_loss + actor_loss + alpha_loss


def example():
    g = torch.Generator().manual_seed(28)
    return tuple(255 * torch.rand(3, 4, generator=g, dtype=torch.float64) for _ in range(3))
