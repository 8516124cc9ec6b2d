"""SimSiam (facebookresearch/simsiam, simsiam/builder.py: SimSiam, and the loss of main_simsiam.py: train),
transcribed small: the encoder's fc replaced by SimSiam's 3-layer projector (BatchNorm1d, ReLU(inplace=True), the
last BatchNorm1d without affine), the 2-layer predictor, z1.detach() and z2.detach() returned by the builder, and
the negative cosine similarity of main_simsiam.py. The ResNet backbone is stubbed as one linear layer + ReLU with
an `fc` head; the two augmented views are passed in as data."""

import torch
import torch.nn as nn


class TinyResNet(nn.Module):
    """A stand-in for torchvision's resnet: a body, then `fc` (what SimSiam replaces)."""

    def __init__(self, num_classes=4, zero_init_residual=True):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 5), nn.ReLU())
        self.fc = nn.Linear(5, num_classes)

    def forward(self, x):
        return self.fc(self.body(x))


class SimSiam(nn.Module):
    """
    Build a SimSiam model.
    """
    def __init__(self, base_encoder, dim=2048, pred_dim=512):
        """
        dim: feature dimension (default: 2048)
        pred_dim: hidden dimension of the predictor (default: 512)
        """
        super(SimSiam, self).__init__()

        # create the encoder
        # num_classes is the output fc dimension, zero-initialize last BNs
        self.encoder = base_encoder(num_classes=dim, zero_init_residual=True)

        # build a 3-layer projector
        prev_dim = self.encoder.fc.weight.shape[1]
        self.encoder.fc = nn.Sequential(nn.Linear(prev_dim, prev_dim, bias=False),
                                        nn.BatchNorm1d(prev_dim),
                                        nn.ReLU(inplace=True), # first layer
                                        nn.Linear(prev_dim, prev_dim, bias=False),
                                        nn.BatchNorm1d(prev_dim),
                                        nn.ReLU(inplace=True), # second layer
                                        self.encoder.fc,
                                        nn.BatchNorm1d(dim, affine=False)) # output layer
        self.encoder.fc[6].bias.requires_grad = False # hack: not use bias as it is followed by BN

        # build a 2-layer predictor
        self.predictor = nn.Sequential(nn.Linear(dim, pred_dim, bias=False),
                                        nn.BatchNorm1d(pred_dim),
                                        nn.ReLU(inplace=True), # hidden layer
                                        nn.Linear(pred_dim, dim)) # output layer

    def forward(self, x1, x2):
        """
        Input:
            x1: first views of images
            x2: second views of images
        Output:
            p1, p2, z1, z2: predictors and targets of the network
            See Sec. 3 of https://arxiv.org/abs/2011.10566 for detailed notations
        """

        # compute features for one view
        z1 = self.encoder(x1) # NxC
        z2 = self.encoder(x2) # NxC

        p1 = self.predictor(z1) # NxC
        p2 = self.predictor(z2) # NxC

        return p1, p2, z1.detach(), z2.detach()


class Loss(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = SimSiam(TinyResNet, dim=4, pred_dim=3)
        self.criterion = nn.CosineSimilarity(dim=1)

    def forward(self, images_0, images_1):
        # compute output and loss
        p1, p2, z1, z2 = self.model(x1=images_0, x2=images_1)
        loss = -(self.criterion(p1, z2).mean() + self.criterion(p2, z1).mean()) * 0.5
        return loss


def example():
    g = torch.Generator().manual_seed(11)
    return torch.randn(5, 6, generator=g, dtype=torch.float64), torch.randn(5, 6, generator=g, dtype=torch.float64)
