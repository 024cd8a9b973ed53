"""mlkd/apis/inference.py without a network: which files a set of inputs names, how an image file
becomes the pipeline's tensor, batches of one shape, labels at per-class thresholds, outputs."""

import csv
import json
import os
import warnings

import mmcv
import numpy as np
import pytest
import torch
from conftest import MULTIDIGITS_STUDENT

from mlkd.apis.inference import (
    ImageDecodeError,
    ImageLabeler,
    check_labels_path,
    format_labels,
    label_images,
    list_images,
    save_labels,
)
from mlkd.evaluation.thresholds import ThresholdsFileError
from mlkd.utils.output_policy import OutputExistsError, OutputIsInputError

CLASSES = ['cat', 'dog', 'fox']


def _png(path, height=8, width=8, value=0):
    os.makedirs(os.path.dirname(str(path)), exist_ok=True)
    image = np.zeros((height, width, 3), np.uint8)
    image[..., 0] = value  # blue channel in OpenCV's BGR order
    assert mmcv.imwrite(image, str(path))
    return str(path)


def test_inputs_are_files_folders_and_lists(tmp_path):
    a = _png(tmp_path / 'imgs' / 'b.png')
    b = _png(tmp_path / 'imgs' / 'sub' / 'a.png')
    (tmp_path / 'imgs' / 'notes.md').write_text('not listed: no image suffix')
    listing = tmp_path / 'list.txt'
    listing.write_text('# comment\n\nimgs/sub/a.png 1 2\n' + f'{a}\n')
    assert list_images(str(tmp_path / 'imgs')) == [a, b]
    assert list_images([str(listing), a]) == [b, a, a]
    with pytest.raises(FileNotFoundError, match='nothere.png'):
        list_images([a, str(tmp_path / 'nothere.png')])
    listing.write_text('imgs/b.png\nimgs/gone.png\n')
    with pytest.raises(FileNotFoundError, match=r'list.txt, line 2: image not found.*gone.png'):
        list_images(str(listing))
    (tmp_path / 'empty').mkdir()
    with pytest.raises(ValueError, match='holds no image files'):
        list_images(str(tmp_path / 'empty'))


def _labeler(calls=None):
    """A labeler whose 'network' scores an image by its mean blue, green and red levels / 255."""

    def score_batch(inputs):
        if calls is not None:
            calls.append([tuple(x.shape) for x in inputs])
        batch = torch.stack(inputs).float()
        return (batch.mean(dim=(2, 3)) / 255).numpy()

    return ImageLabeler(score_batch, CLASSES, [dict(type='PackInputs')], 'a test labeler')


def test_images_are_decoded_like_the_dataset_and_batched_by_shape(tmp_path):
    paths = [
        _png(tmp_path / '0.png', value=255),
        _png(tmp_path / '1.png', value=51),
        _png(tmp_path / '2.png', 10, 12, value=102),  # another shape: a batch of its own
        _png(tmp_path / '3.png', value=0),
    ]
    calls = []
    scores = _labeler(calls).scores(paths, batch_size=3)
    np.testing.assert_allclose(scores[:, 0], [1.0, 0.2, 0.4, 0.0], atol=1e-6)  # BGR kept
    np.testing.assert_allclose(scores[:, 1:], 0.0)
    assert calls == [[(3, 8, 8)] * 2, [(3, 10, 12)], [(3, 8, 8)]]


