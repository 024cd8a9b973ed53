"""COCOMultiLabel, VOCMultiLabel, RandomColorCutout and the COCO/VOC ``_base_`` dataset configs.

No real data is needed: tiny COCO instance files, a VOCdevkit with three XML files and small
JPEGs are written to temporary folders.
"""

from __future__ import annotations

import json
import os.path as osp
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import config_path, write_jpeg
from mmengine.config import Config
from mmengine.registry import DefaultScope

try:  # every mlkd module; fall back to the ones this file needs if another is unfinished
    import mlkd

    mlkd.register_all_modules()
except Exception:  # pragma: no cover - depends on the state of other modules
    import mmpretrain.datasets  # noqa: F401
    import mmpretrain.models  # noqa: F401

    import mlkd.datasets  # noqa: F401
    import mlkd.models.data_preprocessors  # noqa: F401
from mlkd.datasets import COCOMultiLabel, RandomColorCutout, VOCMultiLabel
from mlkd.registry import DATASETS, MODELS, TRANSFORMS

CONFIGS = ['coco2014_l2d.py', 'voc2007_l2d.py', 'coco2014_two_views.py', 'voc2007_two_views.py']


@pytest.fixture(autouse=True)
def mlkd_scope():
    """Build everything as a runner with ``default_scope='mlkd'`` would."""
    with DefaultScope.overwrite_default_scope('mlkd'):
        yield


# ----------------------------------------------------------------------------------------------
# COCO
# ----------------------------------------------------------------------------------------------
# Category ids chosen so that id order and name order disagree:
#   alphabetical: 0 airplane(5), 1 bicycle(2), 2 person(1), 3 zebra(3)
#   category_id:  0 person(1), 1 bicycle(2), 2 zebra(3), 3 airplane(5)
CATEGORIES = [
    dict(id=1, name='person'),
    dict(id=2, name='bicycle'),
    dict(id=3, name='zebra'),
    dict(id=5, name='airplane'),
]
IMAGES = [
    dict(id=10, file_name='a.jpg'),
    dict(id=11, file_name='b.jpg'),
    dict(id=12, file_name='c.jpg'),
]
ANNOTATIONS = [
    dict(id=100, image_id=10, category_id=1, iscrowd=0),
    dict(id=101, image_id=12, category_id=2, iscrowd=0),
    dict(id=102, image_id=10, category_id=5, iscrowd=0),
    dict(id=103, image_id=10, category_id=1, iscrowd=0),  # duplicate class: one label
    dict(id=104, image_id=10, category_id=3, iscrowd=1),  # crowd regions count (pycocotools)
]  # image 11 has no annotation


def _coco_root(
    tmp_path: Path, split: str = 'val', content: dict | None = None, images: bool = True
) -> Path:
    root = tmp_path / 'coco'
    (root / 'annotations').mkdir(parents=True, exist_ok=True)
    content = (
        content
        if content is not None
        else dict(images=IMAGES, annotations=ANNOTATIONS, categories=CATEGORIES)
    )
    (root / 'annotations' / f'instances_{split}2014.json').write_text(json.dumps(content))
    if images:
        for img in IMAGES:
            write_jpeg(root / f'{split}2014' / img['file_name'])
    return root


def _labels(ds) -> dict[str, list[int]]:
    return {
        osp.basename(ds.get_data_info(i)['img_path']): ds.get_data_info(i)['gt_label']
        for i in range(len(ds))
    }


def test_coco_alphabetical_order(tmp_path):
    root = _coco_root(tmp_path)
    ds = COCOMultiLabel(data_root=str(root), split='val')
    assert ds.metainfo['classes'] == ('airplane', 'bicycle', 'person', 'zebra')
    assert _labels(ds) == {'a.jpg': [0, 2, 3], 'c.jpg': [1]}
    info = ds.get_data_info(0)
    assert info['img_path'] == osp.join(str(root), 'val2014', 'a.jpg')
    assert info['coco_id'] == 10
    assert ds.get_cat_ids(1) == [1]


