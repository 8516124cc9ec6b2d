"""Mean Teacher's training loss (CuriousAI/mean-teacher, pytorch/main.py: train, with mean_teacher/losses.py
softmax_mse_loss and symmetric_mse_loss, and ramps.sigmoid_rampup), transcribed small: the EMA teacher's logits
taken with .detach() (Variable(ema_logit.detach().data, requires_grad=False) in the original), the classification
cross-entropy summing over the labelled samples only (ignore_index=NO_LABEL), the consistency cost between the
student's and teacher's softmaxes ramped up by epoch, and the residual cost between the student's two heads. The
convnet is stubbed as an MLP with two heads; the teacher is an nn.Module updated only by its moving average."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

NO_LABEL = -1


class args:
    consistency = 10.0
    consistency_rampup = 5
    logit_distance_cost = 0.01


def sigmoid_rampup(current, rampup_length):
    """Exponential rampup from https://arxiv.org/abs/1610.02242"""
    if rampup_length == 0:
        return 1.0
    else:
        current = np.clip(current, 0.0, rampup_length)
        phase = 1.0 - current / rampup_length
        return float(np.exp(-5.0 * phase * phase))


def get_current_consistency_weight(epoch):
    # Consistency ramp-up from https://arxiv.org/abs/1610.02242
    return args.consistency * sigmoid_rampup(epoch, args.consistency_rampup)


def softmax_mse_loss(input_logits, target_logits):
    """Takes softmax on both sides and returns MSE loss"""
    assert input_logits.size() == target_logits.size()
    input_softmax = F.softmax(input_logits, dim=1)
    target_softmax = F.softmax(target_logits, dim=1)
    num_classes = input_logits.size()[1]
    return F.mse_loss(input_softmax, target_softmax, reduction='sum') / num_classes


def symmetric_mse_loss(input1, input2):
    """Like F.mse_loss but sends gradients to both directions"""
    assert input1.size() == input2.size()
    num_classes = input1.size()[1]
    return torch.sum((input1 - input2)**2) / num_classes


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 5), nn.LeakyReLU(0.1))
        self.fc1 = nn.Linear(5, 3)
        self.fc2 = nn.Linear(5, 3)

    def forward(self, x):
        h = self.body(x)
        return self.fc1(h), self.fc2(h)


class Loss(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = Net()
        self.ema_model = Net()
        for param in self.ema_model.parameters():
            param.detach_()

    def forward(self, input, ema_input, target, epoch):
        class_criterion = nn.CrossEntropyLoss(reduction='sum', ignore_index=NO_LABEL)
        residual_logit_criterion = symmetric_mse_loss
        consistency_criterion = softmax_mse_loss
        minibatch_size = len(target)

        ema_model_out = self.ema_model(ema_input)
        model_out = self.model(input)

        logit1, logit2 = model_out
        ema_logit, _ = ema_model_out
        class_logit, cons_logit = logit1, logit2
        res_loss = args.logit_distance_cost * residual_logit_criterion(class_logit, cons_logit) / minibatch_size
        ema_logit = ema_logit.detach()

        class_loss = class_criterion(class_logit, target) / minibatch_size

        consistency_weight = get_current_consistency_weight(epoch)
        consistency_loss = consistency_weight * consistency_criterion(cons_logit, ema_logit) / minibatch_size

        loss = class_loss + consistency_loss + res_loss
        return loss


def example():
    g = torch.Generator().manual_seed(23)
    x = torch.randn(5, 3, generator=g, dtype=torch.float64)
    return x, x + 0.1 * torch.randn(5, 3, generator=g, dtype=torch.float64), torch.tensor([1, NO_LABEL, 0, NO_LABEL, 2]), 2
