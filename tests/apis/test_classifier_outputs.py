"""mlkd.apis.classifier_outputs: the data a classifier's outputs are read on."""

import torch
from mmengine.registry import DefaultScope

from mlkd.apis.classifier_outputs import build_loader
from mlkd.utils.cli import load_config


def test_the_training_split_of_a_wrapped_dataset_goes_through_the_test_pipeline():
    """The multi-teacher teachers train on a LabelSubset of MultiDigits: --split train found no
    pipeline on the wrapper (an AttributeError); the training images are read without their
    augmentation, through the test pipeline of the dataset inside."""
    cfg = load_config(
        'mlkd::multi_teacher/teacher_digits0to6.py',
        {'train_dataloader.dataset.dataset.num_samples': 8},
    )
    assert 'pipeline' not in cfg.train_dataloader.dataset  # the wrapper has none
    with DefaultScope.overwrite_default_scope('mlkd'):
        loader = build_loader(cfg, 'train', batch_size=4, num_workers=0)
        batch = next(iter(loader))
    assert len(loader.dataset) == 8 and batch['inputs'][0].shape == torch.Size([3, 32, 32])
    augmented = [step['type'] for step in cfg.train_dataloader.dataset.dataset.pipeline]
    dataset = loader.dataset
    while not hasattr(dataset, 'pipeline'):
        dataset = dataset.dataset
    read = [type(t).__name__ for t in dataset.pipeline.transforms]
    assert read == [step['type'] for step in cfg.test_dataloader.dataset.dataset.pipeline]
    assert read != augmented  # RandomCrop, left out
