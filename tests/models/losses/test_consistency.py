"""CL and SCL: EMA state per visit, heatmap geometry against hand-worked cells, host-memory store."""

import math

import pytest
import torch

from mlkd.models.losses import (
    ConsistencyLoss,
    SpatialConsistencyLoss,
    StateSizeError,
    consistency_distance,
    read_heatmaps,
    write_heatmaps,
)

FULL = torch.tensor([[0.0, 0.0, 1.0, 1.0]])
NO_FLIP, FLIP = torch.tensor([False]), torch.tensor([True])


def test_distances_by_hand():
    p, t = torch.tensor([0.8]), torch.tensor([0.5])
    torch.testing.assert_close(consistency_distance(p, t, 'l2'), torch.tensor([0.09]))
    torch.testing.assert_close(consistency_distance(p, t, 'l1'), torch.tensor([0.3]))
    bce = -(0.5 * math.log(0.8) + 0.5 * math.log(0.2))
    torch.testing.assert_close(consistency_distance(p, t, 'bce'), torch.tensor([bce]))
    m = 0.65
    kl = lambda a, b: a * math.log(a / b) + (1 - a) * math.log((1 - a) / (1 - b))  # noqa: E731
    torch.testing.assert_close(
        consistency_distance(p, t, 'jsd'), torch.tensor([0.5 * kl(0.8, m) + 0.5 * kl(0.5, m)])
    )
    assert consistency_distance(t, t, 'jsd').abs().max() < 1e-6


def test_cl_first_visit_sets_the_average_then_compares_with_it():
    loss = ConsistencyLoss(num_samples=6, num_classes=3, momentum=0.7)
    idx = torch.tensor([4, 1])
    z1, z2 = torch.randn(2, 3), torch.randn(2, 3, requires_grad=True)
    first = loss(z1, idx)
    assert first == 0
    torch.testing.assert_close(loss.ema[idx], torch.sigmoid(z1))
    assert loss.seen.tolist() == [False, True, False, False, True, False]
    second = loss(z2, idx)
    p1, p2 = torch.sigmoid(z1), torch.sigmoid(z2.detach())
    ref = sum(float((p2[i, c] - p1[i, c]) ** 2) for i in range(2) for c in range(3)) / 6
    torch.testing.assert_close(second, torch.tensor(ref))
    second.backward()
    assert z2.grad.abs().sum() > 0
    torch.testing.assert_close(loss.ema[idx], 0.7 * p1 + 0.3 * p2)


def test_cl_mixed_batch_and_repeated_index():
    loss = ConsistencyLoss(num_samples=5, num_classes=2, momentum=0.5)
    loss(torch.zeros(1, 2), torch.tensor([3]))  # sample 3 seen: ema 0.5
    z = torch.tensor([[2.0, -2.0], [0.0, 4.0], [-1.0, 1.0]])
    value = loss(z, torch.tensor([3, 0, 3]))
    p = torch.sigmoid(z)
    ref = (float(((p[0] - 0.5) ** 2).sum()) + float(((p[2] - 0.5) ** 2).sum())) / 6
    torch.testing.assert_close(value, torch.tensor(ref))
    # sample 3 appears twice: written once, from its last occurrence
    torch.testing.assert_close(loss.ema[3], 0.5 * 0.5 + 0.5 * p[2])
    torch.testing.assert_close(loss.ema[0], p[1])


# ----------------------------------------------------------------------------- SCL geometry
def test_read_full_crop_averages_the_2x2_blocks_and_flip_mirrors():
    heat = torch.randint(0, 256, (1, 1, 4, 4), dtype=torch.uint8)
    known = torch.ones(1, 4, 4, dtype=torch.bool)
    target, ok = read_heatmaps(heat, known, FULL, NO_FLIP, (2, 2))
    h = heat[0, 0].float() / 255
    hand = torch.tensor(
        [[h[2 * i : 2 * i + 2, 2 * j : 2 * j + 2].mean() for j in range(2)] for i in range(2)]
    )
    torch.testing.assert_close(target[0, 0], hand)
    assert ok.all()
    flipped, _ = read_heatmaps(heat, known, FULL, FLIP, (2, 2))
    torch.testing.assert_close(flipped[0, 0], hand.flip(1))