def test_coco_category_id_order(tmp_path):
    root = _coco_root(tmp_path)
    ds = COCOMultiLabel(data_root=str(root), split='val', class_order='category_id')
    assert ds.metainfo['classes'] == ('person', 'bicycle', 'zebra', 'airplane')
    assert _labels(ds) == {'a.jpg': [0, 2, 3], 'c.jpg': [1]}
    # Same images, same names: only the index convention changes.
    alpha = COCOMultiLabel(data_root=str(root), split='val')
    for a, b in zip(_labels(alpha).values(), _labels(ds).values()):
        assert sorted(alpha.metainfo['classes'][i] for i in a) == sorted(
            ds.metainfo['classes'][i] for i in b
        )


def test_coco_unlabeled_switch(tmp_path):
    root = _coco_root(tmp_path, split='train')
    dropped = COCOMultiLabel(data_root=str(root), split='train')
    kept = COCOMultiLabel(data_root=str(root), split='train', keep_unlabeled=True)
    assert list(_labels(dropped)) == ['a.jpg', 'c.jpg']
    assert _labels(kept) == {'a.jpg': [0, 2, 3], 'b.jpg': [], 'c.jpg': [1]}
    assert kept.get_data_info(0)['img_path'].endswith(osp.join('train2014', 'a.jpg'))


def test_coco_explicit_paths_and_expected_classes(tmp_path):
    root = _coco_root(tmp_path)
    ds = COCOMultiLabel(
        data_root=str(root),
        split='train',
        ann_file='annotations/instances_val2014.json',
        data_prefix='val2014',
        classes=['airplane', 'bicycle', 'person', 'zebra'],
    )
    assert len(ds) == 2
    with pytest.raises(
        ValueError,
        match=r"class_order='category_id'.*index 0: config "
        r"'airplane' vs file 'person'",
    ):
        COCOMultiLabel(
            data_root=str(root),
            split='val',
            class_order='category_id',
            metainfo=dict(classes=('airplane', 'bicycle', 'person', 'zebra')),
        )


def test_coco_errors(tmp_path):
    missing = tmp_path / 'nowhere'
    with pytest.raises(FileNotFoundError, match=r'nowhere.*`data_root`'):
        COCOMultiLabel(data_root=str(missing))
    with pytest.raises(FileNotFoundError, match='`data_root`'):
        COCOMultiLabel(data_root='')
    with pytest.raises(ValueError, match='`split`'):
        COCOMultiLabel(data_root=str(tmp_path), split='test')
    with pytest.raises(ValueError, match='`class_order`'):
        COCOMultiLabel(data_root=str(tmp_path), class_order='id')

    root = _coco_root(tmp_path, split='val')
    ann = root / 'annotations' / 'instances_val2014.json'
    with pytest.raises(FileNotFoundError, match=r'instances_train2014\.json'):
        COCOMultiLabel(data_root=str(root), split='train')

    for key in ('categories', 'images', 'annotations'):
        content = dict(images=IMAGES, annotations=ANNOTATIONS, categories=CATEGORIES)
        del content[key]
        ann.write_text(json.dumps(content))
        with pytest.raises(ValueError, match=rf"{ann}.*'{key}'"):
            COCOMultiLabel(data_root=str(root), split='val')

    ann.write_text('{"images": [')
    with pytest.raises(ValueError, match=rf'{ann} is not valid json'):
        COCOMultiLabel(data_root=str(root), split='val')

    # An annotation that names a category or an image the file does not list.
    for annotation, culprit in (
        (dict(image_id=12, category_id=77), 'category id 77'),
        (dict(image_id=99, category_id=1), 'image id 99'),
    ):
        content = dict(images=IMAGES, categories=CATEGORIES, annotations=ANNOTATIONS + [annotation])
        ann.write_text(json.dumps(content))
        with pytest.raises(ValueError, match=rf'{ann}.*{culprit}'):
            COCOMultiLabel(data_root=str(root), split='val')

    root2 = _coco_root(tmp_path / 'noimg', split='val', images=False)
    with pytest.raises(FileNotFoundError, match=r'val2014.*`data_prefix`'):
        COCOMultiLabel(data_root=str(root2), split='val')


