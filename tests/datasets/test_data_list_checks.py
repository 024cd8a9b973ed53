"""Every dataset's sample list is checked when the dataset is built (mlkd/datasets/validation.py):
duplicate images, labels outside the class range, class names given twice, VOC objects of unknown
classes, a warning counting the images smaller than the pipeline's crop; and, with
``tools/train.py --validate-data``, unreadable, truncated and too small images."""

import numpy as np
import pytest
from conftest import capture_log_messages, write_jpeg, write_voc

import mlkd
from mlkd.datasets import (
    NUSWIDE,
    COCOMultiLabel,
    CUBAttributes,
    ImageNetReaL,
    MultiLabelImageList,
    TinyImageNet,
    VOCMultiLabel,
)
from mlkd.datasets.utils import check_missing_images
from mlkd.datasets.validation import (
    DataListChecksMixin,
    check_data_list,
    plain_crop_size,
    validate_images,
)

mlkd.register_all_modules()


@pytest.mark.parametrize(
    'dataset',
    [
        MultiLabelImageList,
        COCOMultiLabel,
        VOCMultiLabel,
        CUBAttributes,
        NUSWIDE,
        ImageNetReaL,
        TinyImageNet,
    ],
)
def test_every_dataset_of_image_files_runs_the_checks(dataset):
    assert issubclass(dataset, DataListChecksMixin)


def _image_list(tmp_path, lines, **kwargs):
    for name in ('a.jpg', 'b.jpg'):
        write_jpeg(tmp_path / name)
    (tmp_path / 'ann.txt').write_text('\n'.join(lines) + '\n')
    kwargs.setdefault('classes', ['x', 'y', 'z'])
    return MultiLabelImageList(data_root=str(tmp_path), ann_file='ann.txt', **kwargs)


def test_an_image_listed_twice_is_named_or_skipped_with_a_count(tmp_path):
    lines = ['a.jpg 0', 'b.jpg 1', 'a.jpg 2']
    with pytest.raises(ValueError) as error:
        _image_list(tmp_path, lines)
    message = str(error.value)
    assert (
        f'MultiLabelImageList: 1 image(s) listed more than once in {tmp_path / "ann.txt"}: '
        f"'{tmp_path / 'a.jpg'}' at samples 0 and 2" in message
    )
    assert 'duplicate_images="skip"' in message
    messages = capture_log_messages()
    dataset = _image_list(tmp_path, lines, duplicate_images='skip')
    assert [dataset.get_data_info(i)['gt_label'] for i in range(len(dataset))] == [[0], [1]]
    assert any('skipped 1 repeated entries of 3' in m for m in messages)


def test_an_unknown_policy_is_refused_naming_the_dataset_the_choices_and_the_config_key():
    with pytest.raises(ValueError) as error:
        check_data_list([], None, 'X', 'ann.txt', duplicate_images='keep')
    assert str(error.value) == (
        "X: duplicate_images must be one of ('error', 'skip'), got 'keep' "
        '(config key `duplicate_images`)'
    )
    with pytest.raises(ValueError) as error:
        check_missing_images([], 'ignore', 'Y', 'ann.txt')
    assert str(error.value) == (
        "Y: missing_images must be one of ('error', 'skip'), got 'ignore' "
        '(config key `missing_images`)'
    )


@pytest.mark.parametrize(
    'key,labels',
    [
        ('gt_label', [0, 3]),
        ('gt_label_ignored', [-1]),
        ('gt_label_difficult', [1.5]),
        ('gt_label', 7),
    ],
)
def test_labels_outside_the_class_range_name_sample_and_range(key, labels):
    data_list = [dict(img_path='a.jpg', gt_label=[0]), dict(img_path='b.jpg', gt_label=[1])]
    data_list[1][key] = labels
    with pytest.raises(
        ValueError,
        match=rf'X: sample 1 \(b.jpg\) of ann.txt has {key} .*; '
        r'expected class indices in 0..2 \(3 classes\)',
    ):
        check_data_list(data_list, 3, 'X', 'ann.txt')
    assert check_data_list(data_list[:1], 3, 'X', 'ann.txt') == data_list[:1]