def test_read_quarter_crop_hits_the_cells_exactly_and_unknown_cells_are_masked():
    heat = torch.randint(0, 256, (1, 2, 4, 4), dtype=torch.uint8)
    known = torch.zeros(1, 4, 4, dtype=torch.bool)
    known[0, :2, :2] = True
    known[0, 0, 0] = False
    box = torch.tensor([[0.0, 0.0, 0.5, 0.5]])  # top-left quarter: cell centres coincide
    target, ok = read_heatmaps(heat, known, box, NO_FLIP, (2, 2))
    torch.testing.assert_close(target[0], heat[0, :, :2, :2].float() / 255)
    assert ok[0, 0].tolist() == [[False, True], [True, True]]


def test_write_updates_only_cells_inside_the_crop_with_the_ema():
    heat = torch.zeros(1, 1, 4, 4, dtype=torch.uint8)
    known = torch.zeros(1, 4, 4, dtype=torch.bool)
    probs = torch.tensor([[[[0.2, 0.4], [0.6, 0.8]]]])
    box = torch.tensor([[0.5, 0.5, 1.0, 1.0]])  # bottom-right quarter
    heat, known = write_heatmaps(heat, known, probs, box, NO_FLIP, momentum=0.5)
    expected = torch.zeros(4, 4)
    expected[2:, 2:] = torch.round(probs[0, 0] * 255)
    torch.testing.assert_close(heat[0, 0].float(), expected)
    assert known[0].tolist() == (expected > 0).tolist()
    # second visit, flipped: the EMA of the stored value and the mirrored new map
    heat2, _ = write_heatmaps(heat, known, probs, box, FLIP, momentum=0.5)
    mirrored = torch.round(probs[0, 0].flip(1) * 255) / 255
    ema = torch.round((0.5 * expected[2:, 2:] / 255 + 0.5 * mirrored) * 255)
    assert (heat2[0, 0, 2:, 2:].float() - ema).abs().max() <= 1
    assert heat2.dtype == torch.uint8 and (heat2[0, 0, :2] == 0).all()


def test_write_then_read_recovers_a_smooth_map_for_any_crop_and_flip():
    yy, xx = torch.meshgrid(torch.linspace(0.2, 0.7, 8), torch.linspace(0.1, 0.9, 8), indexing='ij')
    full = (0.3 * xx + 0.5 * yy)[None, None]  # linear map of the full image
    box = torch.tensor([[0.25, 0.125, 0.75, 0.625]])
    heat = (full * 255).round().to(torch.uint8)
    known = torch.ones(1, 8, 8, dtype=torch.bool)
    for flip in (NO_FLIP, FLIP):
        crop, _ = read_heatmaps(heat, known, box, flip, (4, 4))
        heat2, _ = write_heatmaps(
            torch.zeros_like(heat), torch.zeros_like(known), crop, box, flip, momentum=0.0
        )
        inside = heat2[0, 0] > 0
        assert inside.sum() == 16  # the 4x4 cells under the box
        assert (heat2[0, 0][inside].float() - heat[0, 0][inside].float()).abs().max() <= 2


def _bilinear_border(grid: torch.Tensor, px: float, py: float) -> float:
    """Bilinear value of ``grid [h, w]`` at pixel coordinates (cell centres at integers), the
    position clamped to the grid (``grid_sample``'s border padding)."""
    h, w = grid.shape
    px, py = min(max(px, 0.0), w - 1.0), min(max(py, 0.0), h - 1.0)
    x0, y0 = int(math.floor(px)), int(math.floor(py))
    x1, y1 = min(x0 + 1, w - 1), min(y0 + 1, h - 1)
    fx, fy = px - x0, py - y0
    return float(
        (1 - fy) * ((1 - fx) * grid[y0, x0] + fx * grid[y0, x1])
        + fy * ((1 - fx) * grid[y1, x0] + fx * grid[y1, x1])
    )


