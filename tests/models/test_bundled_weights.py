"""The pretrained backbones shipped in mlkd/weights: recorded sha256, strict loading, refusals."""

import hashlib
import json
import os
import os.path as osp
import shutil
from collections import OrderedDict

import pytest
import torch
from conftest import REPO, file_size_limit, load_tool

from mlkd.models.bundled_weights import (
    BUNDLED_DIR,
    BundledPretrained,
    bundled_manifest,
    bundled_weights_path,
)


def test_every_shipped_file_has_the_recorded_sha256_and_size():
    manifest = bundled_manifest()
    assert set(manifest) == {
        'multiglyphs_teacher_backbone',
        'multiglyphs_student_backbone',
        'multiglyphs_w16_backbone',
    }
    shipped = {f for f in os.listdir(BUNDLED_DIR) if f.endswith('.pth')}
    assert shipped == {entry['file'] for entry in manifest.values()}
    total = 0
    for name, entry in manifest.items():
        path = osp.join(BUNDLED_DIR, entry['file'])
        with open(path, 'rb') as f:
            data = f.read()
        assert hashlib.sha256(data).hexdigest() == entry['sha256'], name
        assert len(data) == entry['bytes'], name
        assert osp.isfile(osp.join(REPO, entry['config'])), entry['config']
        assert entry['command'].startswith('OMP_NUM_THREADS=1 python tools/pretrain.py'), name
        total += len(data)
    assert total <= 10 * 2**20  # the budget for shipped weights


def _demo_network(stage: str, folder: str = 'demo'):
    from mmengine.registry import DefaultScope

    from mlkd.registry import MODELS
    from mlkd.utils.cli import load_config

    cfg = load_config(osp.join(REPO, 'configs', folder, f'{stage}.py'))
    with DefaultScope.overwrite_default_scope('mlkd'):
        model = MODELS.build(cfg.model)
        model.init_weights()
    return model


@pytest.mark.parametrize(
    'folder, stage, weights',
    [
        ('demo', 'teacher', 'multiglyphs_teacher_backbone'),
        ('demo', 'student', 'multiglyphs_student_backbone'),
        ('ranking', 'teacher', 'multiglyphs_teacher_backbone'),
        ('ranking', 'student', 'multiglyphs_w16_backbone'),
    ],
)
def test_the_benchmark_networks_start_from_the_bundled_backbones(folder, stage, weights):
    model = _demo_network(stage, folder)
    shipped = torch.load(bundled_weights_path(weights), weights_only=True)
    own = model.backbone.state_dict()
    assert own.keys() == shipped.keys()
    assert all(torch.equal(own[k], v) for k, v in shipped.items())


def test_a_changed_or_missing_file_is_refused_with_the_rebuild_command(tmp_path):
    folder = str(tmp_path / 'weights')
    shutil.copytree(BUNDLED_DIR, folder)
    entry = bundled_manifest(folder)['multiglyphs_student_backbone']
    path = osp.join(folder, entry['file'])
    with open(path, 'r+b') as f:
        f.seek(-1, os.SEEK_END)
        last = f.read(1)
        f.seek(-1, os.SEEK_END)
        f.write(bytes([last[0] ^ 1]))
    with pytest.raises(ValueError, match='sha256.*tools/pretrain.py'):
        bundled_weights_path('multiglyphs_student_backbone', folder)
    os.remove(path)
    with pytest.raises(FileNotFoundError, match='missing.*tools/pretrain.py'):
        bundled_weights_path('multiglyphs_student_backbone', folder)
    with pytest.raises(KeyError, match='unknown name'):
        bundled_weights_path('imagenet', folder)


def test_bundled_pretrained_refuses_a_zero_init_residual_resnet_and_a_misfit():
    from mmpretrain.models import ResNet_CIFAR

    with pytest.raises(ValueError, match='zero_init_residual'):
        BundledPretrained('multiglyphs_student_backbone')(
            ResNet_CIFAR(depth=18, stem_channels=8, base_channels=8, zero_init_residual=True)
        )
    # The teacher's weights do not fit the student's width: every misfit is named.
    with pytest.raises(ValueError, match='shape mismatches'):
        BundledPretrained('multiglyphs_teacher_backbone')(
            ResNet_CIFAR(depth=18, stem_channels=8, base_channels=8, zero_init_residual=False)
        )


def test_pretrain_tool_writes_the_same_bytes_for_the_same_tensors(tmp_path):
    save_reproducibly = load_tool('pretrain').save_reproducibly
    state = OrderedDict(conv=torch.arange(12.0).reshape(3, 4), bn=torch.ones(3))
    digests = set()
    for name in ('a.pth', 'other_name.pth'):
        save_reproducibly(state, str(tmp_path / name))
        digests.add(hashlib.sha256((tmp_path / name).read_bytes()).hexdigest())
        loaded = torch.load(str(tmp_path / name), weights_only=True)
        assert all(torch.equal(loaded[k], v) for k, v in state.items())
    assert len(digests) == 1


def test_pretrain_tool_replaces_a_file_atomically(tmp_path):
    """A full disk while the rebuilt backbone is written leaves the earlier file intact."""
    save_reproducibly = load_tool('pretrain').save_reproducibly
    path = tmp_path / 'backbone.pth'
    path.write_bytes(b'the earlier backbone')
    with file_size_limit(1024), pytest.raises(OSError):
        save_reproducibly(OrderedDict(w=torch.zeros(4096)), str(path))
    assert os.listdir(tmp_path) == ['backbone.pth']
    assert path.read_bytes() == b'the earlier backbone'


def test_manifest_is_valid_json_with_unique_files():
    with open(osp.join(BUNDLED_DIR, 'manifest.json'), encoding='utf-8') as f:
        manifest = json.load(f)
    files = [entry['file'] for entry in manifest.values()]
    assert len(files) == len(set(files))