def test_labels_at_per_class_thresholds_and_the_outputs(tmp_path):
    paths = [_png(tmp_path / f'{i}.png', value=v) for i, v in enumerate((255, 102))]
    labeler = _labeler()
    records = list(labeler.label(paths, thresholds=np.array([0.5, 0.0, 0.9])))
    assert [r['labels'] for r in records] == [['cat', 'dog'], ['dog']]  # highest score first
    assert records[1]['scores']['cat'] == pytest.approx(0.4)
    assert format_labels(records[1]) == f'{paths[1]}: dog (0.000)'

    out = tmp_path / 'labels.csv'
    save_labels(records, str(out), CLASSES)
    rows = list(csv.reader(out.open()))
    assert rows[0] == ['image', 'labels', *CLASSES] and rows[1][:2] == [paths[0], 'cat;dog']
    with pytest.raises(OutputExistsError, match='--overwrite'):
        save_labels(records, str(out), CLASSES)
    save_labels(records, str(tmp_path / 'labels.jsonl'), CLASSES)
    lines = [json.loads(x) for x in (tmp_path / 'labels.jsonl').read_text().splitlines()]
    assert lines == records
    with pytest.raises(ValueError, match=r'\.jsonl or \.csv'):
        check_labels_path(str(tmp_path / 'labels.txt'))
    with pytest.raises(OutputIsInputError):
        check_labels_path(paths[0][:-4] + '.csv', inputs=[paths[0][:-4] + '.csv'])


def test_an_image_that_is_not_an_image_is_named(tmp_path):
    good = _png(tmp_path / 'good.png')
    bad = tmp_path / 'bad.png'
    bad.write_text('this is text, not a PNG')
    with pytest.raises(ImageDecodeError, match=r"bad.png' is not an image"):
        _labeler().scores([good, str(bad)])


def test_a_thresholds_file_of_another_label_set_is_refused(tmp_path):
    path = tmp_path / 't.json'
    path.write_text(
        json.dumps(
            dict(format='mlkd.thresholds/1', classes=['cat', 'cow', 'fox'], thresholds=[0.5] * 3)
        )
    )
    with pytest.raises(ThresholdsFileError, match=r"#1: 'cow' vs 'dog'"):
        label_images(_labeler(), _png(tmp_path / 'a.png'), str(path), progress=False)


def test_thresholds_of_another_config_warn(tmp_path):
    path = tmp_path / 't.json'
    record = dict(format='mlkd.thresholds/1', classes=CLASSES, thresholds=[0.5] * 3)
    path.write_text(json.dumps(dict(record, config_sha256='b' * 64)))
    labeler = _labeler()
    labeler.config_sha256 = 'a' * 64
    image = _png(tmp_path / 'a.png')
    with pytest.warns(UserWarning, match='calibrated with another config'):
        label_images(labeler, image, str(path), progress=False)
    path.write_text(json.dumps(dict(record, config_sha256='a' * 64)))
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        assert label_images(labeler, image, str(path), progress=False)[0]['image'] == image


def test_a_deployed_network_takes_the_preprocessor_and_classes_its_training_had(tmp_path):
    """The model's own data preprocessor wins over the top-level one (as in mmengine's Runner);
    the class names come from the checkpoint's record (a Runner's meta.dataset_meta, or
    export_student's meta.classes); a record of other classes than the config's test dataset
    is refused, naming both."""
    from mmengine.config import Config

    from mlkd.apis.inference import build_classifier, init_classifier

    cfg = Config.fromfile(MULTIDIGITS_STUDENT)
    cfg.model.data_preprocessor = dict(cfg.data_preprocessor, std=[4.0, 5.0, 6.0])
    network, _, _ = build_classifier(cfg)
    assert network.data_preprocessor.std.flatten().tolist() == [4.0, 5.0, 6.0]

    network, _, _ = build_classifier(MULTIDIGITS_STUDENT)
    digits = [str(i) for i in range(10)]
    for meta, expected in (
        ({'dataset_meta': {'classes': digits}}, digits),
        ({'classes': digits}, digits),  # tools/export_student.py's record
        ({}, digits),  # none recorded: the config's
    ):
        path = str(tmp_path / 'student.pth')
        torch.save({'state_dict': network.state_dict(), 'meta': meta}, path)
        assert init_classifier(MULTIDIGITS_STUDENT, path).classes == expected
    torch.save({'state_dict': network.state_dict(), 'meta': {'classes': digits[::-1]}}, path)
    with pytest.raises(ValueError, match=r"trained on the classes \['9', '8', '7'.*has \['0', '1'"):
        init_classifier(MULTIDIGITS_STUDENT, path)