# ----------------------------------------------------------------------------------------------
# VOC
# ----------------------------------------------------------------------------------------------
def _xml(objects: list[tuple[str, int]]) -> str:
    body = ''.join(
        f'<object><name>{name}</name><pose>Unspecified</pose><truncated>0</truncated>'
        f'<difficult>{difficult}</difficult></object>'
        for name, difficult in objects
    )
    return f'<annotation><folder>VOC2007</folder><filename>x.jpg</filename>{body}</annotation>'


VOC_OBJECTS = {
    '000001': [('dog', 0), ('person', 0), ('dog', 0)],
    '000002': [('cat', 1), ('cat', 0), ('car', 1)],  # cat: normal + difficult; car: difficult only
    '000003': [('bird', 1)],  # only difficult objects
}


def _voc_root(tmp_path: Path) -> Path:
    root = tmp_path / 'VOCdevkit' / 'VOC2007'
    (root / 'Annotations').mkdir(parents=True)
    (root / 'ImageSets' / 'Main').mkdir(parents=True)
    for img_id, objects in VOC_OBJECTS.items():
        (root / 'Annotations' / f'{img_id}.xml').write_text(_xml(objects))
        write_jpeg(root / 'JPEGImages' / f'{img_id}.jpg')
    (root / 'ImageSets' / 'Main' / 'trainval.txt').write_text('000001\n000002\n000003\n')
    (root / 'ImageSets' / 'Main' / 'test.txt').write_text('000002\n000003\n')
    return root


def _voc_labels(ds) -> list[tuple[list[str], list[str]]]:
    classes = ds.metainfo['classes']
    out = []
    for i in range(len(ds)):
        info = ds.get_data_info(i)
        out.append(
            (
                [classes[c] for c in info['gt_label']],
                [classes[c] for c in info['gt_label_difficult']],
            )
        )
    return out


@pytest.mark.parametrize(
    'policy, expected',
    [
        ('ignore', [(['dog', 'person'], []), (['cat'], ['car']), ([], ['bird'])]),
        ('positive', [(['dog', 'person'], []), (['car', 'cat'], []), (['bird'], [])]),
        ('negative', [(['dog', 'person'], []), (['cat'], []), ([], [])]),
    ],
)
def test_voc_difficult_policies(tmp_path, policy, expected):
    root = _voc_root(tmp_path)
    ds = VOCMultiLabel(data_root=str(root), split='trainval', difficult_policy=policy)
    assert len(ds) == 3 and len(ds.metainfo['classes']) == 20
    assert _voc_labels(ds) == expected
    for i in range(len(ds)):  # indices are sorted (class indices follow VOC2007_CATEGORIES)
        info = ds.get_data_info(i)
        assert info['gt_label'] == sorted(info['gt_label'])
    assert ds.get_data_info(0)['img_path'] == osp.join(str(root), 'JPEGImages', '000001.jpg')


@pytest.mark.parametrize('policy', ['ignore', 'positive', 'negative'])
def test_voc_drop_all_difficult_leaves_out_images_without_a_normal_object(tmp_path, policy):
    """Cole et al.'s formatter lists an image only through a non-difficult object: 000003 (one
    difficult bird) goes; 000002 (a normal cat beside difficult ones) stays, labelled by the
    policy. The default keeps every image."""
    root = _voc_root(tmp_path)
    kept = VOCMultiLabel(data_root=str(root), split='trainval', difficult_policy=policy)
    dropped = VOCMultiLabel(
        data_root=str(root), split='trainval', difficult_policy=policy, drop_all_difficult=True
    )
    assert len(kept) == 3 and len(dropped) == 2
    assert [osp.basename(dropped.get_data_info(i)['img_path']) for i in range(2)] == [
        '000001.jpg',
        '000002.jpg',
    ]
    assert _voc_labels(dropped) == _voc_labels(kept)[:2]


