"""Brute-force references of mlkd's losses, for the tests and the loss benchmark.

Each function transcribes the definition literally (explicit Python loops over samples, positives
and sample pairs, sub-vectors built by indexing, ``torch.softmax`` for the sub-softmaxes) and shares
no code with ``mlkd.models.losses``. They are slow by design; the package's closed forms are checked
against them (``tests/models/losses/test_logit_losses.py``) and timed against them
(``python tools/benchmarks/benchmark_losses.py --references tests/loss_references.py``). Test code:
not installed with mlkd.
"""

from __future__ import annotations

import torch


def partial_softmax_reference(
    s_logits: torch.Tensor,
    t_logits: torch.Tensor,
    gt: torch.Tensor,
    temperature: float = 1.0,
    normalize: str = 'batch',
    temperature_squared: bool = False,
) -> torch.Tensor:
    """PSM / L_PD by definition: one softmax over ``[z_k] ⊕ z_N`` per sample and positive."""
    total = s_logits.new_zeros(())
    num_positives = 0
    for i in range(s_logits.shape[0]):
        positives = [c for c in range(gt.shape[1]) if gt[i, c] == 1]
        negatives = [c for c in range(gt.shape[1]) if gt[i, c] == 0]
        num_positives += len(positives)
        for k in positives:
            idx = torch.tensor([k] + negatives, dtype=torch.long)
            q_s = torch.softmax(s_logits[i, idx] / temperature, dim=0)
            q_t = torch.softmax(t_logits[i, idx].detach() / temperature, dim=0)
            total = total + (q_t * (q_t.log() - q_s.log())).sum()
    denom = s_logits.shape[0] if normalize == 'batch' else max(num_positives, 1)
    loss = total / denom
    return loss * temperature**2 if temperature_squared else loss


def negative_discrepancy_reference(
    s_logits: torch.Tensor,
    t_logits: torch.Tensor,
    gt: torch.Tensor,
    *,
    form: str,
    pair_norm: str,
    aux_form: str,
    gamma_b: float,
    prob_temperature: float,
) -> torch.Tensor:
    """3D's L_NDD by definition: a loop over ordered pairs ``(i, j)``, ``i ≠ j``.

    For each pair, ``p̃`` are the probabilities restricted to the labels negative in both samples
    (``N_ij`` of them), ``ρ = p̃_i − p̃_j``; the pair's exact loss is ``MSE(ρ^s, ρ^t)``, its bound
    ``MSE(p̃^s_i, p̃^t_i) + MSE(p̃^s_j, p̃^t_j) + γ_b·aux``. ``per_pair`` averages pair losses over
    pairs with ``N_ij > 0``; ``global`` divides sums over all (i, j, c) triples by their number.
    Every switch is named by the caller: the reference holds the definition, not the package's
    defaults (``test_ndd_defaults_are_the_documented_setting`` states those).
    """
    p_s = torch.sigmoid(s_logits / prob_temperature)
    p_t = torch.sigmoid(t_logits.detach() / prob_temperature)
    batch, classes = gt.shape
    pair_losses = []
    sum_exact = s_logits.new_zeros(())
    sum_mse = s_logits.new_zeros(())
    sum_aux = s_logits.new_zeros(())
    triples = 0
    for i in range(batch):
        for j in range(batch):
            if i == j:
                continue
            common = [c for c in range(classes) if gt[i, c] == 0 and gt[j, c] == 0]
            if not common:
                continue
            idx = torch.tensor(common, dtype=torch.long)
            ps_i, ps_j, pt_i, pt_j = p_s[i, idx], p_s[j, idx], p_t[i, idx], p_t[j, idx]
            n = len(common)
            rho_s, rho_t = ps_i - ps_j, pt_i - pt_j
            exact_sum = ((rho_s - rho_t) ** 2).sum()
            mse_sum = ((ps_i - pt_i) ** 2).sum() + ((ps_j - pt_j) ** 2).sum()
            dots = (ps_i * pt_j).sum() + (ps_j * pt_i).sum()
            triples += n
            sum_exact = sum_exact + exact_sum
            sum_mse = sum_mse + mse_sum
            sum_aux = sum_aux + dots
            if form == 'exact':
                pair_losses.append(exact_sum / n)
                continue
            if aux_form == 'bound_exact':
                aux = dots / n
            elif aux_form == 'printed':
                aux = 2 * dots
            else:
                aux = dots * 0
            pair_losses.append((mse_sum / n, aux))
    if not pair_losses:
        return (s_logits * 0).sum()
    num_pairs = len(pair_losses)
    if form == 'exact':
        if pair_norm == 'per_pair':
            return torch.stack(pair_losses).mean()
        return sum_exact / triples
    mse_terms = torch.stack([m for m, _ in pair_losses])
    aux_terms = torch.stack([a for _, a in pair_losses])
    if pair_norm == 'per_pair':
        mse = mse_terms.mean()
    else:
        mse = sum_mse / triples
    if aux_form == 'off':
        return mse
    if aux_form == 'printed' or pair_norm == 'per_pair':
        aux = aux_terms.sum() / num_pairs
    else:
        aux = sum_aux / triples
    return mse + gamma_b * aux


