"""VQGAN's vector quantiser and loss (CompVis/taming-transformers, taming/modules/vqvae/quantize.py:
VectorQuantizer, and the reconstruction/codebook terms of VQLPIPSWithDiscriminator), transcribed small: z of
shape (b, c, h, w) permuted and flattened, distances to the codebook, argmin, a one-hot by scatter_, the codebook
and commitment losses with .detach(), the straight-through z + (z_q - z).detach(), the perplexity. The encoder
and decoder are stubbed as linear maps over the channels."""

import torch
import torch.nn as nn


class VectorQuantizer(nn.Module):
    def __init__(self, n_e, e_dim, beta):
        super(VectorQuantizer, self).__init__()
        self.n_e = n_e
        self.e_dim = e_dim
        self.beta = beta

        self.embedding = nn.Embedding(self.n_e, self.e_dim)
        self.embedding.weight.data.uniform_(-1.0 / self.n_e, 1.0 / self.n_e)

    def forward(self, z):
        # reshape z -> (batch, height, width, channel) and flatten
        z = z.permute(0, 2, 3, 1).contiguous()
        z_flattened = z.view(-1, self.e_dim)
        # distances from z to embeddings e_j (z - e)^2 = z^2 + e^2 - 2 e * z

        d = torch.sum(z_flattened ** 2, dim=1, keepdim=True) + \
            torch.sum(self.embedding.weight**2, dim=1) - 2 * \
            torch.matmul(z_flattened, self.embedding.weight.t())

        # find closest encodings
        min_encoding_indices = torch.argmin(d, dim=1).unsqueeze(1)

        min_encodings = torch.zeros(
            min_encoding_indices.shape[0], self.n_e).to(z)
        min_encodings.scatter_(1, min_encoding_indices, 1)

        # get quantized latent vectors
        z_q = torch.matmul(min_encodings, self.embedding.weight).view(z.shape)

        # compute loss for embedding
        loss = torch.mean((z_q.detach()-z)**2) + self.beta * \
            torch.mean((z_q - z.detach()) ** 2)

        # preserve gradients
        z_q = z + (z_q - z).detach()

        # perplexity
        e_mean = torch.mean(min_encodings, dim=0)
        perplexity = torch.exp(-torch.sum(e_mean * torch.log(e_mean + 1e-10)))

        # reshape back to match original input shape
        z_q = z_q.permute(0, 3, 1, 2).contiguous()

        return z_q, loss, (perplexity, min_encodings, min_encoding_indices)


class ChannelLinear(nn.Module):
    """A 1x1 convolution stubbed as a linear map over the channel axis of (b, c, h, w)."""

    def __init__(self, c_in, c_out):
        super().__init__()
        self.fc = nn.Linear(c_in, c_out)

    def forward(self, x):
        return self.fc(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


class Loss(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(ChannelLinear(3, 4), nn.SiLU())
        self.quant_conv = ChannelLinear(4, 2)
        self.quantize = VectorQuantizer(5, 2, beta=0.25)
        self.post_quant_conv = ChannelLinear(2, 4)
        self.decoder = nn.Sequential(nn.SiLU(), ChannelLinear(4, 3))
        self.codebook_weight = 1.0

    def encode(self, x):
        h = self.encoder(x)
        h = self.quant_conv(h)
        quant, emb_loss, info = self.quantize(h)
        return quant, emb_loss, info

    def decode(self, quant):
        quant = self.post_quant_conv(quant)
        dec = self.decoder(quant)
        return dec

    def forward(self, inputs):
        quant, codebook_loss, (perplexity, _, _) = self.encode(inputs)
        reconstructions = self.decode(quant)
        rec_loss = torch.abs(inputs.contiguous() - reconstructions.contiguous())
        nll_loss = torch.mean(rec_loss)
        return nll_loss + self.codebook_weight * codebook_loss.mean() + 0.0 * perplexity.detach()


def example():
    g = torch.Generator().manual_seed(6)
    return torch.randn(2, 3, 2, 2, generator=g, dtype=torch.float64)
