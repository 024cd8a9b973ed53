"""The configs of Table B.1 of the SCL paper (Verelst et al., "Spatial Consistency Loss for
Training Multi-Label Classifiers from Single-Label Annotations", WACV 2023;
``configs/spml/*_coco_*.py``) and Tables B / C of the Two-way paper (Kobayashi, "Two-way
Multi-Label Loss", CVPR 2023; ``configs/task_losses/*_resnet50.py``): one per table row and label
setting, each builds and takes a training step on a batch that its own dataset, pipeline and data
preprocessor read from a tiny fixture release in the same format (COCO instances json / NUS-WIDE
lists).

The ResNet-50 keeps its depth but is narrowed (4 instead of 64 base channels) so that a step at
448 x 448 takes a fraction of a second; per-sample state (ROLE, CL, SCL) is sized to the fixture.
"""

import glob
import os.path as osp

import pytest
import torch
from conftest import REPO, config_path, read_scalars, run_tool, write_coco, write_nus_wide
from mmengine.config import Config
from mmengine.dataset import pseudo_collate
from mmengine.registry import DefaultScope

import mlkd
from mlkd.registry import DATASETS, MODELS

SPML_METHODS = (
    'an',
    'wan',
    'bce_ls',
    'focal',
    'asl',
    'hill',
    'bce_pl',
    'role',
    'fm_splc',
    'cl',
    'scl',
)
SPML_SETTINGS = {'partial75': 0.75, 'partial40': 0.4, 'single': None}
TASK_LOSSES = {
    'bce': 'BinaryCrossEntropySumLoss',
    'asl': 'AsymmetricMultiLabelLoss',
    'two_way': 'TwoWayMultiLabelLoss',
    'two_way_classwise': 'TwoWayMultiLabelLoss',
    'two_way_samplewise': 'TwoWayMultiLabelLoss',
    'softmax': 'MultiLabelSoftmaxLoss',
    'warp': 'WARPLoss',
    'rml': 'RobustMultiLabelLoss',
}
#: Losses with a config on one dataset only (the table that reports them: Table B is MS-COCO).
TASK_LOSS_DATASETS = {'warp': ('coco',), 'rml': ('coco',)}
SPML_CONFIGS = sorted(glob.glob(config_path('spml', '*_coco_*.py')))
TASK_CONFIGS = sorted(glob.glob(config_path('task_losses', '*_resnet50.py')))
NARROW = 4  # base / stem channels of the narrowed ResNet-50 (64 in the shipped configs)


def test_every_table_row_has_a_config():
    assert sorted(osp.basename(p) for p in SPML_CONFIGS) == sorted(
        [f'{m}_coco_{s}.py' for m in SPML_METHODS for s in SPML_SETTINGS] + ['bce_coco_full.py']
    )
    assert sorted(osp.basename(p) for p in TASK_CONFIGS) == sorted(
        f'{m}_{d}_resnet50.py'
        for m in TASK_LOSSES
        for d in TASK_LOSS_DATASETS.get(m, ('coco', 'nuswide'))
    )


@pytest.fixture(scope='module')
def data_roots(tmp_path_factory):
    root = tmp_path_factory.mktemp('paper_data')
    categories = [dict(id=i + 1, name=f'cat{i:02d}') for i in range(80)]
    # Image i holds classes 0 .. i (1 to 4 positives) and is 60 x 50 pixels.
    images = [dict(id=i, file_name=f'{i:03d}.jpg', width=60, height=50) for i in range(4)]
    anns = [
        dict(id=100 * i + c, image_id=i, category_id=c + 1, bbox=[0, 0, 5, 5], iscrowd=0)
        for i in range(4)
        for c in range(i + 1)
    ]
    for split in ('train', 'val'):
        write_coco(root / 'coco', split, images, anns, categories)
    nus = {f'a\\{i}.jpg': list(range(i, 3 * i + 1)) for i in range(4)}
    write_nus_wide(root / 'nuswide', nus, nus)
    return {'coco': str(root / 'coco'), 'nuswide': str(root / 'nuswide')}


def _narrow(network: dict) -> None:
    """Check the shipped ResNet-50 (public ImageNet weights named, nothing downloaded here), then
    narrow it and drop the weights."""
    backbone = network['backbone']
    assert backbone['type'] == 'ResNet' and backbone['depth'] == 50
    assert backbone['init_cfg']['checkpoint'].startswith('https://download.openmmlab.com/')
    assert network['head']['in_channels'] == 2048
    backbone.update(stem_channels=NARROW, base_channels=NARROW, init_cfg=None)
    network['head']['in_channels'] = NARROW * 8 * 4


