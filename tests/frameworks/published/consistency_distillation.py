"""Consistency distillation (openai/consistency_models, cm/karras_diffusion.py: KarrasDenoiser.consistency_losses
with a teacher, heun_solver under @th.no_grad(), target_denoise_fn under @th.no_grad(), the boundary-condition
scalings, append_dims, mean_flat), transcribed small: the student, its EMA target and the teacher are a small
time-conditioned MLP over (b, c, h, w); the noise and the step indices are passed in as data; l2 loss norm with
the uniform weighting the distillation runs use."""

import torch as th
import torch.nn as nn


def append_dims(x, target_dims):
    """Appends dimensions to the end of a tensor until it has target_dims dimensions."""
    dims_to_append = target_dims - x.ndim
    if dims_to_append < 0:
        raise ValueError(f"input has {x.ndim} dims but target_dims is {target_dims}, which is less")
    return x[(...,) + (None,) * dims_to_append]


def mean_flat(tensor):
    """Take the mean over all non-batch dimensions."""
    return tensor.mean(dim=list(range(1, len(tensor.shape))))


def get_weightings(weight_schedule, snrs, sigma_data):
    if weight_schedule == "snr":
        weightings = snrs
    elif weight_schedule == "snr+1":
        weightings = snrs + 1
    elif weight_schedule == "karras":
        weightings = snrs + 1.0 / sigma_data**2
    elif weight_schedule == "truncated-snr":
        weightings = th.clamp(snrs, min=1.0)
    elif weight_schedule == "uniform":
        weightings = th.ones_like(snrs)
    else:
        raise NotImplementedError()
    return weightings


class KarrasDenoiser:
    def __init__(self, sigma_data: float = 0.5, sigma_max=80.0, sigma_min=0.002, rho=7.0, weight_schedule="karras",
                 distillation=False, loss_norm="lpips"):
        self.sigma_data = sigma_data
        self.sigma_max = sigma_max
        self.sigma_min = sigma_min
        self.weight_schedule = weight_schedule
        self.distillation = distillation
        self.loss_norm = loss_norm
        self.rho = rho
        self.num_timesteps = 40

    def get_snr(self, sigmas):
        return sigmas**-2

    def get_scalings(self, sigma):
        c_skip = self.sigma_data**2 / (sigma**2 + self.sigma_data**2)
        c_out = sigma * self.sigma_data / (sigma**2 + self.sigma_data**2) ** 0.5
        c_in = 1 / (sigma**2 + self.sigma_data**2) ** 0.5
        return c_skip, c_out, c_in

    def get_scalings_for_boundary_condition(self, sigma):
        c_skip = self.sigma_data**2 / ((sigma - self.sigma_min) ** 2 + self.sigma_data**2)
        c_out = (sigma - self.sigma_min) * self.sigma_data / (sigma**2 + self.sigma_data**2) ** 0.5
        c_in = 1 / (sigma**2 + self.sigma_data**2) ** 0.5
        return c_skip, c_out, c_in

    def consistency_losses(self, model, x_start, num_scales, model_kwargs=None, target_model=None,
                           teacher_model=None, teacher_diffusion=None, noise=None, indices=None):
        if model_kwargs is None:
            model_kwargs = {}
        if noise is None:
            noise = th.randn_like(x_start)

        dims = x_start.ndim

        def denoise_fn(x, t):
            return self.denoise(model, x, t, **model_kwargs)[1]

        if target_model:

            @th.no_grad()
            def target_denoise_fn(x, t):
                return self.denoise(target_model, x, t, **model_kwargs)[1]

        else:
            raise NotImplementedError("Must have a target model")

        if teacher_model:

            @th.no_grad()
            def teacher_denoise_fn(x, t):
                return teacher_diffusion.denoise(teacher_model, x, t, **model_kwargs)[1]

        @th.no_grad()
        def heun_solver(samples, t, next_t, x0):
            x = samples
            if teacher_model is None:
                denoiser = x0
            else:
                denoiser = teacher_denoise_fn(x, t)

            d = (x - denoiser) / append_dims(t, dims)
            samples = x + d * append_dims(next_t - t, dims)
            if teacher_model is None:
                denoiser = x0
            else:
                denoiser = teacher_denoise_fn(samples, next_t)

            next_d = (samples - denoiser) / append_dims(next_t, dims)
            samples = x + (d + next_d) * append_dims((next_t - t) / 2, dims)

            return samples

        t = self.sigma_max ** (1 / self.rho) + indices / (num_scales - 1) * (
            self.sigma_min ** (1 / self.rho) - self.sigma_max ** (1 / self.rho)
        )
        t = t**self.rho

        t2 = self.sigma_max ** (1 / self.rho) + (indices + 1) / (num_scales - 1) * (
            self.sigma_min ** (1 / self.rho) - self.sigma_max ** (1 / self.rho)
        )
        t2 = t2**self.rho

        x_t = x_start + noise * append_dims(t, dims)

        distiller = denoise_fn(x_t, t)

        x_t2 = heun_solver(x_t, t, t2, x_start).detach()

        distiller_target = target_denoise_fn(x_t2, t2)
        distiller_target = distiller_target.detach()

        snrs = self.get_snr(t)
        weights = get_weightings(self.weight_schedule, snrs, self.sigma_data)
        if self.loss_norm == "l1":
            diffs = th.abs(distiller - distiller_target)
            loss = mean_flat(diffs) * weights
        elif self.loss_norm == "l2":
            diffs = (distiller - distiller_target) ** 2
            loss = mean_flat(diffs) * weights
        else:
            raise ValueError(f"Unknown loss norm {self.loss_norm}")

        terms = {}
        terms["loss"] = loss

        return terms

    def denoise(self, model, x_t, sigmas, **model_kwargs):
        if not self.distillation:
            c_skip, c_out, c_in = [append_dims(x, x_t.ndim) for x in self.get_scalings(sigmas)]
        else:
            c_skip, c_out, c_in = [append_dims(x, x_t.ndim) for x in self.get_scalings_for_boundary_condition(sigmas)]
        rescaled_t = 1000 * 0.25 * th.log(sigmas + 1e-44)
        model_output = model(c_in * x_t, rescaled_t, **model_kwargs)
        denoised = c_out * model_output + c_skip * x_t
        return model_output, denoised