def test_voc_drop_all_difficult_needs_annotations(tmp_path):
    root = _voc_root(tmp_path)
    with pytest.raises(ValueError, match='drop_all_difficult=True needs the annotations'):
        VOCMultiLabel(
            data_root=str(root),
            split='test',
            test_mode=True,
            data_prefix=dict(img_path='JPEGImages'),
            drop_all_difficult=True,
        )


def test_voc_default_matches_mmpretrain_positives(tmp_path):
    from mmpretrain.datasets import VOC

    root = _voc_root(tmp_path)
    ours = VOCMultiLabel(data_root=str(root), split='test', test_mode=True)
    theirs = VOC(data_root=str(root), split='test', test_mode=True)
    assert ours.difficult_policy == 'ignore'
    for i in range(len(ours)):
        a, b = ours.get_data_info(i), theirs.get_data_info(i)
        assert a['gt_label'] == sorted(b['gt_label'])
        # mmpretrain also lists a difficult class that has a normal object; its metrics drop it.
        assert a['gt_label_difficult'] == sorted(set(b['gt_label_difficult']) - set(b['gt_label']))


def test_voc_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match=r'missing_voc.*`data_root`'):
        VOCMultiLabel(data_root=str(tmp_path / 'missing_voc'))
    with pytest.raises(ValueError, match='`difficult_policy`'):
        VOCMultiLabel(data_root=str(tmp_path), difficult_policy='drop')
    root = _voc_root(tmp_path)
    with pytest.raises(FileNotFoundError, match=r'ImageSets/Main/val\.txt'):
        VOCMultiLabel(data_root=str(root), split='val')
    (root / 'Annotations' / '000003.xml').unlink()
    with pytest.raises(FileNotFoundError, match=r'000003\.xml.*trainval\.txt'):
        VOCMultiLabel(data_root=str(root), split='trainval')
    (root / 'Annotations' / '000003.xml').write_text('<annotation><object>')
    with pytest.raises(ValueError, match=r'000003\.xml'):
        VOCMultiLabel(data_root=str(root), split='trainval')


# ----------------------------------------------------------------------------------------------
# RandomColorCutout
# ----------------------------------------------------------------------------------------------
def _seed_with_centre(lo: int, hi: int) -> int:
    """A numpy seed whose first two ``randint(224)`` draws both lie in ``[lo, hi)``."""
    for seed in range(10_000):
        np.random.seed(seed)
        cy, cx = np.random.randint(224), np.random.randint(224)
        if lo <= cy < hi and lo <= cx < hi:
            return seed
    raise AssertionError('no seed found')


def _apply(seed: int, img: np.ndarray, **kwargs) -> dict:
    np.random.seed(seed)
    return RandomColorCutout(**kwargs)(dict(img=img))


@pytest.mark.parametrize('inclusive, span', [(True, 113), (False, 112)])
def test_cutout_square_of_documented_side(inclusive, span):
    img = np.random.default_rng(0).integers(0, 256, (224, 224, 3), dtype=np.uint8)
    original = img.copy()
    seed = _seed_with_centre(60, 160)  # box fully inside the image
    np.random.seed(seed)
    cy, cx = np.random.randint(224), np.random.randint(224)
    color = np.random.randint(0, 256, size=3)

    out = _apply(seed, img, inclusive=inclusive)
    assert int(0.5 * 224 + 0.5) == 112
    y1, x1, y2, x2 = out['cutout_box']
    assert (y1, x1) == (cy - 56, cx - 56)
    assert (y2 - y1, x2 - x1) == (span, span)
    assert out['cutout_color'] == tuple(int(c) for c in color)
    result = out['img']
    assert result.shape == img.shape and result.dtype == np.uint8
    assert (result[y1:y2, x1:x2] == color.astype(np.uint8)).all()
    outside = np.ones((224, 224), bool)
    outside[y1:y2, x1:x2] = False
    np.testing.assert_array_equal(result[outside], original[outside])
    np.testing.assert_array_equal(img, original)  # the input array is not written to

    again = _apply(seed, original.copy(), inclusive=inclusive)
    np.testing.assert_array_equal(again['img'], result)
    other = _apply(seed + 1, original.copy(), inclusive=inclusive)
    assert other['cutout_box'] != out['cutout_box'] or other['cutout_color'] != out['cutout_color']