def _step(cfg: Config, data_root: str, image_size: int) -> tuple[dict, torch.nn.Module]:
    """Build the model and the training set of ``cfg``, and back-propagate one batch of two."""
    mlkd.register_all_modules()
    with DefaultScope.overwrite_default_scope('mlkd'):
        data = DATASETS.build(dict(cfg.train_dataloader.dataset, data_root=data_root))
        model_cfg = cfg.model
        model_cfg.setdefault('data_preprocessor', cfg.data_preprocessor)  # as the Runner does
        for loss in model_cfg.get('losses', {}).values():
            if 'num_samples' in loss:
                loss['num_samples'] = len(data)
        model = MODELS.build(model_cfg)
    model.train()
    batch = model.data_preprocessor(pseudo_collate([data[i] for i in (1, 3)]), True)
    assert tuple(batch['inputs'].shape) == (2, 3, image_size, image_size)
    losses = model(**batch, mode='loss')
    total = sum(v for k, v in losses.items() if k.startswith('loss'))
    assert torch.isfinite(total) and total.requires_grad
    total.backward()
    return losses, model


@pytest.mark.parametrize('path', SPML_CONFIGS, ids=lambda p: osp.basename(p)[:-3])
def test_coco_single_positive_config_takes_a_step(path, data_roots):
    cfg = Config.fromfile(path)
    setting = osp.basename(path)[:-3].split('_coco_')[1]
    observed = cfg.train_dataloader.dataset.observed_labels
    if setting == 'full':
        assert observed is None and cfg.model.task_loss_weight == 1
    else:
        assert observed.get('fraction') == SPML_SETTINGS[setting] and observed['seed'] == 1200
        assert cfg.model.task_loss_weight == 0 and cfg.model.losses
    _narrow(cfg.model.classifier)
    losses, model = _step(cfg, data_roots['coco'], 448)
    for name in cfg.model.get('losses', {}):
        assert torch.isfinite(losses[f'loss_{name}']), name
    assert any(
        p.grad is not None and p.grad.abs().sum() > 0
        for p in model.classifier.backbone.parameters()
    )


@pytest.mark.parametrize('path', TASK_CONFIGS, ids=lambda p: osp.basename(p)[:-3])
def test_two_way_table_config_takes_a_step(path, data_roots):
    cfg = Config.fromfile(path)
    name = osp.basename(path)[:-3]
    method, dataset = name[: -len('_resnet50')].rsplit('_', 1)
    assert cfg.model.head.loss.type == TASK_LOSSES[method]
    assert cfg.model.head.num_classes == {'coco': 80, 'nuswide': 81}[dataset]
    if method.startswith('two_way_'):
        part = method[len('two_way_') :]
        other = {'classwise': 'samplewise', 'samplewise': 'classwise'}[part]
        assert cfg.model.head.loss[other] is False
    _narrow(cfg.model)
    losses, _ = _step(cfg, data_roots[dataset], 224)
    assert losses['loss'] > 0


def test_scl_config_trains_and_validates_with_tools_train(data_roots, tmp_path):
    """EN + SCL, single positive (the table's most involved row) as a user runs it, on the fixture
    COCO release: one epoch of training, validation on val2014's stand-in, a checkpoint."""
    work = str(tmp_path / 'work')
    loaders = ('train_dataloader', 'val_dataloader', 'test_dataloader')
    classifier = 'model.classifier.'
    out = run_tool(
        'tools/train.py',
        config_path('spml', 'scl_coco_single.py'),
        '--work-dir',
        work,
        '--cfg-options',
        'train_cfg.max_epochs=1',
        'train_dataloader.batch_size=2',
        *(
            f'{loader}.{key}'
            for loader in loaders
            for key in (
                f'dataset.data_root={data_roots["coco"]}',
                'num_workers=0',
                'persistent_workers=False',
            )
        ),
        f'{classifier}backbone.stem_channels={NARROW}',
        f'{classifier}backbone.base_channels={NARROW}',
        f'{classifier}backbone.init_cfg=None',
        f'{classifier}head.in_channels={NARROW * 32}',
        'model.losses.scl.num_samples=4',
        'default_hooks.logger.interval=1',
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert osp.isfile(osp.join(work, 'epoch_1.pth'))
    records = read_scalars(work)
    assert any(torch.isfinite(torch.tensor(r['loss_scl'])) for r in records if 'loss_scl' in r)
    assert any('mAP' in r for r in records), records  # validation ran


def test_unobserved_as_negative_reads_ignored_targets_as_negatives():
    from mlkd.models.losses import HillLoss, UnobservedAsNegative

    logits = torch.tensor([[2.0, -1.0, 0.5], [0.3, 1.5, -2.0]])
    gt = torch.tensor([[1.0, -1.0, -1.0], [-1.0, 1.0, 0.0]])
    wrapped = UnobservedAsNegative(loss=dict(type='HillLoss'))
    expected = HillLoss()(logits, torch.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]))
    assert torch.allclose(wrapped(logits, gt), expected)
    assert not torch.allclose(HillLoss()(logits, gt), expected)  # the plain loss skips -1
    assert wrapped(logits, gt, reduction_override='none').shape == (2, 3)


def test_the_configs_are_in_the_readmes():
    for folder, paths in (('spml', SPML_CONFIGS), ('task_losses', TASK_CONFIGS)):
        with open(osp.join(REPO, 'configs', folder, 'README.md')) as f:
            readme = f.read()
        for path in paths:
            assert osp.basename(path) in readme, path
