"""I-JEPA's loss (facebookresearch/ijepa, src/train.py with src/masks/utils.py and src/utils/tensors.py),
transcribed small: forward_target under torch.no_grad() (the target encoder, F.layer_norm over the feature axis,
apply_masks by torch.gather, repeat_interleave_batch by cat), forward_context (the context encoder on the kept
patches, a predictor with mask tokens and positional embeddings), F.smooth_l1_loss. The vision transformers are
stubbed as a patch embedding and an MLP block; the masks are passed in as index data."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def apply_masks(x, masks):
    """
    :param x: tensor of shape [B (batch-size), N (num-patches), D (feature-dim)]
    :param masks: list of tensors containing indices of patches in [N] to keep
    """
    all_x = []
    for m in masks:
        mask_keep = m.unsqueeze(-1).repeat(1, 1, x.size(-1))
        all_x += [torch.gather(x, dim=1, index=mask_keep)]
    return torch.cat(all_x, dim=0)


def repeat_interleave_batch(x, B, repeat):
    N = len(x) // B
    x = torch.cat([
        torch.cat([x[i*B:(i+1)*B] for _ in range(repeat)], dim=0)
        for i in range(N)
    ], dim=0)
    return x


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, dim), nn.GELU())

    def forward(self, x):
        return x + self.mlp(self.norm(x))


class VisionTransformer(nn.Module):
    def __init__(self, num_patches=4, patch_dim=3, embed_dim=4):
        super().__init__()
        self.patch_embed = nn.Linear(patch_dim, embed_dim)
        self.pos_embed = nn.Parameter(torch.randn(1, num_patches, embed_dim) * 0.1, requires_grad=False)
        self.blocks = nn.ModuleList([Block(embed_dim)])
        self.norm = nn.LayerNorm(embed_dim)

    def forward(self, x, masks=None):
        if masks is not None:
            if not isinstance(masks, list):
                masks = [masks]
        x = self.patch_embed(x)
        B, N, D = x.shape
        x = x + self.pos_embed
        if masks is not None:
            x = apply_masks(x, masks)
        for i, blk in enumerate(self.blocks):
            x = blk(x)
        if self.norm is not None:
            x = self.norm(x)
        return x


class VisionTransformerPredictor(nn.Module):
    def __init__(self, num_patches=4, embed_dim=4, predictor_embed_dim=3):
        super().__init__()
        self.predictor_embed = nn.Linear(embed_dim, predictor_embed_dim, bias=True)
        self.mask_token = nn.Parameter(torch.zeros(1, 1, predictor_embed_dim))
        self.predictor_pos_embed = nn.Parameter(torch.randn(1, num_patches, predictor_embed_dim) * 0.1,
                                                requires_grad=False)
        self.predictor_blocks = nn.ModuleList([Block(predictor_embed_dim)])
        self.predictor_norm = nn.LayerNorm(predictor_embed_dim)
        self.predictor_proj = nn.Linear(predictor_embed_dim, embed_dim, bias=True)

    def forward(self, x, masks_x, masks):
        assert (masks is not None) and (masks_x is not None), 'Cannot run predictor without mask indices'
        if not isinstance(masks_x, list):
            masks_x = [masks_x]
        if not isinstance(masks, list):
            masks = [masks]
        B = len(x) // len(masks_x)
        x = self.predictor_embed(x)
        x_pos_embed = self.predictor_pos_embed.repeat(B, 1, 1)
        x += apply_masks(x_pos_embed, masks_x)
        _, N_ctxt, D = x.shape
        pos_embs = self.predictor_pos_embed.repeat(B, 1, 1)
        pos_embs = apply_masks(pos_embs, masks)
        pos_embs = repeat_interleave_batch(pos_embs, B, repeat=len(masks_x))
        pred_tokens = self.mask_token.repeat(pos_embs.size(0), pos_embs.size(1), 1)
        pred_tokens += pos_embs
        x = x.repeat(len(masks), 1, 1)
        x = torch.cat([x, pred_tokens], dim=1)
        for blk in self.predictor_blocks:
            x = blk(x)
        x = self.predictor_norm(x)
        x = x[:, N_ctxt:]
        x = self.predictor_proj(x)
        return x


class Loss(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = VisionTransformer()
        self.predictor = VisionTransformerPredictor()
        self.target_encoder = VisionTransformer()
        self.target_encoder.load_state_dict(self.encoder.state_dict())
        for p in self.target_encoder.parameters():
            p.requires_grad = False

    def forward(self, imgs, mask_enc, mask_pred_1, mask_pred_2):
        masks_enc = [mask_enc]
        masks_pred = [mask_pred_1, mask_pred_2]

        def forward_target():
            with torch.no_grad():
                h = self.target_encoder(imgs)
                h = F.layer_norm(h, (h.size(-1),))  # normalize over feature-dim
                B = len(h)
                # -- create targets (masked regions of h)
                h = apply_masks(h, masks_pred)
                h = repeat_interleave_batch(h, B, repeat=len(masks_enc))
                return h

        def forward_context():
            z = self.encoder(imgs, masks_enc)
            z = self.predictor(z, masks_enc, masks_pred)
            return z

        def loss_fn(z, h):
            loss = F.smooth_l1_loss(z, h)
            return loss

        h = forward_target()
        z = forward_context()
        loss = loss_fn(z, h)
        return loss


def example():
    g = torch.Generator().manual_seed(7)
    imgs = torch.randn(2, 4, 3, generator=g, dtype=torch.float64)
    return imgs, torch.tensor([[0, 1], [0, 2]]), torch.tensor([[2, 3], [1, 3]]), torch.tensor([[3, 1], [3, 0]])