def test_cutout_clipped_at_border_and_probability():
    img = np.zeros((224, 224, 3), np.uint8)
    seed = _seed_with_centre(0, 20)  # box hangs over the top-left corner
    out = _apply(seed, img)
    y1, x1, y2, x2 = out['cutout_box']
    assert y1 == 0 and x1 == 0 and y2 <= 20 + 57 and x2 <= 20 + 57
    np.random.seed(seed)
    cy, cx = np.random.randint(224), np.random.randint(224)
    assert (y2, x2) == (cy + 57, cx + 57)
    assert not out['img'][y2:].any() and not out['img'][:, x2:].any()

    skipped = _apply(0, img, prob=0.0)
    assert skipped['img'] is img and 'cutout_box' not in skipped

    # Non-square images use per-axis sides; grey images get one value.
    rect = _apply(3, np.zeros((100, 60, 3), np.uint8), inclusive=False)
    y1, x1, y2, x2 = rect['cutout_box']
    assert y2 - y1 <= 50 and x2 - x1 <= 30
    grey = _apply(3, np.zeros((64, 64), np.uint8))
    assert grey['img'].ndim == 2 and len(grey['cutout_color']) == 1

    with pytest.raises(ValueError, match='cutout_factor'):
        RandomColorCutout(cutout_factor=0.0)
    with pytest.raises(TypeError, match=r'\[H, W, C\]'):
        RandomColorCutout()(dict(img=np.zeros((2, 2, 2, 2), np.uint8)))


def test_cutout_registered():
    t = TRANSFORMS.build(dict(type='RandomColorCutout', cutout_factor=0.25))
    assert isinstance(t, RandomColorCutout) and t.cutout_factor == 0.25


# ----------------------------------------------------------------------------------------------
# Configs
# ----------------------------------------------------------------------------------------------
def _cfg(name: str) -> Config:
    return Config.fromfile(config_path('_base_', 'datasets', name))