def negative_discrepancy_triple_loop(
    s_logits: torch.Tensor,
    t_logits: torch.Tensor,
    gt: torch.Tensor,
    pair_norm: str = 'per_pair',
    prob_temperature: float = 1.0,
) -> float:
    """Exact L_NDD with explicit ``i, j, c`` loops on Python floats (tiny inputs only)."""
    p_s = torch.sigmoid(s_logits.double() / prob_temperature).tolist()
    p_t = torch.sigmoid(t_logits.double() / prob_temperature).tolist()
    y = gt.tolist()
    batch, classes = len(y), len(y[0])
    pair_means, total, count = [], 0.0, 0
    for i in range(batch):
        for j in range(batch):
            if i == j:
                continue
            acc, n = 0.0, 0
            for c in range(classes):
                if y[i][c] == 0 and y[j][c] == 0:
                    diff = (p_s[i][c] - p_s[j][c]) - (p_t[i][c] - p_t[j][c])
                    acc += diff * diff
                    n += 1
            if n:
                pair_means.append(acc / n)
                total += acc
                count += n
    if not pair_means:
        return 0.0
    return sum(pair_means) / len(pair_means) if pair_norm == 'per_pair' else total / count


def binary_kl_reference(
    s_logits: torch.Tensor, t_logits: torch.Tensor, temperature: float = 1.0
) -> torch.Tensor:
    """Elementwise analytic ``KLb(σ(t/T) ‖ σ(s/T))`` from probabilities (moderate logits only)."""
    p = torch.sigmoid(t_logits / temperature)
    q = torch.sigmoid(s_logits / temperature)
    return p * torch.log(p / q) + (1 - p) * torch.log((1 - p) / (1 - q))


# ---------------------------------------------------------------------------------------------
# Feature, relation and single-label logit losses: loops over samples, pairs, triples, channels.
def _smooth_l1(x: torch.Tensor) -> torch.Tensor:
    return torch.where(x.abs() < 1, 0.5 * x * x, x.abs() - 0.5)