class TinyUNet(nn.Module):
    """The U-Net stubbed: a time embedding added to an MLP over the flattened image."""

    def __init__(self, c=2, h=2, w=2):
        super().__init__()
        self.time_embed = nn.Sequential(nn.Linear(1, 4), nn.SiLU())
        self.inp = nn.Linear(c * h * w, 4)
        self.out = nn.Linear(4, c * h * w)

    def forward(self, x, timesteps):
        emb = self.time_embed(timesteps[:, None] / 1000.0)
        h = th.nn.functional.silu(self.inp(x.reshape(x.shape[0], -1)) + emb)
        return self.out(h).reshape(x.shape)


class Loss(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = TinyUNet()
        self.target_model = TinyUNet()
        self.target_model.load_state_dict(self.model.state_dict())
        for p in self.target_model.parameters():
            p.requires_grad = False
        self.teacher_model = TinyUNet()
        for p in self.teacher_model.parameters():
            p.requires_grad = False
        self.diffusion = KarrasDenoiser(sigma_data=0.5, sigma_max=80.0, sigma_min=0.002, distillation=True,
                                        weight_schedule="uniform", loss_norm="l2")
        self.teacher_diffusion = KarrasDenoiser(sigma_data=0.5, sigma_max=80.0, sigma_min=0.002,
                                                distillation=False, weight_schedule="karras")

    def forward(self, batch, noise, indices):
        losses = self.diffusion.consistency_losses(
            self.model, batch, 18, target_model=self.target_model, teacher_model=self.teacher_model,
            teacher_diffusion=self.teacher_diffusion, noise=noise, indices=indices)
        return losses["loss"].mean()


def example():
    g = th.Generator().manual_seed(9)
    return (th.randn(3, 2, 2, 2, generator=g, dtype=th.float64), th.randn(3, 2, 2, 2, generator=g, dtype=th.float64),
            th.tensor([2, 7, 15]))
