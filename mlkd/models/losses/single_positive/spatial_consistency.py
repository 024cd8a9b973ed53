"""SCL: class maps consistent with per-image running-average heatmaps (Verelst et al., WACV 2023).

Paper: Verelst et al., "Spatial Consistency Loss for Training Multi-Label Classifiers from
Single-Label Annotations", WACV 2023 (arXiv 2203.06127). What is reconstructed, and every switch,
is listed in ``docs/methods.md`` §3.3 / §3.5; the consistency distances and the running average
are shared with CL (:mod:`.consistency`).

Geometry: the heatmaps ``H_n`` are kept in the full-image frame at 2× the feature resolution,
stored as uint8. The heatmap region under the random crop (``crop_box``, ``flip``) is resampled
onto the class-map grid to give the target (:func:`read_heatmaps`); after the comparison the class
maps are resampled back onto the heatmap cells inside the crop, which are updated by the EMA
(:func:`write_heatmaps`). Cells never seen give no loss.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from mmengine.logging import MMLogger

from mlkd.registry import MODELS

from ..base import RoutedLoss, StatefulLoss
from ..utils import check_choice
from .consistency import DISTANCES, check_momentum, consistency_loss, ema_update, last_occurrence


def crop_grid(crop_box: torch.Tensor, flip: torch.Tensor, size: tuple[int, int]) -> torch.Tensor:
    """``grid_sample`` grid ``[B, h, w, 2]`` of the full-image positions of a crop's output cells.

    Args:
        crop_box: ``[B, 4]`` normalised ``(x1, y1, x2, y2)`` of the crop in the full image.
        flip: ``[B]`` bool, the crop was mirrored horizontally after cropping.
        size: ``(h, w)`` of the output grid.

    Returns:
        Coordinates in ``[-1, 1]`` (``align_corners=False`` convention): cell ``(i, j)`` of the
        output is at full-image ``x = x1 + (j' + 0.5)/w · (x2 − x1)`` with ``j' = w−1−j`` if flipped.
    """
    h, w = size
    device = crop_box.device
    u = (torch.arange(w, device=device, dtype=torch.float32) + 0.5) / w  # [w]
    v = (torch.arange(h, device=device, dtype=torch.float32) + 0.5) / h  # [h]
    u = torch.where(flip[:, None], 1 - u[None], u[None])  # [B, w]
    x1, y1, x2, y2 = crop_box.float().unbind(1)
    x = x1[:, None] + u * (x2 - x1)[:, None]  # [B, w]
    y = y1[:, None] + v[None] * (y2 - y1)[:, None]  # [B, h]
    grid = torch.stack(torch.broadcast_tensors(x[:, None, :], y[:, :, None]), dim=-1)
    return grid * 2 - 1


def heatmap_cell_grid(
    crop_box: torch.Tensor, flip: torch.Tensor, size: tuple[int, int]
) -> tuple[torch.Tensor, torch.Tensor]:
    """Where each heatmap cell falls in the crop's output: ``(grid [B, H, W, 2], inside [B, H, W])``.

    The inverse of :func:`crop_grid`: heatmap cell ``(a, b)`` (centre at full-image
    ``((b + 0.5)/W, (a + 0.5)/H)``) lies at crop position ``(x − x1)/(x2 − x1)`` (mirrored if
    flipped); ``inside`` marks the cells whose centre lies within the crop.
    """
    h, w = size
    device = crop_box.device
    x = (torch.arange(w, device=device, dtype=torch.float32) + 0.5) / w
    y = (torch.arange(h, device=device, dtype=torch.float32) + 0.5) / h
    x1, y1, x2, y2 = crop_box.float().unbind(1)
    u = (x[None] - x1[:, None]) / (x2 - x1)[:, None]  # [B, W]
    v = (y[None] - y1[:, None]) / (y2 - y1)[:, None]  # [B, H]
    inside = ((u >= 0) & (u <= 1))[:, None, :] & ((v >= 0) & (v <= 1))[:, :, None]
    u = torch.where(flip[:, None], 1 - u, u)
    grid = torch.stack(torch.broadcast_tensors(u[:, None, :], v[:, :, None]), dim=-1)
    return grid * 2 - 1, inside


def read_heatmaps(
    heatmaps: torch.Tensor,
    known: torch.Tensor,
    crop_box: torch.Tensor,
    flip: torch.Tensor,
    size: tuple[int, int],
) -> tuple[torch.Tensor, torch.Tensor]:
    """Target maps of a batch: the heatmap region under each crop, on the class-map grid.

    Args:
        heatmaps: ``[B, K, H, W]`` uint8 (0..255 = probability 0..1), full-image frame.
        known: ``[B, H, W]`` bool, cells written at least once.
        crop_box, flip: as :func:`crop_grid`.
        size: ``(h, w)`` of the class maps.

    Returns:
        ``(targets [B, K, h, w]`` float in [0, 1], ``known [B, 1, h, w]`` bool): bilinear samples; a
        class-map cell is known when every heatmap cell it interpolates from is.
    """
    grid = crop_grid(crop_box, flip, size).to(heatmaps.device)
    targets = F.grid_sample(
        heatmaps.float() / 255, grid, mode='bilinear', padding_mode='border', align_corners=False
    )
    coverage = F.grid_sample(
        known[:, None].float(), grid, mode='bilinear', padding_mode='border', align_corners=False
    )
    return targets, coverage > 1 - 1e-4


def write_heatmaps(
    heatmaps: torch.Tensor,
    known: torch.Tensor,
    probs: torch.Tensor,
    crop_box: torch.Tensor,
    flip: torch.Tensor,
    momentum: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """EMA-update the heatmap cells inside each crop with the crop's class maps.

    Args:
        heatmaps: ``[B, K, H, W]`` uint8 rows of the store; ``known``: ``[B, H, W]`` bool.
        probs: ``[B, K, h, w]`` class-map probabilities (detached).
        crop_box, flip: as :func:`crop_grid`; momentum: ``μ``.

    Returns:
        The new ``(heatmaps, known)`` rows (uint8 rounded to nearest, bool).
    """
    grid, inside = heatmap_cell_grid(crop_box, flip, tuple(heatmaps.shape[-2:]))
    new = F.grid_sample(
        probs.float(), grid, mode='bilinear', padding_mode='border', align_corners=False
    ).to(heatmaps.device)
    inside = inside.to(heatmaps.device)
    old = heatmaps.float() / 255
    updated = ema_update(old, new, known[:, None], momentum)
    values = torch.where(inside[:, None], updated, old)
    return (values * 255).round().clamp(0, 255).to(torch.uint8), known | inside


@MODELS.register_module()
class SpatialConsistencyLoss(RoutedLoss, StatefulLoss):
    """SCL: class maps consistent with per-image running-average heatmaps in the full-image frame.

    Inputs: ``class_maps`` ``[B, C, h, w]`` (logits per position; supplied by
    :class:`~mlkd.models.algorithms.ClassifierWithLosses`), ``sample_idx``, ``crop_box`` ``[B, 4]``
    normalised, ``flip`` ``[B]`` (both from ``PackInputs(meta_keys=CROP_META_KEYS)`` after
    :class:`~mlkd.datasets.transforms.RandomResizedCropWithBox`; a sample without them counts as
    the uncropped, unflipped image), and ``logits`` (top-k mode only).

    Store (host memory: ``register_state(..., host=True)`` keeps it out of ``.to(device)`` and
    DDP's buffers, and in checkpoints): ``heatmaps`` ``[N, K, H, W]`` uint8 with
    ``K = C`` (or ``top_k``), ``known`` ``[N, H, W]`` bool. ``H × W`` defaults to 2× the feature
    map of the probe input (the training crop size): 448 → 14×14 features → 28×28 heatmaps. The
    store's size is logged when the loss is built.

    Top-k mode (the SCL supplement §G, ImageNet): only ``top_k`` classes per image get a heatmap. The classes are
    those with the highest image-level EMA score ``s_n`` (kept as float16 ``[N, C]``, in host memory)
    at the sample's ``select_after``-th visit (the paper: after 5 epochs); before that the image
    gives no SCL; after it, the other classes' targets are 0 everywhere. ``heatmap_classes``
    ``[N, K]`` holds the choice (``-1``: not chosen yet).

    Args:
        num_samples: training set size ``N``.
        num_classes: ``C`` (injected); shapes: probed sizes (injected, for the default size).
        heatmap_size: ``(H, W)`` of the store; ``None`` = 2× the probed ``feats`` size.
        momentum: ``μ`` of the heatmap EMA (per visit of a cell).
        distance: as :class:`ConsistencyLoss`.
        top_k: ``None`` (every class) or the number of classes kept per image.
        select_after: visits after which the top-k classes are chosen.
    """

    def __init__(
        self,
        num_samples: int,
        num_classes: int,
        shapes: dict | None = None,
        heatmap_size: int | tuple[int, int] | None = None,
        momentum: float = 0.9,
        distance: str = 'l2',
        top_k: int | None = None,
        select_after: int = 5,
        loss_weight: float = 1.0,
    ) -> None:
        super().__init__(loss_weight)
        self.num_samples, self.num_classes = int(num_samples), int(num_classes)
        self.momentum = check_momentum(momentum)
        self.distance = check_choice('distance', distance, DISTANCES)
        self.heatmap_size = self._size(heatmap_size, shapes)
        self.top_k = None if top_k is None else int(top_k)
        if self.top_k is not None and not 0 < self.top_k <= self.num_classes:
            raise ValueError(f'top_k must be in [1, num_classes={self.num_classes}], got {top_k}')
        self.select_after = int(select_after)
        stored = self.top_k or self.num_classes
        height, width = self.heatmap_size
        store = dict(
            heatmaps=torch.zeros(self.num_samples, stored, height, width, dtype=torch.uint8),
            known=torch.zeros(self.num_samples, height, width, dtype=torch.bool),
        )
        if self.top_k is not None:
            store.update(
                scores=torch.zeros(self.num_samples, self.num_classes, dtype=torch.float16),
                visits=torch.zeros(self.num_samples, dtype=torch.int32),
                heatmap_classes=torch.full((self.num_samples, stored), -1, dtype=torch.long),
            )
        for name, value in store.items():
            self.register_state(name, value, 'sample', host=True)
        megabytes = sum(v.numel() * v.element_size() for v in store.values()) / 2**20
        MMLogger.get_current_instance().info(
            f'SpatialConsistencyLoss: heatmap store {self.num_samples} images x {stored} classes '
            f'x {height}x{width} uint8 ({megabytes:.1f} MiB with its masks) in host memory'
        )

    @staticmethod
    def _size(heatmap_size, shapes) -> tuple[int, int]:
        if heatmap_size is not None:
            size = (heatmap_size, heatmap_size) if isinstance(heatmap_size, int) else heatmap_size
            return int(size[0]), int(size[1])
        feats = (shapes or {}).get('feats')
        if feats and isinstance(feats[0], tuple):  # a backbone returning a tuple of stages
            feats = feats[-1]
        if not feats or len(feats) != 4:
            raise ValueError(
                'SpatialConsistencyLoss: heatmap_size not given and no probed 4-D '
                f'`feats` shape to derive it from (got {feats!r}); set heatmap_size'
            )
        return 2 * feats[2], 2 * feats[3]

    def compute(
        self,
        class_maps: torch.Tensor,
        sample_idx: torch.Tensor,
        crop_box: torch.Tensor,
        flip: torch.Tensor,
        logits: torch.Tensor | None = None,
    ) -> torch.Tensor:
        self.check_sample_idx(sample_idx, self.num_samples)
        if class_maps.dim() != 4 or class_maps.shape[1] != self.num_classes:
            raise ValueError(
                f'SpatialConsistencyLoss: class_maps must be [B, {self.num_classes}, '
                f'h, w], got {tuple(class_maps.shape)}'
            )
        probs = torch.sigmoid(class_maps)
        rows = sample_idx.cpu()
        box, flipped = crop_box.detach().float().cpu(), flip.detach().bool().cpu()
        size = tuple(probs.shape[-2:])
        if self.top_k is not None:
            if logits is None:
                raise ValueError('SpatialConsistencyLoss(top_k=...) needs `logits`')
            self._select_classes(rows, torch.sigmoid(logits).detach().cpu())
        targets, known = read_heatmaps(self.heatmaps[rows], self.known[rows], box, flipped, size)
        targets, known = self._full_classes(rows, targets, known)
        loss = consistency_loss(
            probs, targets.to(probs.device), known.to(probs.device), self.distance
        )
        with torch.no_grad():
            self._write(rows, probs.detach().cpu(), box, flipped)
        return loss

    def _full_classes(self, rows, targets, known):
        """Top-k mode: scatter the k maps into ``[B, C, h, w]``; unchosen classes read 0."""
        if self.top_k is None:
            return targets, known
        classes = self.heatmap_classes[rows]  # [B, K]
        chosen = classes[:, :1] >= 0  # [B, 1]
        full = targets.new_zeros(targets.shape[0], self.num_classes, *targets.shape[-2:])
        full.scatter_(1, classes.clamp(min=0)[:, :, None, None].expand_as(targets), targets)
        class_known = torch.ones_like(full, dtype=torch.bool)
        class_known.scatter_(
            1, classes.clamp(min=0)[:, :, None, None].expand_as(targets), known.expand_as(targets)
        )
        return full, class_known & chosen[:, :, None, None]

    def _select_classes(self, rows: torch.Tensor, probs: torch.Tensor) -> None:
        keep = last_occurrence(rows, self.num_samples)
        rows, probs = rows[keep], probs[keep]
        visits = self.visits[rows]
        self.scores[rows] = ema_update(
            self.scores[rows].float(), probs, (visits > 0)[:, None], self.momentum
        ).half()
        self.visits[rows] = visits + 1
        due = (visits + 1 == self.select_after) & (self.heatmap_classes[rows, 0] < 0)
        if due.any():
            top = self.scores[rows[due]].float().topk(self.top_k, dim=1).indices
            self.heatmap_classes[rows[due]] = top

    def _write(
        self, rows: torch.Tensor, probs: torch.Tensor, box: torch.Tensor, flipped: torch.Tensor
    ) -> None:
        keep = last_occurrence(rows, self.num_samples)
        if self.top_k is not None:
            classes = self.heatmap_classes[rows]
            keep &= classes[:, 0] >= 0
            probs = probs.gather(
                1, classes.clamp(min=0)[:, :, None, None].expand(-1, -1, *probs.shape[-2:])
            )
        rows = rows[keep]
        if not rows.numel():
            return
        heatmaps, known = write_heatmaps(
            self.heatmaps[rows],
            self.known[rows],
            probs[keep],
            box[keep],
            flipped[keep],
            self.momentum,
        )
        self.heatmaps[rows], self.known[rows] = heatmaps, known