@pytest.mark.parametrize('name', CONFIGS)
def test_config_pipelines_build_and_run(name):
    from mmcv.transforms import Compose

    cfg = _cfg(name)
    assert cfg.data_preprocessor.mean == [0.0, 0.0, 0.0]
    assert cfg.data_preprocessor.std == [255.0, 255.0, 255.0]
    assert cfg.data_preprocessor.to_rgb and cfg.data_preprocessor.to_onehot
    num_classes = 80 if name.startswith('coco') else 20
    assert cfg.data_preprocessor.num_classes == num_classes
    assert cfg.train_dataloader.batch_size == 64 and cfg.train_dataloader.num_workers == 8
    assert cfg.val_evaluator == dict(
        type='MultiLabelMetrics',
        conventions=('oracle_topk', 'threshold'),
        cf1_mode='mean_of_class_f1',
    )
    two_views = 'two_views' in name
    assert cfg.data_preprocessor.type == (
        'MultiViewClsDataPreprocessor' if two_views else 'MultiLabelDataPreprocessor'
    )
    MODELS.build(cfg.data_preprocessor)

    img = np.random.default_rng(1).integers(0, 256, (150, 200, 3), dtype=np.uint8)
    for loader in ('train_dataloader', 'test_dataloader'):
        pipeline = cfg[loader].dataset.pipeline
        assert pipeline[0].type == 'LoadImageFromFile'
        # Skip the loader: the image is given in memory.
        transforms = Compose([TRANSFORMS.build(t) for t in pipeline[1:]])
        np.random.seed(0)
        out = transforms(
            dict(
                img=img.copy(),
                gt_label=[1, 3],
                gt_label_difficult=[2],
                img_shape=img.shape[:2],
                ori_shape=img.shape[:2],
            )
        )
        if loader == 'train_dataloader' and two_views:
            assert [tuple(v.shape) for v in out['inputs']] == [(3, 224, 224)] * 2
        else:
            assert tuple(out['inputs'].shape) == (3, 224, 224)
    if two_views:
        train_types = [t.type for t in cfg.train_dataloader.dataset.pipeline]
        assert train_types == ['LoadImageFromFile', 'Resize', 'MultiView', 'PackInputs']
        weak, strong = cfg.train_dataloader.dataset.pipeline[2].transforms
        assert [t.type for t in weak] == ['RandomFlip']
        assert [t.type for t in strong] == ['RandomFlip', 'RandomColorCutout', 'UDARandAugment']
    else:
        # The 3D paper's supplement trains with random horizontal flip.
        flips = [t for t in cfg.train_dataloader.dataset.pipeline if t.type == 'RandomFlip']
        assert len(flips) == 1 and flips[0].prob == 0.5
        assert flips[0].get('direction', 'horizontal') == 'horizontal'
        assert 'RandomFlip' not in [t.type for t in cfg.test_dataloader.dataset.pipeline]


def test_coco_config_end_to_end(tmp_path):
    root = _coco_root(tmp_path, split='val')
    cfg = _cfg('coco2014_l2d.py')
    dataset_cfg = cfg.test_dataloader.dataset
    assert dataset_cfg.class_order == 'alphabetical' and not dataset_cfg.keep_unlabeled
    dataset_cfg.data_root = str(root)
    ds = DATASETS.build(dataset_cfg)
    sample = ds[0]
    assert tuple(sample['inputs'].shape) == (3, 224, 224)
    assert sample['data_samples'].gt_label.tolist() == [0, 2, 3]


def test_voc_config_difficult_handling(tmp_path):
    root = _voc_root(tmp_path)
    cfg = _cfg('voc2007_two_views.py')
    train_cfg, test_cfg = cfg.train_dataloader.dataset, cfg.test_dataloader.dataset
    # L2D's protocol: difficult objects are positives in training and at test time.
    assert (train_cfg.split, train_cfg.difficult_policy) == ('trainval', 'positive')
    assert (test_cfg.split, test_cfg.difficult_policy) == ('test', 'positive')
    train_cfg.data_root = test_cfg.data_root = str(root)
    train, test = DATASETS.build(train_cfg), DATASETS.build(test_cfg)
    classes = train.metainfo['classes']
    np.random.seed(0)
    views = train[2]
    assert len(views['inputs']) == 2
    assert views['data_samples'].gt_label.tolist() == [classes.index('bird')]
    packed = test[0]['data_samples']
    assert packed.gt_label.tolist() == [classes.index('car'), classes.index('cat')]
    assert packed.gt_label_difficult == []
    # The other policy is one key away: the test pipeline then hands the difficult-only class
    # (car) to the metric in gt_label_difficult.
    packed = DATASETS.build(dict(test_cfg, difficult_policy='ignore'))[0]['data_samples']
    assert packed.gt_label.tolist() == [classes.index('cat')]
    assert packed.gt_label_difficult == [classes.index('car')]