@pytest.mark.parametrize(
    'name,hint',
    [
        ('Dog', "it differs only by case from the class 'dog'"),
        ('doggo', "expected one of ['aeroplane'"),
    ],
)
def test_voc_objects_of_unknown_classes_are_refused(tmp_path, name, hint):
    """mmpretrain skipped them, so the image lost a positive without a word."""
    root = tmp_path / 'VOC2007'
    write_voc(
        root,
        {'000001': [('cat', 0)], '000002': [('person', 0), (name, 0)]},
        {'trainval': ['000001', '000002']},
    )
    with pytest.raises(ValueError) as error:
        VOCMultiLabel(data_root=str(root), split='trainval')
    assert (
        f'{root / "Annotations" / "000002.xml"}: object 1 has the unknown class name '
        f'{name!r}; {hint}' in str(error.value)
    )
    dataset = VOCMultiLabel(data_root=str(root), split='trainval', unknown_objects='skip')
    assert dataset.skipped_objects == 1 and len(dataset) == 2


def test_a_voc_image_id_listed_twice_is_refused(tmp_path):
    root = tmp_path / 'VOC2007'
    write_voc(root, {'000001': [('cat', 0)]}, {'trainval': ['000001', '000001']})
    with pytest.raises(
        ValueError,
        match=r'listed more than once in .*trainval.txt: '
        r"'.*000001.jpg' at samples 0 and 1",
    ):
        VOCMultiLabel(data_root=str(root), split='trainval')


