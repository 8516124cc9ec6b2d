"""FixMatch's loss (kekmodel/FixMatch-pytorch, train.py: train, with interleave / de_interleave), transcribed
small: the labelled, weakly and strongly augmented batches concatenated and interleaved for the model, the logits
de-interleaved and split, the pseudo-label a softmax of the weak logits detached (logits_u_w.detach()/args.T), its
argmax and confidence from torch.max, the mask max_probs.ge(threshold).float(), and the unlabelled cross-entropy
with reduction='none' weighted by that mask. The WideResNet is stubbed as a small MLP."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class args:
    mu = 2
    T = 1
    threshold = 0.4
    lambda_u = 1


def interleave(x, size):
    s = list(x.shape)
    return x.reshape([-1, size] + s[1:]).transpose(0, 1).reshape([-1] + s[1:])


def de_interleave(x, size):
    s = list(x.shape)
    return x.reshape([size, -1] + s[1:]).transpose(0, 1).reshape([-1] + s[1:])


class Loss(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(3, 6), nn.LeakyReLU(negative_slope=0.1, inplace=True), nn.Linear(6, 3))

    def forward(self, inputs_x, targets_x, inputs_u_w, inputs_u_s):
        batch_size = inputs_x.shape[0]
        inputs = interleave(
            torch.cat((inputs_x, inputs_u_w, inputs_u_s)), 2*args.mu+1)
        logits = self.model(inputs)
        logits = de_interleave(logits, 2*args.mu+1)
        logits_x = logits[:batch_size]
        logits_u_w, logits_u_s = logits[batch_size:].chunk(2)
        del logits

        Lx = F.cross_entropy(logits_x, targets_x, reduction='mean')

        pseudo_label = torch.softmax(logits_u_w.detach()/args.T, dim=-1)
        max_probs, targets_u = torch.max(pseudo_label, dim=-1)
        mask = max_probs.ge(args.threshold).float()

        Lu = (F.cross_entropy(logits_u_s, targets_u,
                              reduction='none') * mask).mean()

        loss = Lx + args.lambda_u * Lu
        return loss


def example():
    g = torch.Generator().manual_seed(22)
    b = 2
    return (torch.randn(b, 3, generator=g, dtype=torch.float64), torch.tensor([0, 2]),
            torch.randn(args.mu * b, 3, generator=g, dtype=torch.float64),
            torch.randn(args.mu * b, 3, generator=g, dtype=torch.float64))