#: VOC 2007 test images for the mAP below: (class, difficult) objects; dog, cat and car have
#: difficult-only images, so the two policies rank different positives.
L2D_TEST_OBJECTS = {
    '000010': [('dog', 0), ('person', 0)],
    '000011': [('dog', 1)],
    '000012': [('cat', 0), ('dog', 1), ('car', 1)],
    '000013': [('cat', 1)],
    '000014': [('car', 0), ('person', 1), ('person', 0)],
    '000015': [('car', 1), ('cat', 1)],
    '000016': [('person', 0)],
    '000017': [('dog', 0), ('car', 0)],
}


def _reference_map(scores: np.ndarray, targets: np.ndarray) -> float:
    """L2D's evaluation (its evaluate.py): scikit-learn's AP of each class over the entries whose
    target is not -1, 0 for a class without a positive, mean over all classes, in percent."""
    from sklearn.metrics import average_precision_score

    aps = []
    for c in range(targets.shape[1]):
        keep = targets[:, c] >= 0
        positives = targets[keep, c] == 1
        aps.append(average_precision_score(positives, scores[keep, c]) if positives.any() else 0.0)
    return 100.0 * float(np.mean(aps))


def test_voc2007_l2d_config_evaluates_in_l2ds_protocol(tmp_path):
    """The same predictions on real-format VOC files: the config's test dataset, preprocessor and
    evaluator give the mAP of L2D's protocol (every object a positive, difficult included);
    ``difficult_policy='ignore'`` gives the VOC-devkit number, which differs."""
    from conftest import write_voc
    from mmengine.dataset import pseudo_collate

    from mlkd.registry import METRICS

    root = tmp_path / 'VOCdevkit' / 'VOC2007'
    write_voc(root, L2D_TEST_OBJECTS, {'test': list(L2D_TEST_OBJECTS)})
    cfg = _cfg('voc2007_l2d.py')
    assert cfg.test_dataloader.dataset.difficult_policy == 'positive'
    assert cfg.val_dataloader.dataset.difficult_policy == 'positive'
    scores = torch.rand(len(L2D_TEST_OBJECTS), 20, generator=torch.Generator().manual_seed(3))
    # A model that misses the difficult objects: their classes score lowest in those images, which
    # costs AP only where they count as positives.
    classes = VOCMultiLabel.METAINFO['classes']
    for row, objects in enumerate(L2D_TEST_OBJECTS.values()):
        normal = {name for name, difficult in objects if not difficult}
        for name in {name for name, difficult in objects if difficult} - normal:
            scores[row, classes.index(name)] = 1e-3 * (row + 1)

    def evaluate(policy: str | None) -> tuple[float, np.ndarray]:
        dataset_cfg = dict(cfg.test_dataloader.dataset, data_root=str(root))
        if policy is not None:
            dataset_cfg['difficult_policy'] = policy
        with DefaultScope.overwrite_default_scope('mlkd'):
            dataset = DATASETS.build(dataset_cfg)
            preprocessor = MODELS.build(cfg.data_preprocessor)
            metric = METRICS.build(cfg.test_evaluator)
        batch = preprocessor(pseudo_collate([dataset[i] for i in range(len(dataset))]))
        samples = batch['data_samples']
        metric.process(None, [dict(s.to_dict(), pred_score=row) for s, row in zip(samples, scores)])
        targets = torch.stack([s.gt_score for s in samples]).numpy()
        return metric.evaluate(len(samples))['mAP'], targets

    protocol, targets = evaluate(None)
    dog, cat, car = (classes.index(n) for n in ('dog', 'cat', 'car'))
    assert targets[1, dog] == 1 and targets[3, cat] == 1 and targets[5, car] == 1
    assert (targets >= 0).all()
    assert protocol == pytest.approx(_reference_map(scores.numpy(), targets), abs=1e-9)
    devkit, devkit_targets = evaluate('ignore')
    assert devkit_targets[1, dog] == -1 and devkit_targets[3, cat] == -1
    assert devkit == pytest.approx(_reference_map(scores.numpy(), devkit_targets), abs=1e-9)
    assert protocol < devkit - 0.5  # 16 of the 20 classes have no positive here (AP 0)