def test_validate_images_names_unreadable_truncated_and_too_small_images(tmp_path):
    write_jpeg(tmp_path / 'c.jpg')
    dataset = _image_list(tmp_path, ['a.jpg 0', 'b.jpg 1', 'c.jpg 2'])  # a.jpg: 40 x 30
    write_jpeg(tmp_path / 'b.jpg', size=(200, 200))
    data = (tmp_path / 'b.jpg').read_bytes()
    (tmp_path / 'b.jpg').write_bytes(data[: len(data) // 3])  # truncated
    (tmp_path / 'c.jpg').write_bytes(b'not an image')
    with pytest.raises(ValueError) as error:
        validate_images(dataset, (32, 32), 'train_dataloader.dataset')
    message = str(error.value)
    assert message.startswith(
        'train_dataloader.dataset (MultiLabelImageList): 3 of 3 images are not usable: '
    )
    assert (
        f"sample 0 '{tmp_path / 'a.jpg'}': 30x40 (height x width) is smaller than the crop "
        '32x32' in message
    )
    assert f"sample 1 '{tmp_path / 'b.jpg'}': unreadable" in message
    assert f"sample 2 '{tmp_path / 'c.jpg'}': unreadable" in message
    write_jpeg(tmp_path / 'b.jpg')
    write_jpeg(tmp_path / 'c.jpg')
    assert validate_images(dataset, (30, 40)) == 3


def test_the_crop_size_is_that_of_a_crop_before_any_resize():
    crop = dict(type='RandomCrop', crop_size=32, padding=4)
    assert plain_crop_size([dict(type='LoadImageFromFile'), crop]) == (24, 24)
    # mmpretrain's RandomCrop takes (h, w), mmcv's CenterCrop (w, h)
    assert plain_crop_size([dict(type='RandomCrop', crop_size=(64, 48))]) == (64, 48)
    assert plain_crop_size([dict(type='CenterCrop', crop_size=(64, 48))]) == (48, 64)
    assert plain_crop_size([dict(type='RandomResizedCrop', scale=224), crop]) is None
    assert plain_crop_size([dict(crop, pad_if_needed=True)]) is None
    assert plain_crop_size([dict(type='CenterCrop', crop_size=8, auto_pad=True)]) is None
    assert plain_crop_size([dict(type='PackInputs')]) is None


def test_images_smaller_than_the_crop_are_counted_once_when_the_dataset_is_built(
    tmp_path, monkeypatch
):
    """mmpretrain's RandomCrop cuts such images to their own size, smaller than the crop: one
    warning with their count at build time, nothing while samples are loaded."""
    write_jpeg(tmp_path / 'c.jpg', size=(20, 50))  # 50 high, 20 wide
    pipeline = [dict(type='LoadImageFromFile'), dict(type='RandomCrop', crop_size=(28, 28))]
    messages = capture_log_messages()
    dataset = _image_list(tmp_path, ['a.jpg 0', 'b.jpg 1', 'c.jpg 2'], pipeline=pipeline)
    small = [m for m in messages if 'smaller than the' in m]
    assert small == [
        f'MultiLabelImageList: 1 of 3 images of {tmp_path / "ann.txt"} are smaller than the '
        f'28x28 (height x width) crop of the pipeline, which cannot cut that size from them: '
        f"'{tmp_path / 'c.jpg'}' 50x20. Resize them, let the crop pad them "
        '(pad_if_needed=True), or refuse them with `tools/train.py --validate-data`.'
    ]
    assert dataset[2]['img'].shape[:2] == (28, 20)  # what the warning is about

    import PIL.Image

    def no_header_reads(*args, **kwargs):
        raise AssertionError('an image header was read outside the dataset build')

    monkeypatch.setattr(PIL.Image, 'open', no_header_reads)
    messages = capture_log_messages()
    [dataset[i] for i in range(2)]
    # without such a crop no header is read at build time either
    _image_list(tmp_path, ['a.jpg 0', 'c.jpg 2'])
    assert not [m for m in messages if 'smaller than the' in m]


def test_a_class_named_twice_is_refused_naming_the_file_the_name_and_the_lines(tmp_path):
    (tmp_path / 'classes.txt').write_text('cat\ndog\nbird\ndog\n')
    with pytest.raises(ValueError) as error:
        _image_list(tmp_path, ['a.jpg 0'], classes=str(tmp_path / 'classes.txt'))
    assert str(error.value).startswith(
        f"MultiLabelImageList: the class name 'dog' is given twice in "
        f"'{tmp_path / 'classes.txt'}' (lines 2 and 4)"
    )
    with pytest.raises(ValueError, match="'x' is given twice in the `classes` of the config"):
        _image_list(tmp_path, ['a.jpg 0'], classes=['x', 'y', 'x'])


def test_a_classes_file_is_read_as_names_one_per_line(tmp_path):
    """A trailing blank line and padding are not classes (mmengine's reader made a phantom
    class of the one, and kept the other); a blank line between names is refused by its line."""
    (tmp_path / 'classes.txt').write_text('cat \ndog\nbird\n\n')
    dataset = _image_list(tmp_path, ['a.jpg 0'], classes=str(tmp_path / 'classes.txt'))
    assert list(dataset.metainfo['classes']) == ['cat', 'dog', 'bird']
    (tmp_path / 'classes.txt').write_text('cat\n\ndog\n')
    with pytest.raises(ValueError, match=r"classes.txt' line 2 is blank: the classes file holds"):
        _image_list(tmp_path, ['a.jpg 0'], classes=str(tmp_path / 'classes.txt'))


def test_train_validate_data_names_the_bad_image(tmp_path):
    from conftest import load_tool

    write_jpeg(tmp_path / 'data' / 'a.jpg')
    (tmp_path / 'data' / 'b.jpg').write_bytes(b'broken')
    (tmp_path / 'data' / 'ann.txt').write_text('a.jpg 0\nb.jpg 1\n')
    config = tmp_path / 'cfg.py'
    from conftest import config_path

    config.write_text(
        f'_base_ = [{config_path("multidigits", "resnet_student.py")!r}]\n'
        f'train_dataloader = dict(dataset=dict(_delete_=True, type="MultiLabelImageList", '
        f'data_root={str(tmp_path / "data")!r}, ann_file="ann.txt", classes=[str(i) for i in '
        f'range(10)], pipeline=[dict(type="LoadImageFromFile"), dict(type="PackInputs")]))\n'
    )
    train = load_tool('train')
    cfg = train.build_cfg(
        train.parse_args(
            [str(config), '--work-dir', str(tmp_path / 'w'), '--no-validate', '--validate-data']
        )
    )
    with pytest.raises(
        ValueError,
        match=r'train_dataloader.dataset \(MultiLabelImageList\): 1 '
        r"of 2 images are not usable: sample 1 '.*b.jpg': "
        'unreadable',
    ):
        train.validate_data(cfg)
    np.testing.assert_equal(
        sorted(p.name for p in (tmp_path / 'w').iterdir()), ['mlkd_run_config.json']
    )