def _random_crops(batch: int, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    side = 0.5 + 0.5 * torch.rand(batch, generator=gen)  # 25-100 % of the area
    x1 = (1 - side) * torch.rand(batch, generator=gen)
    y1 = (1 - side) * torch.rand(batch, generator=gen)
    return torch.stack([x1, y1, x1 + side, y1 + side], 1), torch.rand(batch, generator=gen) < 0.5


def test_read_and_write_against_a_per_cell_loop_for_random_crops_and_flips():
    """The heatmap store's two resamplings, cell by cell from the definitions (docs/methods.md
    §3.3): write maps each heatmap cell centre inside the crop into the crop (mirrored if
    flipped) and EMA-updates it; read maps each class-map cell centre into the full image."""
    gen = torch.Generator().manual_seed(0)
    batch, classes, (h, w), (hh, ww), momentum = 4, 2, (4, 4), (8, 8), 0.7
    box, flip = _random_crops(batch, gen)
    heat = torch.randint(0, 256, (batch, classes, hh, ww), generator=gen, dtype=torch.uint8)
    known = torch.rand(batch, hh, ww, generator=gen) < 0.7
    probs = torch.rand(batch, classes, h, w, generator=gen)
    new_heat, new_known = write_heatmaps(heat, known, probs, box, flip, momentum)
    targets, target_known = read_heatmaps(heat, known, box, flip, (h, w))
    for b in range(batch):
        x1, y1, x2, y2 = box[b].tolist()
        for a in range(hh):
            for c in range(ww):
                x, y = (c + 0.5) / ww, (a + 0.5) / hh
                u, v = (x - x1) / (x2 - x1), (y - y1) / (y2 - y1)
                inside = 0 <= u <= 1 and 0 <= v <= 1
                assert bool(new_known[b, a, c]) == (bool(known[b, a, c]) or inside)
                u = 1 - u if flip[b] else u
                for k in range(classes):
                    old = float(heat[b, k, a, c]) / 255
                    value = old
                    if inside:
                        fresh = _bilinear_border(probs[b, k], u * w - 0.5, v * h - 0.5)
                        value = momentum * old + (1 - momentum) * fresh if known[b, a, c] else fresh
                    assert abs(float(new_heat[b, k, a, c]) - round(value * 255)) <= 1
        for i in range(h):
            for j in range(w):
                jj = w - 1 - j if flip[b] else j
                px = (x1 + (jj + 0.5) / w * (x2 - x1)) * ww - 0.5
                py = (y1 + (i + 0.5) / h * (y2 - y1)) * hh - 0.5
                for k in range(classes):
                    hand = _bilinear_border(heat[b, k].float() / 255, px, py)
                    assert abs(float(targets[b, k, i, j]) - hand) < 1e-5
                # known when every heatmap cell the sample interpolates from is known
                cx = min(max(px, 0.0), ww - 1.0)
                cy = min(max(py, 0.0), hh - 1.0)
                cols = {int(math.floor(cx)), min(int(math.floor(cx)) + 1, ww - 1)}
                rows = {int(math.floor(cy)), min(int(math.floor(cy)) + 1, hh - 1)}
                needed = [bool(known[b, r, q]) for r in rows for q in cols]
                assert bool(target_known[b, 0, i, j]) == all(needed)


def _scl(**kwargs):
    return SpatialConsistencyLoss(
        num_samples=kwargs.pop('num_samples', 8), num_classes=3, heatmap_size=4, **kwargs
    )


def test_scl_value_against_the_hand_loop():
    loss = _scl(momentum=0.5)
    idx = torch.tensor([5])
    maps1 = torch.randn(1, 3, 2, 2)
    assert loss(maps1, idx, FULL, NO_FLIP) == 0  # nothing known yet
    assert loss.known[5].all() and not loss.known[4].any()
    stored = loss.heatmaps[5].float() / 255
    maps2 = torch.randn(1, 3, 2, 2, requires_grad=True)
    value = loss(maps2, idx, FULL, NO_FLIP)
    p = torch.sigmoid(maps2.detach())[0]
    total = 0.0
    for c in range(3):
        for i in range(2):
            for j in range(2):
                target = stored[c, 2 * i : 2 * i + 2, 2 * j : 2 * j + 2].mean()
                total += float(p[c, i, j] - target) ** 2
    torch.testing.assert_close(value, torch.tensor(total / 12))
    value.backward()
    assert maps2.grad.abs().sum() > 0


def test_scl_top_k_chooses_classes_by_running_score_and_zeroes_the_others():
    loss = _scl(top_k=1, select_after=2, momentum=0.5)
    idx = torch.tensor([2])
    maps = torch.full((1, 3, 2, 2), -3.0)
    maps[0, 1] = 3.0  # class 1 scores highest
    logits = maps.mean((2, 3))
    assert loss(maps, idx, FULL, NO_FLIP, logits) == 0  # visit 1: nothing chosen
    assert loss.heatmap_classes[2].tolist() == [-1] and not loss.known[2].any()
    # visit 2: class 1 chosen (its map not written yet: no loss); the others read as 0
    p = torch.sigmoid(maps)[0]
    second = loss(maps, idx, FULL, NO_FLIP, logits)
    torch.testing.assert_close(second, torch.tensor(8 * float(p[0, 0, 0]) ** 2 / 12))
    assert loss.heatmap_classes[2].tolist() == [1] and loss.heatmaps.shape == (8, 1, 4, 4)
    value = loss(maps, idx, FULL, NO_FLIP, logits)
    stored = round(float(torch.sigmoid(torch.tensor(3.0))) * 255) / 255
    ref = (4 * float(p[0, 0, 0]) ** 2 * 2 + 4 * (float(p[1, 0, 0]) - stored) ** 2) / 12
    torch.testing.assert_close(value, torch.tensor(ref))


def test_scl_store_stays_in_host_memory_and_travels_in_the_state_dict():
    loss = _scl()
    loss(torch.randn(2, 3, 2, 2), torch.tensor([1, 6]), FULL.repeat(2, 1), NO_FLIP.repeat(2))
    assert 'heatmaps' not in dict(loss.named_buffers())  # not moved by .to(), not in DDP
    loss.double()
    assert loss.heatmaps.dtype == torch.uint8
    state = loss.state_dict()
    assert state['heatmaps'].dtype == torch.uint8 and state['known'][1].all()
    fresh = _scl()
    fresh.load_state_dict(state)
    assert torch.equal(fresh.heatmaps, loss.heatmaps) and torch.equal(fresh.known, loss.known)
    with pytest.raises(StateSizeError, match=r"'heatmaps'.*\(8 samples\).*\(9 samples\)"):
        _scl(num_samples=9).load_state_dict(state)
    with pytest.raises(RuntimeError, match='Missing key.*heatmaps'):
        _scl().load_state_dict({'known': state['known']})


def test_scl_heatmap_size_defaults_to_twice_the_probed_features():
    loss = SpatialConsistencyLoss(
        num_samples=2, num_classes=3, shapes={'feats': ((2, 16, 14, 14),), 'logits': (2, 3)}
    )
    assert loss.heatmaps.shape == (2, 3, 28, 28)
    with pytest.raises(ValueError, match='heatmap_size'):
        SpatialConsistencyLoss(num_samples=2, num_classes=3, shapes={'logits': (2, 3)})
