"""BYOL in PyTorch (lucidrains/byol-pytorch, byol_pytorch/byol_pytorch.py: loss_fn, MLP, NetWrapper, BYOL.forward),
transcribed small: the hidden layer read by a forward hook (layer=-2), a projector MLP with BatchNorm1d and
ReLU(inplace=True), the online predictor, the target encoder a deepcopy of the online one run under
torch.no_grad() with .detach() and detach_(), both views through one concatenated batch, and loss_fn on
F.normalize'd vectors. The backbone is stubbed as a small MLP; the two augmented views (augment1(x), augment2(x),
random) are passed in as data."""

import copy

import torch
import torch.nn.functional as F
from torch import nn


def default(val, def_val):
    return def_val if val is None else val


def flatten(t):
    return t.reshape(t.shape[0], -1)


def set_requires_grad(model, val):
    for p in model.parameters():
        p.requires_grad = val


# loss fn

def loss_fn(x, y):
    x = F.normalize(x, dim=-1, p=2)
    y = F.normalize(y, dim=-1, p=2)
    return 2 - 2 * (x * y).sum(dim=-1)


# MLP class for projector and predictor

def MLP(dim, projection_size, hidden_size=4096):
    return nn.Sequential(
        nn.Linear(dim, hidden_size),
        nn.BatchNorm1d(hidden_size),
        nn.ReLU(inplace=True),
        nn.Linear(hidden_size, projection_size)
    )


# a wrapper class for the base neural network
# will manage the interception of the hidden layer output
# and pipe it into the projecter and predictor nets

class NetWrapper(nn.Module):
    def __init__(self, net, projection_size, projection_hidden_size, layer=-2, representation_dim=5):
        super().__init__()
        self.net = net
        self.layer = layer

        self.projection_size = projection_size
        self.projection_hidden_size = projection_hidden_size
        # built here at the stub's known width (byol-pytorch builds it lazily on the first call)
        self.projector = MLP(representation_dim, projection_size, projection_hidden_size)

        self.hidden = {}
        self.hook_registered = False

    def _find_layer(self):
        if type(self.layer) == str:
            modules = dict([*self.net.named_modules()])
            return modules.get(self.layer, None)
        elif type(self.layer) == int:
            children = [*self.net.children()]
            return children[self.layer]
        return None

    def _hook(self, _, input, output):
        device = input[0].device
        self.hidden[device] = flatten(output)

    def _register_hook(self):
        layer = self._find_layer()
        assert layer is not None, f'hidden layer ({self.layer}) not found'
        handle = layer.register_forward_hook(self._hook)
        self.hook_registered = True

    def get_representation(self, x):
        if self.layer == -1:
            return self.net(x)

        if not self.hook_registered:
            self._register_hook()

        self.hidden.clear()
        _ = self.net(x)
        hidden = self.hidden[x.device]
        self.hidden.clear()

        assert hidden is not None, f'hidden layer {self.layer} never emitted an output'
        return hidden

    def forward(self, x, return_projection=True):
        representation = self.get_representation(x)

        if not return_projection:
            return representation

        projection = self.projector(representation)
        return projection, representation


class BYOL(nn.Module):
    def __init__(self, net, hidden_layer=-2, projection_size=256, projection_hidden_size=4096,
                 moving_average_decay=0.99, use_momentum=True):
        super().__init__()
        self.net = net
        self.online_encoder = NetWrapper(net, projection_size, projection_hidden_size, layer=hidden_layer)
        self.use_momentum = use_momentum
        # byol-pytorch's _get_target_encoder (a singleton deepcopy), made at construction here
        self.target_encoder = copy.deepcopy(self.online_encoder)
        set_requires_grad(self.target_encoder, False)
        self.online_predictor = MLP(projection_size, projection_size, projection_hidden_size)

    def forward(self, image_one, image_two):
        assert not (self.training and image_one.shape[0] == 1), 'you must have greater than 1 sample when training, due to the batchnorm in the projection layer'

        images = torch.cat((image_one, image_two), dim = 0)

        online_projections, _ = self.online_encoder(images)
        online_predictions = self.online_predictor(online_projections)

        online_pred_one, online_pred_two = online_predictions.chunk(2, dim = 0)

        with torch.no_grad():
            target_encoder = self.target_encoder if self.use_momentum else self.online_encoder

            target_projections, _ = target_encoder(images)
            target_projections = target_projections.detach()

            target_proj_one, target_proj_two = target_projections.chunk(2, dim = 0)

        loss_one = loss_fn(online_pred_one, target_proj_two.detach())
        loss_two = loss_fn(online_pred_two, target_proj_one.detach())

        loss = loss_one + loss_two
        return loss.mean()


class Loss(nn.Module):
    def __init__(self):
        super().__init__()
        backbone = nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 3))
        self.learner = BYOL(backbone, hidden_layer=-2, projection_size=3, projection_hidden_size=4)

    def forward(self, image_one, image_two):
        return self.learner(image_one, image_two)


def example():
    g = torch.Generator().manual_seed(14)
    return torch.randn(3, 6, generator=g, dtype=torch.float64), torch.randn(3, 6, generator=g, dtype=torch.float64)