def rkd_reference(
    s: torch.Tensor, t: torch.Tensor, distance_weight: float = 25.0, angle_weight: float = 50.0
) -> torch.Tensor:
    """RKD from the paper: pair distances over their mean (i ≠ j), angles at every anchor j;
    smooth-L1 averaged over all B² pairs and B³ triples (degenerate entries 0, as mdistiller)."""
    batch = s.shape[0]

    def distances(e):
        d = [
            [(e[i] - e[j]).norm() if i != j else e.new_zeros(()) for j in range(batch)]
            for i in range(batch)
        ]
        d = torch.stack([torch.stack(row) for row in d])
        mean = d.sum() / max(batch * (batch - 1), 1)
        return d / mean if batch > 1 else d

    def cosine(e, i, j, k):
        a, b = e[i] - e[j], e[k] - e[j]
        if a.norm() == 0 or b.norm() == 0:
            return e.new_zeros(())
        return (a @ b) / (a.norm() * b.norm())

    loss_d = _smooth_l1(distances(s) - distances(t.detach())).sum() / batch**2
    loss_a = s.new_zeros(())
    for i in range(batch):
        for j in range(batch):
            for k in range(batch):
                loss_a = loss_a + _smooth_l1(cosine(s, i, j, k) - cosine(t.detach(), i, j, k))
    return distance_weight * loss_d + angle_weight * loss_a / batch**3


def pkt_reference(s: torch.Tensor, t: torch.Tensor, eps: float = 1e-7) -> torch.Tensor:
    """PKT: conditional probabilities from (cos + 1) / 2 per row, KL summed over B² / B²."""
    batch = s.shape[0]

    def probs(e):
        rows = []
        for i in range(batch):
            k = [
                ((e[i] @ e[j]) / ((e[i].norm() + eps) * (e[j].norm() + eps)) + 1) / 2
                for j in range(batch)
            ]
            k = torch.stack(k)
            rows.append(k / k.sum())
        return torch.stack(rows)

    p_s, p_t = probs(s), probs(t.detach())
    total = s.new_zeros(())
    for i in range(batch):
        for j in range(batch):
            total = total + p_t[i, j] * torch.log((p_t[i, j] + eps) / (p_s[i, j] + eps))
    return total / batch**2


