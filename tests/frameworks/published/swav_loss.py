"""SwAV's swapped-prediction loss (facebookresearch/swav, main_swav.py and src/resnet50.py), transcribed small:
the prototypes normalised in place under torch.no_grad(), a multi-crop forward with an l2-normalised projection
head, the embedding detached, codes by distributed_sinkhorn (in-place /=, a @torch.no_grad() function) and the
swapped cross-entropy summed over the other crops. The ResNet is stubbed as a small MLP; its grouping of crops
by resolution (torch.unique_consecutive of the widths) is stubbed too: every crop here has one width."""

import numpy as np
import torch
import torch.nn as nn


class args:
    crops_for_assign = [0, 1]
    nmb_crops = [2, 1]
    temperature = 0.1
    epsilon = 0.05
    sinkhorn_iterations = 3
    world_size = 1


class ResNet(nn.Module):
    def __init__(self, output_dim=3, nmb_prototypes=4, normalize=True):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 4), nn.ReLU(inplace=True))
        self.projection_head = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4), nn.ReLU(inplace=True),
                                             nn.Linear(4, output_dim))
        self.l2norm = normalize
        self.prototypes = nn.Linear(output_dim, nmb_prototypes, bias=False)

    def forward_backbone(self, x):
        return self.body(x)

    def forward_head(self, x):
        if self.projection_head is not None:
            x = self.projection_head(x)
        if self.l2norm:
            x = nn.functional.normalize(x, dim=1, p=2)
        if self.prototypes is not None:
            return x, self.prototypes(x)
        return x

    def forward(self, inputs):
        if not isinstance(inputs, list):
            inputs = [inputs]
        idx_crops = [len(inputs)]  # one resolution: every crop through the backbone at once
        start_idx = 0
        for end_idx in idx_crops:
            _out = self.forward_backbone(torch.cat(inputs[start_idx: end_idx]))
            if start_idx == 0:
                output = _out
            else:
                output = torch.cat((output, _out))
            start_idx = end_idx
        return self.forward_head(output)


@torch.no_grad()
def distributed_sinkhorn(out):
    Q = torch.exp(out / args.epsilon).t()  # Q is K-by-B for consistency with notations from our paper
    B = Q.shape[1] * args.world_size  # number of samples to assign
    K = Q.shape[0]  # how many prototypes

    # make the matrix sums to 1
    sum_Q = torch.sum(Q)
    Q /= sum_Q

    for it in range(args.sinkhorn_iterations):
        # normalize each row: total weight per prototype must be 1/K
        sum_of_rows = torch.sum(Q, dim=1, keepdim=True)
        Q /= sum_of_rows
        Q /= K

        # normalize each column: total weight per sample must be 1/B
        Q /= torch.sum(Q, dim=0, keepdim=True)
        Q /= B

    Q *= B  # the colomns must sum to 1 so that Q is an assignment
    return Q.t()


class Loss(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = ResNet()

    def forward(self, *inputs):
        inputs = list(inputs)
        # normalize the prototypes
        with torch.no_grad():
            w = self.model.prototypes.weight.data.clone()
            w = nn.functional.normalize(w, dim=1, p=2)
            self.model.prototypes.weight.copy_(w)

        embedding, output = self.model(inputs)
        embedding = embedding.detach()
        bs = inputs[0].size(0)

        loss = 0
        for i, crop_id in enumerate(args.crops_for_assign):
            with torch.no_grad():
                out = output[bs * crop_id: bs * (crop_id + 1)].detach()
                q = distributed_sinkhorn(out)[-bs:]

            subloss = 0
            for v in np.delete(np.arange(np.sum(args.nmb_crops)), crop_id):
                x = output[bs * v: bs * (v + 1)] / args.temperature
                subloss -= torch.mean(torch.sum(q * nn.functional.log_softmax(x, dim=1), dim=1))
            loss += subloss / (np.sum(args.nmb_crops) - 1)
        loss /= len(args.crops_for_assign)
        return loss


def example():
    g = torch.Generator().manual_seed(2)
    return tuple(torch.randn(3, 3, generator=g, dtype=torch.float64) for _ in range(3))
