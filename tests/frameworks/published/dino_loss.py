"""DINO's self-distillation loss (facebookresearch/dino, main_dino.py: DINOLoss), transcribed small: a student and a
teacher stubbed as small MLPs with DINO's head (l2-normalised bottleneck, last linear), multi-crop views, the
teacher's softmax centred and sharpened, its output detached, the centre updated under torch.no_grad()."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class DINOHead(nn.Module):
    def __init__(self, in_dim, out_dim, hidden_dim=6, bottleneck_dim=3):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(in_dim, hidden_dim), nn.GELU(), nn.Linear(hidden_dim, bottleneck_dim))
        self.last_layer = nn.Linear(bottleneck_dim, out_dim, bias=False)

    def forward(self, x):
        x = self.mlp(x)
        x = nn.functional.normalize(x, dim=-1, p=2)
        x = self.last_layer(x)
        return x


class MultiCropWrapper(nn.Module):
    def __init__(self, backbone, head):
        super().__init__()
        self.backbone = backbone
        self.head = head

    def forward(self, x):
        if not isinstance(x, list):
            x = [x]
        output = self.backbone(torch.cat(x))
        return self.head(output)


class DINOLoss(nn.Module):
    def __init__(self, out_dim, ncrops, warmup_teacher_temp, teacher_temp, warmup_teacher_temp_epochs, nepochs,
                 student_temp=0.1, center_momentum=0.9):
        super().__init__()
        self.student_temp = student_temp
        self.center_momentum = center_momentum
        self.ncrops = ncrops
        self.register_buffer("center", torch.zeros(1, out_dim))
        self.teacher_temp_schedule = np.concatenate((
            np.linspace(warmup_teacher_temp, teacher_temp, warmup_teacher_temp_epochs),
            np.ones(nepochs - warmup_teacher_temp_epochs) * teacher_temp
        ))

    def forward(self, student_output, teacher_output, epoch):
        student_out = student_output / self.student_temp
        student_out = student_out.chunk(self.ncrops)

        # teacher centering and sharpening
        temp = self.teacher_temp_schedule[epoch]
        teacher_out = F.softmax((teacher_output - self.center) / temp, dim=-1)
        teacher_out = teacher_out.detach().chunk(2)

        total_loss = 0
        n_loss_terms = 0
        for iq, q in enumerate(teacher_out):
            for v in range(len(student_out)):
                if v == iq:
                    continue
                loss = torch.sum(-q * F.log_softmax(student_out[v], dim=-1), dim=-1)
                total_loss += loss.mean()
                n_loss_terms += 1
        total_loss /= n_loss_terms
        self.update_center(teacher_output)
        return total_loss

    @torch.no_grad()
    def update_center(self, teacher_output):
        batch_center = torch.sum(teacher_output, dim=0, keepdim=True)
        batch_center = batch_center / len(teacher_output)
        self.center = self.center * self.center_momentum + batch_center * (1 - self.center_momentum)


class Loss(nn.Module):
    """One training step's loss: teacher on the two global crops, student on all crops."""

    def __init__(self):
        super().__init__()
        self.student = MultiCropWrapper(nn.Sequential(nn.Linear(3, 4), nn.GELU()), DINOHead(4, 5))
        self.teacher = MultiCropWrapper(nn.Sequential(nn.Linear(3, 4), nn.GELU()), DINOHead(4, 5))
        self.teacher.load_state_dict(self.student.state_dict())
        for p in self.teacher.parameters():
            p.requires_grad = False
        self.dino_loss = DINOLoss(5, 4, 0.04, 0.07, 3, 10)

    def forward(self, epoch, *images):
        images = list(images)
        teacher_output = self.teacher(images[:2])
        student_output = self.student(images)
        return self.dino_loss(student_output, teacher_output, epoch)


def example():
    g = torch.Generator().manual_seed(0)
    return (1, *(torch.randn(2, 3, generator=g, dtype=torch.float64) for _ in range(4)))
