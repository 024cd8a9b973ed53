"""The feature / relation KD configs: multi-label (RKD, PKT, ReviewKD on every pair of the 3D
tables) build and take a training step; the single-label CIFAR-100 / Tiny ImageNet configs take one
step on a batch the config's own dataset and pipeline read from a fixture release."""

import glob
import os.path as osp

import pytest
import torch
from conftest import REPO, cheap_default_init, distiller_step, multi_label_pairs, step_on_own_data
from helpers import markdown_rows
from mmengine.config import Config

PAIRS = multi_label_pairs()

pytestmark = pytest.mark.usefixtures('parse_shipped_configs_once')
ML_METHODS = ['rkd', 'pkt', 'reviewkd']


@pytest.mark.parametrize('method', ML_METHODS)
@pytest.mark.parametrize('pair', [p for p in PAIRS if p != 'multidigits'])
def test_multi_label_feature_method_builds_and_steps(method, pair):
    """On MultiDigits these leaves step on their own data instead
    (``test_multi_label_multidigits_feature_leaf_takes_a_step``, with the same assertions)."""
    path = osp.join(REPO, 'configs', method, f'{method}_{pair}.py')
    assert osp.isfile(path)
    size = 32 if pair == 'multidigits' else (224 if 'swin' in pair else 64)
    with cheap_default_init():
        losses = distiller_step(path, size, batch=2)
    assert f'loss_{method}' in losses and 'loss_cls' in losses
    assert losses[f'loss_{method}'].requires_grad


SL_CONFIGS = sorted(
    p
    for p in glob.glob(osp.join(REPO, 'configs', '*', '*.py'))
    if any(
        k in osp.basename(p) for k in ('_cifar100_', '_tiny_imagenet_', '_multidigits_single_label')
    )
)


@pytest.fixture(scope='module')
def single_label_roots(tmp_path_factory):
    from conftest import write_cifar_release, write_tiny_imagenet

    root = tmp_path_factory.mktemp('single_label')
    write_cifar_release(root / 'cifar', 'CIFAR100', per_file=4)
    write_tiny_imagenet(root / 'tiny', ['n01443537', 'n01629819'], train_per_class=2)
    # Generated data: a small set. No serialisation of the data list (a full garbage collection
    # per build, ~0.1 s in a test process): the step reads the same samples either way.
    return {
        'cifar100': dict(data_root=str(root / 'cifar'), serialize_data=False),
        'tiny_imagenet': dict(data_root=str(root / 'tiny'), serialize_data=False),
        'multidigits': dict(num_samples=4, serialize_data=False),
    }


def test_every_single_label_method_has_a_config_for_every_cifar_pair():
    """The CIFAR-100 pairs are those of mdistiller's benchmark: the pairs of the published KD
    numbers that configs/kd/README.md reprints from its README."""
    methods = ['kd', 'dkd', 'mlld', 'fitnet', 'at', 'rkd', 'pkt', 'crd', 'vid', 'ofd', 'reviewkd']
    pairs = sorted(
        osp.basename(p)[:-3]
        for p in glob.glob(osp.join(REPO, 'configs', '_base_', 'pairs', 'cifar100_*.py'))
    )
    with open(osp.join(REPO, 'configs', 'kd', 'README.md'), encoding='utf-8') as f:
        published = markdown_rows(f.read(), '| config | mdistiller README top-1 |')
    assert pairs == sorted(
        config.strip('`')[len('kd_') : -len('.py')]
        for config, (number, *_) in published.items()
        if config.startswith('`kd_cifar100_') and number
    )
    for method in methods:
        for pair in pairs:
            assert osp.isfile(osp.join(REPO, 'configs', method, f'{method}_{pair}.py'))


