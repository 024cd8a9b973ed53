"""Shipping a distilled student as a user does: tools/deployment/pytorch2onnx.py exports the
student of a distillation checkpoint (ML-Decoder head) and checks it with ONNX Runtime,
tools/analysis_tools/calibrate_thresholds.py calibrates its thresholds on val, and tools/infer.py
labels the bundled test images, written as PNG files, through PyTorch and through ONNX Runtime
alike. Then the bad inputs of issue 31, each refused with its culprit named and nothing
overwritten.

The student is the session's ``tool_runs`` distillation run (3D on MultiDigits, two short epochs).
"""

import json
import os.path as osp
import re
import shutil

import numpy as np
import pytest
from conftest import MULTIDIGITS_STUDENT, REPO, TINY_TOOL_DATA, TOOL_RUN_CONFIG, run_tool
from mmengine.config import Config

CONFIG = osp.join(REPO, TOOL_RUN_CONFIG)
OPTIONS = ['--cfg-options', *TINY_TOOL_DATA]


def _ok(out):
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    return out.stdout


@pytest.fixture(scope='module')
def shipped(tool_runs, tmp_path_factory) -> dict:
    """The student exported, its thresholds calibrated, the test split written as PNG files."""
    from mmengine.registry import DefaultScope

    from mlkd.datasets.multidigits import export_image_folder
    from mlkd.registry import DATASETS, register_all_modules

    root = tmp_path_factory.mktemp('shipped')
    checkpoint = osp.join(tool_runs['seeds'][0], 'epoch_2.pth')
    paths = dict(
        checkpoint=checkpoint,
        onnx=str(root / 'student.onnx'),
        thresholds=str(root / 'thresholds.json'),
        root=str(root),
    )
    export = _ok(
        run_tool(
            'tools/deployment/pytorch2onnx.py',
            CONFIG,
            checkpoint,
            '--out',
            paths['onnx'],
            '--num-images',
            '8',
            *OPTIONS,
        )
    )
    calibrate = _ok(
        run_tool(
            'tools/analysis_tools/calibrate_thresholds.py',
            CONFIG,
            checkpoint,
            '--out',
            paths['thresholds'],
            *OPTIONS,
        )
    )
    cfg = Config.fromfile(CONFIG)
    test_size = next(o for o in TINY_TOOL_DATA if o.startswith('test_dataloader.'))
    cfg.test_dataloader.dataset.num_samples = int(test_size.split('=')[1])
    register_all_modules(init_default_scope=False)
    with DefaultScope.overwrite_default_scope('mlkd'):
        dataset = DATASETS.build(cfg.test_dataloader.dataset)
    folder = export_image_folder(dataset, str(root / 'test_images'))
    paths.update(
        export_log=export,
        calibrate_log=calibrate,
        images=osp.join(folder['data_root'], 'images'),
        image_list=osp.join(folder['data_root'], folder['ann_file']),
    )
    return paths


def test_the_export_is_checked_by_onnx_runtime(shipped):
    found = re.search(r'max \|Δ\| of the scores.* on 8 test images: (\S+) ', shipped['export_log'])
    assert found, shipped['export_log']
    assert float(found.group(1)) <= 1e-4
    from mlkd.deployment import OnnxClassifier

    model = OnnxClassifier(shipped['onnx'])
    assert model.classes == [str(i) for i in range(10)] and model.activation == 'sigmoid'
    assert model.input_shape == (3, 32, 32) and model.preprocessing is None  # folded


def test_calibrated_thresholds_improve_val_f1(shipped):
    record = json.load(open(shipped['thresholds']))
    assert record['classes'] == [str(i) for i in range(10)] and record['split'] == 'val'
    assert len(record['config_sha256']) == 64 and record['num_samples'] == 32
    val = record['metrics']['val']
    # each class's F1 is maximised on val, so their mean cannot drop below the one at 0.5
    assert val['calibrated']['CF1macro'] >= val['default']['CF1macro']
    assert 'calibrated' in shipped['calibrate_log']
    # This config tests on its val data (test_dataloader = val_dataloader): in-sample numbers
    # are not reported as test.
    assert set(record['metrics']) == {'val'}
    assert record['not_reported'] == {'test': 'the data of val (in-sample)'}
    assert 'test: not reported, its dataset is the data of val' in shipped['calibrate_log']


def _labels(path: str) -> list[dict]:
    with open(path, encoding='utf-8') as f:
        return [json.loads(line) for line in f]


