"""tools/analysis_tools/linear_probe.py (the Two-way paper's transfer study) as a user runs it, on
an image-folder dataset written here and a random-weight MultiDigits network: the features against
the config's own data preprocessor and backbone, the probe's test accuracy against scikit-learn at
the chosen L2 weight; a dataset missing on disk is an error that names the folder."""

from __future__ import annotations

import csv
import os
import os.path as osp
import re

import numpy as np
import pytest
import torch
from conftest import MULTIDIGITS_STUDENT, assert_png, build_model, load_tool, run_tool
from mmengine.config import Config
from mmpretrain.structures import DataSample
from PIL import Image
from sklearn.linear_model import LogisticRegression

import mlkd
from mlkd.evaluation.linear_probe import l2_grid

mlkd.register_all_modules()
TOOL = 'tools/analysis_tools/linear_probe.py'
MEAN = [10.0, 20.0, 30.0]  # a non-zero mean, so that the normalisation is checked
#: class -> (red, blue) base colour; the noise makes the images differ inside a class
COLOURS = {'blue': (40, 200), 'red': (200, 40)}


def _image(colour: tuple[int, int], seed: int) -> np.ndarray:
    noise = np.random.default_rng(seed).integers(0, 60, (24, 24, 3))
    image = noise + np.array([colour[0], 90, colour[1]])
    return np.clip(image, 0, 255).astype(np.uint8)


@pytest.fixture(scope='module')
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp('probe')
    seed = 0
    for split, count in (('train', 10), ('test', 4)):
        for name, colour in COLOURS.items():
            os.makedirs(root / 'folder' / split / name)
            for i in range(count):
                seed += 1
                Image.fromarray(_image(colour, seed)).save(
                    root / 'folder' / split / name / f'{i}.png'
                )
    cfg = Config.fromfile(MULTIDIGITS_STUDENT)
    torch.manual_seed(0)
    model = build_model(dict(cfg.model, data_preprocessor=dict(cfg.data_preprocessor, mean=MEAN)))
    model.init_weights()
    checkpoint = str(root / 'net.pth')
    torch.save({'state_dict': model.state_dict(), 'meta': {}}, checkpoint)
    return str(root / 'folder'), checkpoint, model.eval()


def _features_through_the_config(model, path: str) -> torch.Tensor:
    """An image read as mmcv reads it (BGR), through the config's data preprocessor and backbone."""
    bgr = np.asarray(Image.open(path).convert('RGB').resize((32, 32), Image.BILINEAR))[..., ::-1]
    inputs = torch.from_numpy(bgr.copy()).permute(2, 0, 1)
    data = model.data_preprocessor(
        dict(inputs=[inputs], data_samples=[DataSample().set_gt_label([0])])
    )
    with torch.no_grad():
        return model.backbone(data['inputs'])[-1].mean(dim=(2, 3))[0]


def _probe_args(checkpoint: str, dataset: str, data_root, out_dir) -> list[str]:
    """The tool's arguments that every call gives: the network, the dataset and the output."""
    return [
        MULTIDIGITS_STUDENT,
        checkpoint,
        '--dataset',
        dataset,
        '--data-root',
        str(data_root),
        '--out-dir',
        str(out_dir),
    ]


def test_tool_on_an_image_folder(setup, tmp_path):
    folder, checkpoint, model = setup
    out_dir = str(tmp_path / 'out')
    result = run_tool(
        TOOL,
        *_probe_args(checkpoint, 'imagefolder', folder, out_dir),
        '--image-size',
        '32',
        '--resize-size',
        '32',
        '--num-workers',
        '0',
        '--batch-size',
        '8',
        '--device',
        'cpu',
        '--val-fraction',
        '0.3',
        '--save-features',
        '--cfg-options',
        f'data_preprocessor.mean={MEAN}',
    )
    assert result.returncode == 0, result.stderr[-3000:]
    stem = osp.join(out_dir, 'linear_probe_imagefolder')
    with np.load(f'{stem}.features.npz') as saved:
        saved = {k: torch.from_numpy(saved[k]) for k in saved.files}
    # ImageFolder order: classes sorted (blue = 0, red = 1), files sorted inside each.
    assert saved['train_labels'].tolist() == [0] * 10 + [1] * 10
    assert saved['test_labels'].tolist() == [0] * 4 + [1] * 4
    for k, name in ((0, 'blue/0.png'), (7, 'red/3.png')):
        expected = _features_through_the_config(model, osp.join(folder, 'test', name))
        torch.testing.assert_close(saved['test_features'][k], expected, atol=1e-4, rtol=1e-4)

    with open(f'{stem}.csv', encoding='utf-8') as file:
        rows = list(csv.DictReader(file))
    np.testing.assert_allclose([float(r['l2']) for r in rows], l2_grid())
    accuracy = [float(r['val_accuracy']) for r in rows]
    chosen = [k for k, r in enumerate(rows) if r['chosen'] == '1']
    # The chosen weight has the best validation accuracy; ties go to the largest weight.
    assert len(chosen) == 1 and accuracy[chosen[0]] == max(accuracy)
    assert all(a < max(accuracy) for a in accuracy[chosen[0] + 1 :])
    l2 = float(rows[chosen[0]]['l2'])

    # The refit on the whole training set at that weight, by scikit-learn. With two classes it
    # fits one weight vector w = W1 - W0 (at the optimum W0 = -W1, so ‖W‖² = ‖w‖² / 2) and
    # minimises ½‖w‖² + C Σ CE: C = 2 / (λ N).
    train_x = saved['train_features'].double().numpy()
    reference = LogisticRegression(C=2 / (l2 * len(train_x)), tol=1e-12, max_iter=10000)
    reference.fit(train_x, saved['train_labels'].numpy())
    expected = 100 * np.mean(
        reference.predict(saved['test_features'].double().numpy()) == saved['test_labels'].numpy()
    )
    with open(f'{stem}.md', encoding='utf-8') as file:
        summary = file.read()
    found = re.search(
        r'test top-1 ([\d.]+)% at λ = ([\d.e+-]+), chosen on the val set over 45', summary
    )
    assert found and float(found.group(1)) == pytest.approx(expected, abs=0.01), summary
    assert float(found.group(2)) == pytest.approx(l2, rel=1e-3)
    assert (
        'on 14 train / 6 validation images (seed 0), the probe then refit on all 20 / 8 test'
        in summary
    )
    assert_png(f'{stem}.png')
    tool = load_tool('analysis_tools/linear_probe')
    with pytest.raises(
        FileExistsError, match='linear_probe_imagefolder.md.* exists; pass --overwrite'
    ):
        tool.main(_probe_args(checkpoint, 'imagefolder', folder, out_dir))


def test_a_dataset_missing_on_disk_is_named(setup, tmp_path):
    _, checkpoint, _ = setup
    tool = load_tool('analysis_tools/linear_probe')
    empty = tmp_path / 'empty'
    empty.mkdir()
    with pytest.raises(
        SystemExit,
        match=r"--dataset cifar10: torchvision CIFAR10\(\{'train': "
        r'True\}\) found no data under --data-root .*empty',
    ):
        tool.main(_probe_args(checkpoint, 'cifar10', empty, tmp_path / 'out'))
    with pytest.raises(SystemExit, match=r'--dataset imagefolder: .*empty/train.* not found'):
        tool.main(_probe_args(checkpoint, 'imagefolder', empty, tmp_path / 'out'))