@pytest.mark.parametrize('path', SL_CONFIGS, ids=lambda p: osp.basename(p)[:-3])
def test_single_label_config_takes_a_step_on_fixture_data(path, single_label_roots):
    dataset = next(k for k in ('cifar100', 'tiny_imagenet', 'multidigits') if f'_{k}_' in path)
    with cheap_default_init():
        step_on_own_data(path, single_label_roots[dataset])


ML_DIGITS_METHODS = ['fitnet', 'at', 'rkd', 'pkt', 'crd', 'vid', 'reviewkd']


@pytest.mark.parametrize('method', ML_DIGITS_METHODS)
def test_multi_label_multidigits_feature_leaf_takes_a_step(method):
    """The feature leaves on the multi-label demo pair (ML-Decoder heads) train on the config's
    own multi-label data, CRD with the sample indices of its bank rows."""
    with cheap_default_init():
        losses = step_on_own_data(
            osp.join(REPO, 'configs', method, f'{method}_multidigits.py'),
            dict(num_samples=4, serialize_data=False),
        )
    assert f'loss_{method}' in losses and 'loss_cls' in losses
    assert losses[f'loss_{method}'].requires_grad


def _crd_banks(path: str):
    from mlkd.models.losses import CRDLoss

    crd = Config.fromfile(path).model.distill_losses.crd.to_dict()
    return CRDLoss(**{k: v for k, v in crd.items() if k not in ('type', 'inputs')})


@pytest.mark.parametrize('name', ['crd/crd_multidigits.py', 'crd/crd_multidigits_single_label.py'])
def test_crd_bank_has_one_row_per_training_image(name):
    """The leaf's banks are sized from the dataset config: one row per image of the training
    set the config builds (sample_idx runs over 0 .. len - 1)."""
    from mmengine.registry import DefaultScope

    import mlkd
    from mlkd.registry import DATASETS

    path = osp.join(REPO, 'configs', name)
    loss = _crd_banks(path)
    mlkd.register_all_modules()
    with DefaultScope.overwrite_default_scope('mlkd'):
        train_set = DATASETS.build(Config.fromfile(path).train_dataloader.dataset)
    for bank in (loss.memory_s, loss.memory_t):
        assert bank.shape == (len(train_set), loss.embed_dim)


def test_crd_bank_size_for_cifar100_as_documented():
    """docs/benchmarks/distill_step.md: two float32 banks of 50,000 x 128 for CIFAR-100 = 51.2 MB."""
    loss = _crd_banks(osp.join(REPO, 'configs', 'crd', 'crd_cifar100_resnet56_to_resnet20.py'))
    banks = [b for name, b in loss.named_buffers() if name.startswith('memory_')]
    assert len(banks) == 2
    assert all(b.shape == (50000, 128) and b.dtype == torch.float32 for b in banks)
    assert sum(b.numel() * b.element_size() for b in banks) == 51_200_000


def test_reviewkd_reads_the_teachers_preactivation_as_mdistiller_on_cifar_and_tiny_imagenet():
    """mdistiller's ReviewKD distils the teacher's preact_feats[1:] (and the pooled feature), and
    its WRN's stage 3 feature is block3's output, before the final BN-ReLU: a teacher target
    after ReLU loses the negative part of the response the reference distils."""
    from mlkd.utils.cli import load_config

    leaves = glob.glob(osp.join(REPO, 'configs', 'reviewkd', 'reviewkd_cifar100_*.py'))
    leaves += glob.glob(osp.join(REPO, 'configs', 'intra_class', 'tiny_imagenet', 'reviewkd_*.py'))
    assert leaves
    for path in leaves:
        model = load_config(path).model
        targets = model.connectors.s_abf.target
        assert targets == model.distill_losses.reviewkd.inputs.t_feats, path
        assert targets[-1] == 't_pool' and all(t.startswith('t_preact') for t in targets[:-1]), path
    wrn = load_config(osp.join(REPO, 'configs', '_base_', 'taps', 'cifar_wrn.py')).cifar_wrn_taps
    assert wrn.stage3 == 'backbone.block3'