def test_pytorch_and_onnx_runtime_label_the_test_images_alike(shipped, tmp_path):
    by_torch, by_onnx = str(tmp_path / 'torch.jsonl'), str(tmp_path / 'onnx.jsonl')
    _ok(
        run_tool(
            'tools/infer.py',
            CONFIG,
            shipped['images'],
            '--checkpoint',
            shipped['checkpoint'],
            '--thresholds',
            shipped['thresholds'],
            '--out',
            by_torch,
            *OPTIONS,
        )
    )
    _ok(
        run_tool(
            'tools/infer.py',
            shipped['onnx'],
            shipped['image_list'],
            '--thresholds',
            shipped['thresholds'],
            '--batch-size',
            '5',
            '--out',
            by_onnx,
        )
    )
    torch_records, onnx_records = _labels(by_torch), _labels(by_onnx)
    assert len(torch_records) == len(onnx_records) == 32
    assert [r['image'] for r in torch_records] == [r['image'] for r in onnx_records]
    assert [set(r['labels']) for r in torch_records] == [set(r['labels']) for r in onnx_records]
    classes = [str(c) for c in range(10)]
    torch_scores = np.array([[r['scores'][c] for c in classes] for r in torch_records])
    onnx_scores = np.array([[r['scores'][c] for c in classes] for r in onnx_records])
    np.testing.assert_allclose(onnx_scores, torch_scores, rtol=0, atol=1e-4)
    # the labels are the classes at or above their calibrated thresholds
    thresholds = np.array(json.load(open(shipped['thresholds']))['thresholds'])
    expected = [{classes[c] for c in np.flatnonzero(row >= thresholds)} for row in torch_scores]
    assert [set(r['labels']) for r in torch_records] == expected
    assert any(expected) and not all(len(e) == 10 for e in expected)


def test_bad_inputs_are_refused_naming_the_culprit(shipped, tmp_path):
    def refused(*args):
        out = run_tool(*args)
        assert out.returncode != 0, out.stdout[-2000:]
        return out.stderr

    # a checkpoint made by another config
    err = refused(
        'tools/infer.py',
        MULTIDIGITS_STUDENT,
        shipped['images'],
        '--checkpoint',
        shipped['checkpoint'],
    )
    assert 'epoch_2.pth' in err and 'does not fit the classifier' in err and 'missing keys' in err

    # a file that is not an image
    images = tmp_path / 'images'
    shutil.copytree(shipped['images'], images)
    (images / '000003.png').write_text('a text file named like an image')
    err = refused('tools/infer.py', shipped['onnx'], str(images))
    assert "000003.png' is not an image" in err

    # a thresholds file of another label set
    record = json.load(open(shipped['thresholds']))
    record['classes'] = [f'digit {c}' for c in record['classes']]
    other = tmp_path / 'other_thresholds.json'
    other.write_text(json.dumps(record))
    err = refused('tools/infer.py', shipped['onnx'], str(images), '--thresholds', str(other))
    assert 'other_thresholds.json' in err and 'another label set' in err

    # existing outputs without --overwrite: refused before any work, left as they were
    existing = tmp_path / 'existing'
    existing.mkdir()
    outputs = {name: existing / name for name in ('labels.csv', 'model.onnx', 'thr.json')}
    for path in outputs.values():
        path.write_text('precious')
    commands = [
        ('tools/infer.py', shipped['onnx'], shipped['images'], '--out', str(outputs['labels.csv'])),
        (
            'tools/deployment/pytorch2onnx.py',
            CONFIG,
            shipped['checkpoint'],
            '--out',
            str(outputs['model.onnx']),
        ),
        (
            'tools/analysis_tools/calibrate_thresholds.py',
            CONFIG,
            shipped['checkpoint'],
            '--out',
            str(outputs['thr.json']),
        ),
    ]
    for command, (name, path) in zip(commands, outputs.items()):
        err = refused(*command)
        assert name in err and '--overwrite' in err, err[-2000:]
        assert path.read_text() == 'precious'


def test_an_export_that_onnx_runtime_does_not_reproduce_is_not_written(
    shipped, tmp_path, monkeypatch
):
    import mlkd.apis.deployment as deployment

    monkeypatch.setattr(deployment, 'check_onnx_scores', lambda *args: 3e-4)
    out = tmp_path / 'student.onnx'
    with pytest.raises(deployment.OnnxCheckError, match=r'up to 0.0003 .* not written'):
        deployment.export_onnx(
            CONFIG,
            shipped['checkpoint'],
            str(out),
            cfg_options={k: int(v) for k, v in (o.split('=') for o in TINY_TOOL_DATA)},
            num_images=2,
        )
    assert not out.exists()


def test_an_int8_export_reports_its_test_map_and_size(shipped, tmp_path):
    out = str(tmp_path / 'student_int8.onnx')
    log = _ok(
        run_tool(
            'tools/deployment/pytorch2onnx.py',
            CONFIG,
            shipped['checkpoint'],
            '--out',
            out,
            '--num-images',
            '4',
            '--precision',
            'int8',
            *OPTIONS,
        )
    )
    found = re.search(r'int8: .* test mAP (\S+) vs (\S+) in float32 .* (\S+) MB vs (\S+) MB', log)
    assert found, log
    assert float(found.group(3)) < float(found.group(4))  # smaller
    assert 0 < float(found.group(1)) <= 100 and 0 < float(found.group(2)) <= 100
    from mlkd.deployment import OnnxClassifier

    assert OnnxClassifier(out).metadata['mlkd.precision'] == 'int8'