def block_mean(x: torch.Tensor, size: int) -> torch.Tensor:
    """Average over non-overlapping blocks down to ``size × size`` (side divisible by size)."""
    b, c, h, w = x.shape
    return x.reshape(b, c, size, h // size, size, w // size).mean(dim=(3, 5))


def at_reference(s_list, t_list, p: float = 2.0) -> torch.Tensor:
    """AT: per sample, the attention vector Σ_c |A_c|^p / C normalised; squared differences
    averaged over samples and positions, summed over stages (maps pooled by block means)."""
    total = s_list[0].new_zeros(())
    for s, t in zip(s_list, t_list):
        side = min(s.shape[-1], t.shape[-1])
        s, t = block_mean(s, side), block_mean(t.detach(), side)
        for i in range(s.shape[0]):
            q_s = s[i].abs().pow(p).mean(dim=0).flatten()
            q_t = t[i].abs().pow(p).mean(dim=0).flatten()
            diff = q_s / q_s.norm() - q_t / q_t.norm()
            total = total + (diff**2).sum() / (s.shape[0] * diff.numel())
    return total


def vid_reference(means, t_list, log_scales, eps: float = 1e-5) -> torch.Tensor:
    """VID: Gaussian NLL per channel, σ²_c = log(1 + e^α_c) + ε, averaged, summed over stages."""
    total = means[0].new_zeros(())
    for mu, t, alpha in zip(means, t_list, log_scales):
        side = min(mu.shape[-1], t.shape[-1])
        mu, t = block_mean(mu, side), block_mean(t.detach(), side)
        stage = mu.new_zeros(())
        for c in range(mu.shape[1]):
            var = torch.log(1 + torch.exp(alpha[c])) + eps
            stage = stage + (0.5 * ((mu[:, c] - t[:, c]) ** 2 / var + torch.log(var))).sum()
        total = total + stage / mu.numel()
    return total


def ofd_margin_reference(weight, bias) -> list[float]:
    """E[x | x < 0] for x ~ N(β, γ²) via erfc, −3|γ| where the tail is below 0.001."""
    import math

    margins = []
    for g, b in zip(weight.tolist(), bias.tolist()):
        std = abs(g)
        tail = 0.5 * math.erfc((b / std) / math.sqrt(2))
        if tail > 0.001:
            density = math.exp(-((b / std) ** 2) / 2) / math.sqrt(2 * math.pi)
            margins.append(b - std * density / tail)
        else:
            margins.append(-3 * std)
    return margins


def ofd_reference(s_list, t_list, margins) -> torch.Tensor:
    """OFD's literal three-case partial L2 per element, Σ over C·H·W of the batch mean,
    stages weighted 2^−(n−1−i); the teacher block-averaged to the student's size."""
    n = len(s_list)
    total = s_list[0].new_zeros(())
    for i, (s, t, m) in enumerate(zip(s_list, t_list, margins)):
        t = block_mean(t.detach(), s.shape[-1])
        stage = s.new_zeros(())
        for b in range(s.shape[0]):
            for c in range(s.shape[1]):
                sb, tb, mc = s[b, c], t[b, c], float(m[c])
                d = (
                    (sb - mc) ** 2 * ((sb > mc) & (tb <= mc))
                    + (sb - tb) ** 2 * ((sb > tb) & (tb > mc) & (tb <= 0))
                    + (sb - tb) ** 2 * (tb > 0)
                )
                stage = stage + d.sum()
        total = total + stage / s.shape[0] / 2 ** (n - 1 - i)
    return total


def dkd_reference(s_logits, t_logits, target, alpha=1.0, beta=8.0, temperature=4.0):
    """DKD per sample: binary KL on [p_g, 1 − p_g] and KL of the softmax over the other classes
    built by indexing the non-target logits; both × T², averaged over the batch."""
    batch, classes = s_logits.shape
    tckd, nckd = s_logits.new_zeros(()), s_logits.new_zeros(())
    for i in range(batch):
        g = int(target[i])
        others = torch.tensor([c for c in range(classes) if c != g], dtype=torch.long)
        p_s = torch.softmax(s_logits[i] / temperature, 0)
        p_t = torch.softmax(t_logits[i].detach() / temperature, 0)
        b_s = torch.stack([p_s[g], p_s[others].sum()])
        b_t = torch.stack([p_t[g], p_t[others].sum()])
        tckd = tckd + (b_t * (b_t.log() - b_s.log())).sum()
        if len(others):
            q_s = torch.softmax(s_logits[i, others] / temperature, 0)
            q_t = torch.softmax(t_logits[i, others].detach() / temperature, 0)
            nckd = nckd + (q_t * (q_t.log() - q_s.log())).sum()
    return (alpha * tckd + beta * nckd) * temperature**2 / batch


def mlld_reference(
    s_logits, t_logits, temperatures=(4.0, 3.0, 5.0, 2.0, 6.0), mask_mode='scalar'
) -> dict:
    """MLLD from its definition: per-sample KD, C×C and B×B Gram entries as explicit sums,
    median masks from sorted values (interpolated median)."""
    import statistics

    batch, classes = s_logits.shape
    t_logits = t_logits.detach()
    prob1 = torch.softmax(t_logits, 1)
    conf = [float(prob1[i].max()) for i in range(batch)]
    mass = [float(prob1[:, c].sum()) for c in range(classes)]
    keep = [1.0 if v <= statistics.median(conf) else 0.0 for v in conf]
    keep_c = [1.0 if v <= statistics.median(mass) else 0.0 for v in mass]
    if mask_mode == 'none':
        keep, keep_c = [1.0] * batch, [1.0] * classes
    out = {k: s_logits.new_zeros(()) for k in ('instance', 'class', 'batch')}
    for temp in temperatures:
        p_s = torch.softmax(s_logits / temp, 1)
        p_t = torch.softmax(t_logits / temp, 1)
        kd = [temp**2 * (p_t[i] * (p_t[i].log() - p_s[i].log())).sum() for i in range(batch)]
        cc = [
            sum(
                ((p_t[:, a] * p_t[:, b]).sum() - (p_s[:, a] * p_s[:, b]).sum()) ** 2
                for b in range(classes)
            )
            / classes
            for a in range(classes)
        ]
        bc = [
            sum(((p_t[i] * p_t[j]).sum() - (p_s[i] * p_s[j]).sum()) ** 2 for j in range(batch))
            / batch
            for i in range(batch)
        ]
        for name, rows, weights in (
            ('instance', kd, keep),
            ('class', cc, keep_c),
            ('batch', bc, keep),
        ):
            scale = 1 / batch if name == 'instance' else 1
            if mask_mode == 'per_sample':
                value = sum(r * w for r, w in zip(rows, weights))
            else:
                value = sum(rows) * (sum(weights) / len(weights))
            out[name] = out[name] + value * scale
    return out


def hcl_reference(s_list, t_list, pool_sizes=(4, 2, 1)) -> torch.Tensor:
    """ReviewKD's HCL: full-resolution MSE plus halving-weighted pyramid MSEs, over the weights."""
    total = s_list[0].new_zeros(())
    for s, t in zip(s_list, t_list):
        terms, weights, w = [((s - t) ** 2).mean()], [1.0], 1.0
        for size in pool_sizes:
            if size < s.shape[-1]:
                w = w / 2
                terms.append(w * ((block_mean(s, size) - block_mean(t, size)) ** 2).mean())
                weights.append(w)
        total = total + sum(terms) / sum(weights)
    return total


def crd_reference(v_s, v_t, idx, memory_s, memory_t, normalisers, temperature, momentum, eps=1e-7):
    """One CRD step by loops: scores of every (sample, index) pair, NCE posteriors, then the
    momentum update row by row. Returns (loss, new memory_s, new memory_t)."""
    batch, columns = idx.shape
    num = memory_s.shape[0]
    noise = (columns - 1) / num
    loss = v_s.new_zeros(())
    for v, memory, z in ((v_s, memory_t, normalisers[0]), (v_t, memory_s, normalisers[1])):
        for i in range(batch):
            for k in range(columns):
                h = torch.exp(memory[idx[i, k]] @ v[i] / temperature) / z
                if k == 0:
                    loss = loss - torch.log(h / (h + noise + eps)) / batch
                else:
                    loss = loss - torch.log(noise / (h + noise + eps)) / batch
    new_s, new_t = memory_s.clone(), memory_t.clone()
    for memory, v in ((new_s, v_s), (new_t, v_t)):
        for i in range(batch):
            row = momentum * memory[idx[i, 0]] + (1 - momentum) * v[i].detach()
            memory[idx[i, 0]] = row / row.norm()
    return loss, new_s, new_t


# ---------------------------------------------------------------------------------------------
# Multi-label task losses. Each loops over the entries (or the sets) of a ``[B, C]`` problem in
# float64 and transcribes the paper's formula with the plain ``σ`` / ``log`` / power, as the
# reference code does, except that ``1 − σ(z)`` is written ``σ(−z)`` (the same number, which float64
# does not round to 0 at the tests' ±50 logits); ignored (``-1``) entries are skipped. Used by
# ``tests/models/losses/test_*`` and ``tools/benchmarks/benchmark_losses.py``.
def _entries(gt: torch.Tensor):
    """``(i, c, is_positive)`` of every non-ignored entry."""
    for i in range(gt.shape[0]):
        for c in range(gt.shape[1]):
            if gt[i, c] >= 0:
                yield i, c, bool(gt[i, c] == 1)


def asymmetric_reference(
    logits, gt, gamma_pos=0.0, gamma_neg=4.0, clip=0.05, eps=1e-8, detach_focal_weight=True
) -> torch.Tensor:
    """ASL summed over entries: ``−(1−p)^{γ+} log max(p, ε)`` / ``−p_m^{γ−} log max(1−p_m, ε)``."""
    x = logits.double()
    total = x.new_zeros(())
    for i, c, positive in _entries(gt):
        p = torch.sigmoid(x[i, c])
        if positive:
            weight = torch.sigmoid(-x[i, c]) ** gamma_pos
            log_term = torch.log(torch.clamp(p, min=eps))
        else:
            shifted = torch.clamp(p - clip, min=0.0)
            weight = shifted**gamma_neg
            complement = 1 - shifted if clip > 0 else torch.sigmoid(-x[i, c])
            log_term = torch.log(torch.clamp(complement, min=eps))
        if detach_focal_weight:
            weight = weight.detach()
        total = total - weight * log_term
    return total


def sigmoid_focal_reference(logits, gt, alpha=0.25, gamma=2.0) -> torch.Tensor:
    """RetinaNet focal loss averaged over entries: ``−α_t (1 − p_t)^γ log p_t``."""
    x = logits.double()
    total, count = x.new_zeros(()), 0
    for i, c, positive in _entries(gt):
        p_t = torch.sigmoid(x[i, c] if positive else -x[i, c])
        alpha_t = 1.0 if alpha < 0 else (alpha if positive else 1 - alpha)
        one_minus_p_t = torch.sigmoid(-x[i, c] if positive else x[i, c])
        total = total - alpha_t * one_minus_p_t**gamma * torch.log(p_t)
        count += 1
    return total / max(count, 1)


def hill_reference(logits, gt, hill_lambda=1.5, margin=1.0, gamma=2.0) -> torch.Tensor:
    """Hill summed over entries: ``−(1−σ(z−m))^γ log σ(z−m)`` / ``(λ − σ(z)) σ(z)²``."""
    x = logits.double()
    total = x.new_zeros(())
    for i, c, positive in _entries(gt):
        if positive:
            q = torch.sigmoid(x[i, c] - margin)
            total = total - torch.sigmoid(margin - x[i, c]) ** gamma * torch.log(q)
        else:
            p = torch.sigmoid(x[i, c])
            total = total + (hill_lambda - p) * p**2
    return total


def splc_reference(
    logits, gt, epoch, threshold=0.6, change_epoch=1, margin=1.0, gamma=2.0
) -> torch.Tensor:
    """SPLC summed over entries; ``epoch=None`` (no correction) is the focal margin loss."""
    x = logits.double()
    total = x.new_zeros(())
    for i, c, positive in _entries(gt):
        z = x[i, c] - margin if positive else x[i, c]
        q = torch.sigmoid(z)
        if not positive and epoch is not None and epoch >= change_epoch and q > threshold:
            positive = True  # corrected: the logit keeps no margin
        if positive:
            total = total - torch.sigmoid(-z) ** gamma * torch.log(q)
        else:
            total = total - q**gamma * torch.log(torch.sigmoid(-z))
    return total


def two_way_reference(
    logits, gt, pos_temperature=4.0, neg_temperature=1.0, classwise=True, samplewise=True
) -> torch.Tensor:
    """Two-way loss by its product form, set by set:
    ``ℓ = log(1 + [Σ_n e^{x_n/T_N}]^{T_N} [Σ_p e^{−x_p/T_P}]^{T_P})``, averaged over the sets with a
    positive, class-wise (columns) plus sample-wise (rows)."""
    x = logits.double()
    total = x.new_zeros(())
    views = ([(x.t(), gt.t())] if classwise else []) + ([(x, gt)] if samplewise else [])
    for matrix, labels in views:
        set_losses = []
        for row, row_labels in zip(matrix, labels):
            positives = [row[k] for k in range(len(row)) if row_labels[k] == 1]
            negatives = [row[k] for k in range(len(row)) if row_labels[k] == 0]
            if not positives:
                continue
            pos_sum = sum(torch.exp(-v / pos_temperature) for v in positives)
            neg_sum = sum((torch.exp(v / neg_temperature) for v in negatives), x.new_zeros(()))
            set_losses.append(torch.log(1 + neg_sum**neg_temperature * pos_sum**pos_temperature))
        if set_losses:
            total = total + sum(set_losses) / len(set_losses)
    return total


def _positives_and_negatives(row_labels) -> tuple[list[int], list[int]]:
    positives = [k for k in range(len(row_labels)) if row_labels[k] == 1]
    negatives = [k for k in range(len(row_labels)) if row_labels[k] == 0]
    return positives, negatives


def warp_reference(logits, gt, margin=1.0, reduction='sum', ranks=None) -> torch.Tensor:
    """WARP (Gong et al. 2014, eq. 3): ``Σ_i Σ_{j∈P} Σ_{k∈N} L(r_j) max(0, 1 − f_j + f_k)``,
    ``L(r) = Σ_{a=1}^{r} 1/a``, ``r_j`` counted literally (the negatives with ``1 + f_k > f_j``)
    unless ``ranks[i][j]`` is given. ``'mean'``: divided by the number of (j, k) pairs."""
    x = logits.double()
    total, pairs = x.sum() * 0, 0  # connected to the graph when empty
    for i in range(x.shape[0]):
        positives, negatives = _positives_and_negatives(gt[i])
        for j in positives:
            if ranks is None:
                rank = sum(1 for k in negatives if margin - x[i, j] + x[i, k] > 0)
            else:
                rank = int(ranks[i][j])
            weight = sum(1.0 / a for a in range(1, rank + 1))
            for k in negatives:
                total = total + weight * torch.clamp(margin - x[i, j] + x[i, k], min=0)
                pairs += 1
    if reduction == 'mean':
        return total / max(pairs, 1)
    if reduction == 'batchmean':
        return total / x.shape[0]
    return total


def robust_ramp_reference(
    logits, gt, ramp_start=-1.0, classwise_weight=1.0, pair_normalise=False, reduction='sum'
) -> torch.Tensor:
    """mlkd's reconstruction of RML, by definition: per sample
    ``ρ Σ_{j∈P} Σ_{k∈N} R(f_j − f_k) + λ Σ_{c∈P∪N} R(y_c f_c)``,
    ``R(t) = min(1 − s, max(0, 1 − t))``, ``y_c = ±1``."""
    x = logits.double()

    def ramp(t):
        return torch.clamp(torch.clamp(1 - t, min=0), max=1 - ramp_start)

    ranking, classwise = x.sum() * 0, x.sum() * 0
    pairs = entries = rows_with_pairs = 0
    for i in range(x.shape[0]):
        positives, negatives = _positives_and_negatives(gt[i])
        row = x.new_zeros(())
        for j in positives:
            for k in negatives:
                row = row + ramp(x[i, j] - x[i, k])
        count = len(positives) * len(negatives)
        pairs += count
        rows_with_pairs += count > 0
        ranking = ranking + (row / max(count, 1) if pair_normalise else row)
        for c in positives + negatives:
            classwise = classwise + ramp((1.0 if c in positives else -1.0) * x[i, c])
            entries += 1
    if reduction == 'mean':
        denominator = rows_with_pairs if pair_normalise else pairs
        return ranking / max(denominator, 1) + classwise_weight * classwise / max(entries, 1)
    total = ranking + classwise_weight * classwise
    return total / x.shape[0] if reduction == 'batchmean' else total


def multilabel_softmax_reference(logits, gt, reduction='mean') -> torch.Tensor:
    """``−Σ_{p∈P} (1/|P|) log(e^{z_p} / Σ_{c∈P∪N} e^{z_c})`` per sample with a positive, summed
    or averaged over those samples."""
    x = logits.double()
    total, rows = x.sum() * 0, 0
    for i in range(x.shape[0]):
        positives, negatives = _positives_and_negatives(gt[i])
        if not positives:
            continue
        partition = sum(torch.exp(x[i, c]) for c in positives + negatives)
        for p in positives:
            total = total - torch.log(torch.exp(x[i, p]) / partition) / len(positives)
        rows += 1
    return total / max(rows, 1) if reduction == 'mean' else total
