"""DeiT's distillation loss (facebookresearch/deit, losses.py: DistillationLoss.forward, 'soft'; 'hard' in
HardLoss), with timm's
LabelSmoothingCrossEntropy (timm/loss/cross_entropy.py) as its base criterion, transcribed small: the student's
class and distillation heads, the teacher run under torch.no_grad(), F.kl_div of the two log-softmaxes at
temperature tau with reduction='sum' and log_target=True scaled by T * T / numel, and the label-smoothed
cross-entropy written with log_softmax, gather and mean. The DeiT student and the RegNet teacher are stubbed as
small MLPs (the student returns its two heads as a tuple, as DeiT's distilled model does in training)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class LabelSmoothingCrossEntropy(nn.Module):
    """ NLL loss with label smoothing.
    """
    def __init__(self, smoothing=0.1):
        super(LabelSmoothingCrossEntropy, self).__init__()
        assert smoothing < 1.0
        self.smoothing = smoothing
        self.confidence = 1. - smoothing

    def forward(self, x: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        logprobs = F.log_softmax(x, dim=-1)
        nll_loss = -logprobs.gather(dim=-1, index=target.unsqueeze(1))
        nll_loss = nll_loss.squeeze(1)
        smooth_loss = -logprobs.mean(dim=-1)
        loss = self.confidence * nll_loss + self.smoothing * smooth_loss
        return loss.mean()


class DistillationLoss(torch.nn.Module):
    """
    This module wraps a standard criterion and adds an extra knowledge distillation loss by
    taking a teacher model prediction and using it as additional supervision.
    """
    def __init__(self, base_criterion: torch.nn.Module, teacher_model: torch.nn.Module,
                 distillation_type: str, alpha: float, tau: float):
        super().__init__()
        self.base_criterion = base_criterion
        self.teacher_model = teacher_model
        assert distillation_type in ['none', 'soft', 'hard']
        self.distillation_type = distillation_type
        self.alpha = alpha
        self.tau = tau

    def forward(self, inputs, outputs, labels):
        outputs_kd = None
        if not isinstance(outputs, torch.Tensor):
            # assume that the model outputs a tuple of [outputs, outputs_kd]
            outputs, outputs_kd = outputs
        base_loss = self.base_criterion(outputs, labels)
        if self.distillation_type == 'none':
            return base_loss

        if outputs_kd is None:
            raise ValueError("When knowledge distillation is enabled, the model is "
                             "expected to return a Tuple[Tensor, Tensor] with the output of the "
                             "class_token and the dist_token")
        # don't backprop throught the teacher
        with torch.no_grad():
            teacher_outputs = self.teacher_model(inputs)

        if self.distillation_type == 'soft':
            T = self.tau
            # taken from https://github.com/peterliht/knowledge-distillation-pytorch/blob/master/model/net.py#L100
            # with slight modifications
            distillation_loss = F.kl_div(
                F.log_softmax(outputs_kd / T, dim=1),
                #We provide the teacher's targets in log probability because we use log_target=True
                #(as recommended in pytorch https://github.com/pytorch/pytorch/blob/9324181d0ac7b4f7949a574dbc3e8be30abe7041/torch/nn/functional.py#L2719)
                #but it is possible to give just the probabilities and set log_target=False. In our experiments we tried both.
                F.log_softmax(teacher_outputs / T, dim=1),
                reduction='sum',
                log_target=True
            ) * (T * T) / outputs_kd.numel()
            #We divide by outputs_kd.numel() to have the legacy PyTorch behavior.
            #But we also experiments output_kd.size(0)
            #see issue 61(https://github.com/facebookresearch/deit/issues/61) for more details
        elif self.distillation_type == 'hard':
            distillation_loss = F.cross_entropy(outputs_kd, teacher_outputs.argmax(dim=1))

        loss = base_loss * (1 - self.alpha) + distillation_loss * self.alpha
        return loss


class Student(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 5), nn.GELU(), nn.LayerNorm(5))
        self.head = nn.Linear(5, 4)
        self.head_dist = nn.Linear(5, 4)

    def forward(self, x):
        h = self.body(x)
        return self.head(h), self.head_dist(h)


class Loss(nn.Module):
    def __init__(self, distillation_type='soft'):
        super().__init__()
        self.model = Student()
        teacher = nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 4))
        self.criterion = DistillationLoss(LabelSmoothingCrossEntropy(smoothing=0.1), teacher, distillation_type,
                                          alpha=0.5, tau=2.0)

    def forward(self, samples, targets):
        outputs = self.model(samples)
        return self.criterion(samples, outputs, targets)


class HardLoss(Loss):
    """DeiT's 'hard' distillation: cross-entropy against the teacher's argmax (a pseudo-label)."""
    def __init__(self):
        super().__init__('hard')


def example():
    g = torch.Generator().manual_seed(25)
    return torch.randn(4, 3, generator=g, dtype=torch.float64), torch.tensor([3, 0, 1, 1])
