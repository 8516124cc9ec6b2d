"""Hinton's knowledge distillation loss (haitongli/knowledge-distillation-pytorch, model/net.py: loss_fn_kd, and
train.py: train_kd), transcribed small: the teacher's logits computed under torch.no_grad() (the original
precomputes them once and feeds them back as data), nn.KLDivLoss() with its default reduction ('mean', every
element) between the student's log-softmax and the teacher's softmax at temperature T, scaled by alpha * T * T,
plus the hard-label F.cross_entropy weighted by 1 - alpha. The ResNet teacher and the small CNN student are stubbed
as MLPs (the student with dropout off: the student is in eval mode for its BatchNorm-free stub)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class params:
    alpha = 0.9
    temperature = 4


def loss_fn_kd(outputs, labels, teacher_outputs, params):
    """
    Compute the knowledge-distillation (KD) loss given outputs, labels.
    "Hyperparameters": temperature and alpha

    NOTE: the KL Divergence for PyTorch comparing the softmaxs of teacher
    and student expects the input tensor to be log probabilities! See Issue #2
    """
    alpha = params.alpha
    T = params.temperature
    KD_loss = nn.KLDivLoss()(F.log_softmax(outputs/T, dim=1),
                             F.softmax(teacher_outputs/T, dim=1)) * (alpha * T * T) + \
              F.cross_entropy(outputs, labels) * (1. - alpha)

    return KD_loss


class Loss(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 4))
        self.teacher_model = nn.Sequential(nn.Linear(3, 6), nn.ReLU(), nn.Linear(6, 6), nn.ReLU(), nn.Linear(6, 4))

    def forward(self, train_batch, labels_batch):
        output_batch = self.model(train_batch)
        with torch.no_grad():
            output_teacher_batch = self.teacher_model(train_batch)
        loss = loss_fn_kd(output_batch, labels_batch, output_teacher_batch, params)
        return loss


def example():
    g = torch.Generator().manual_seed(26)
    return torch.randn(5, 3, generator=g, dtype=torch.float64), torch.tensor([3, 0, 1, 2, 1])
