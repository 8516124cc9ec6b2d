"""The Gumbel quantiser (CompVis/taming-transformers, taming/modules/vqvae/quantize.py: GumbelQuantize),
transcribed small: logits by a 1x1 projection (stubbed as a linear map over channels), F.gumbel_softmax(hard=True)
over the code axis (its Gumbel noise drawn inside, its one-hot written by scatter), z_q by einsum
'b n h w, n d -> b d h w', the KL to a uniform prior. A decoder stub and an MSE reconstruction make the loss."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import einsum


class ChannelLinear(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.fc = nn.Linear(c_in, c_out)

    def forward(self, x):
        return self.fc(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


class GumbelQuantize(nn.Module):
    def __init__(self, num_hiddens, embedding_dim, n_embed, straight_through=True, kl_weight=5e-4, temp_init=1.0):
        super().__init__()
        self.embedding_dim = embedding_dim
        self.n_embed = n_embed
        self.straight_through = straight_through
        self.temperature = temp_init
        self.kl_weight = kl_weight
        self.proj = ChannelLinear(num_hiddens, n_embed)
        self.embed = nn.Embedding(n_embed, embedding_dim)
        self.remap = None

    def forward(self, z, temp=None, return_logits=False):
        # force hard = True when we are in eval mode, as we must quantize. actually, always true seems to work
        hard = self.straight_through if self.training else True
        temp = self.temperature if temp is None else temp

        logits = self.proj(z)

        soft_one_hot = F.gumbel_softmax(logits, tau=temp, dim=1, hard=hard)
        z_q = einsum('b n h w, n d -> b d h w', soft_one_hot, self.embed.weight)

        # + kl divergence to the prior loss
        qy = F.softmax(logits, dim=1)
        diff = self.kl_weight * torch.sum(qy * torch.log(qy * self.n_embed + 1e-10), dim=1).mean()

        ind = soft_one_hot.argmax(dim=1)
        if return_logits:
            return z_q, diff, (None, None, ind), logits
        return z_q, diff, (None, None, ind)


class Loss(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(ChannelLinear(3, 4), nn.ReLU())
        self.quantize = GumbelQuantize(4, 2, 5, kl_weight=0.1, temp_init=0.9)
        self.decoder = ChannelLinear(2, 3)

    def forward(self, x):
        quant, diff, _ = self.quantize(self.encoder(x))
        xrec = self.decoder(quant)
        return F.mse_loss(xrec, x) + diff


def example():
    g = torch.Generator().manual_seed(8)
    return torch.randn(2, 3, 2, 2, generator=g, dtype=torch.float64)
