"""VQ-VAE-2's EMA quantiser and training loss (rosinality/vq-vae-2-pytorch, vqvae.py: Quantize, and train_vqvae.py:
train), transcribed small: distances to the codebook buffer, (-dist).max(1), F.one_hot, the codebook read by
F.embedding, the EMA codebook update in training mode (in place on .data, dist_fn.all_reduce a no-op for one
process), diff = (quantize.detach() - input).pow(2).mean() and the straight-through input + (quantize -
input).detach(); the loss recon_loss + latent_loss_weight * latent_loss. One level of the hierarchy; the encoder
and decoder are stubbed as linear maps over the channels."""

import torch
import torch.nn.functional as F
from torch import nn


class dist_fn:
    """distributed.py's all_reduce: a no-op in a single process."""

    @staticmethod
    def all_reduce(tensor, op=None, async_op=False):
        return tensor


class Quantize(nn.Module):
    def __init__(self, dim, n_embed, decay=0.99, eps=1e-5):
        super().__init__()

        self.dim = dim
        self.n_embed = n_embed
        self.decay = decay
        self.eps = eps

        embed = torch.randn(dim, n_embed)
        self.register_buffer("embed", embed)
        self.register_buffer("cluster_size", torch.zeros(n_embed))
        self.register_buffer("embed_avg", embed.clone())

    def forward(self, input):
        flatten = input.reshape(-1, self.dim)
        dist = (
            flatten.pow(2).sum(1, keepdim=True)
            - 2 * flatten @ self.embed
            + self.embed.pow(2).sum(0, keepdim=True)
        )
        _, embed_ind = (-dist).max(1)
        embed_onehot = F.one_hot(embed_ind, self.n_embed).type(flatten.dtype)
        embed_ind = embed_ind.view(*input.shape[:-1])
        quantize = self.embed_code(embed_ind)

        if self.training:
            embed_onehot_sum = embed_onehot.sum(0)
            embed_sum = flatten.transpose(0, 1) @ embed_onehot

            dist_fn.all_reduce(embed_onehot_sum)
            dist_fn.all_reduce(embed_sum)

            self.cluster_size.data.mul_(self.decay).add_(
                embed_onehot_sum, alpha=1 - self.decay
            )
            self.embed_avg.data.mul_(self.decay).add_(embed_sum, alpha=1 - self.decay)
            n = self.cluster_size.sum()
            cluster_size = (
                (self.cluster_size + self.eps) / (n + self.n_embed * self.eps) * n
            )
            embed_normalized = self.embed_avg / cluster_size.unsqueeze(0)
            self.embed.data.copy_(embed_normalized)

        diff = (quantize.detach() - input).pow(2).mean()
        quantize = input + (quantize - input).detach()

        return quantize, diff, embed_ind

    def embed_code(self, embed_id):
        return F.embedding(embed_id, self.embed.transpose(0, 1))


class ChannelLinear(nn.Module):
    """A 1x1 convolution stubbed as a linear map over the channel axis of (b, c, h, w)."""

    def __init__(self, c_in, c_out):
        super().__init__()
        self.fc = nn.Linear(c_in, c_out)

    def forward(self, x):
        return self.fc(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


class VQVAE(nn.Module):
    def __init__(self, in_channel=3, channel=4, embed_dim=2, n_embed=5, decay=0.99):
        super().__init__()

        self.enc_t = nn.Sequential(ChannelLinear(in_channel, channel), nn.ReLU(inplace=True))
        self.quantize_conv_t = ChannelLinear(channel, embed_dim)
        self.quantize_t = Quantize(embed_dim, n_embed)
        self.dec = nn.Sequential(ChannelLinear(embed_dim, channel), nn.ReLU(inplace=True),
                                 ChannelLinear(channel, in_channel))

    def forward(self, input):
        quant_t, diff, _ = self.encode(input)
        dec = self.decode(quant_t)

        return dec, diff

    def encode(self, input):
        enc_t = self.enc_t(input)

        quant_t = self.quantize_conv_t(enc_t).permute(0, 2, 3, 1)
        quant_t, diff_t, id_t = self.quantize_t(quant_t)
        quant_t = quant_t.permute(0, 3, 1, 2)
        diff_t = diff_t.unsqueeze(0)

        return quant_t, diff_t, id_t

    def decode(self, quant_t):
        dec = self.dec(quant_t)

        return dec


class Loss(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = VQVAE()
        self.criterion = nn.MSELoss()
        self.latent_loss_weight = 0.25

    def forward(self, img):
        out, latent_loss = self.model(img)
        recon_loss = self.criterion(out, img)
        latent_loss = latent_loss.mean()
        loss = recon_loss + self.latent_loss_weight * latent_loss
        return loss


def example():
    g = torch.Generator().manual_seed(16)
    return torch.randn(2, 3, 2, 2, generator=g, dtype=torch.float64)
