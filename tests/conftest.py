import contextlib
import functools
import logging
import os
import os.path as osp
import subprocess
import sys
import uuid

import pytest

# Keep the 2-core CI machine responsive: tests, and the tools they run, are single-threaded
# (pytest-xdist runs one test process per core). Set before tool_server records the environment
# tools run with.
os.environ.setdefault('OMP_NUM_THREADS', '1')

import tool_server  # noqa: E402  (records the environment the session started with)
import torch  # noqa: E402

#: The checkout under test (pytest.ini's ``pythonpath`` puts it first on ``sys.path``).
REPO = osp.dirname(osp.dirname(osp.abspath(__file__)))

import mlkd  # noqa: E402,F401

torch.set_num_threads(1)

# A Runner's persistent DataLoader workers, when the Runner is garbage-collected inside this
# process, do not receive the shutdown signal (the main process has no live queue-feeder thread
# by then), so torch waits out its join timeout, MP_STATUS_CHECK_INTERVAL = 5 s, per loader
# before terminating them: about 15 s per Runner, a third of the suite's time. The workers are
# terminated either way; a shorter interval only shortens that wait (and the polling period of
# idle workers). Open defect, see docs/reproducibility.md; tools exit the process, which skips
# the wait.
import torch.utils.data._utils as _loader_utils  # noqa: E402

_loader_utils.MP_STATUS_CHECK_INTERVAL = 0.5

# mmengine's BaseDataset._serialize_data ends with a full ``gc.collect()`` at every dataset build
# (to hand back the memory of the data list it has just pickled). A full collection costs time in
# proportion to the process's live objects: 0.3 s in a fresh interpreter, more in a test process
# that has built hundreds of models, for every train / val / test dataset of every Runner a test
# builds. It changes no result (the data list is already cleared; Python's own collector still
# runs), so in the test processes that module's ``gc`` collects nothing; tool runs and users'
# runs keep it.
import mmengine.dataset.base_dataset as _mmengine_base_dataset  # noqa: E402


class _NoFullCollection:
    @staticmethod
    def collect(generation: int = 2) -> int:
        return 0


_mmengine_base_dataset.gc = _NoFullCollection


#: Pair bases (``configs/_base_/pairs``) of single-label data; the others are the multi-label pairs
#: that every multi-label method covers.
SINGLE_LABEL_PAIRS = ('cifar100_', 'tiny_imagenet_', 'multidigits_single_label')


def multi_label_pairs() -> list[str]:
    """Names of the multi-label pair bases."""
    import glob

    return sorted(
        name
        for name in (
            osp.basename(p)[:-3]
            for p in glob.glob(osp.join(REPO, 'configs', '_base_', 'pairs', '*.py'))
        )
        if not name.startswith(SINGLE_LABEL_PAIRS)
    )


def config_path(*parts: str) -> str:
    return osp.join(REPO, 'configs', *parts)


#: ``small_run_cfg`` keywords of the smallest augmented run: 32 training samples in two batches of
#: 16 (a batch boundary, with the shipped augmentation) and 16 validation samples.
TWO_AUGMENTED_BATCHES = dict(train_samples=32, val_samples=16, batch_size=16, augment=True)


def small_run_cfg(
    config: str,
    work_dir: str,
    *,
    epochs: int = 2,
    train_samples: int = 128,
    val_samples: int = 64,
    batch_size: int = 32,
    augment: bool = False,
    num_workers: int | None = 0,
    schedule_epochs: int | None = None,
):
    """A fast variant of a MultiDigits config: tiny data, few epochs, unique experiment name.

    ``num_workers=None`` keeps the config's loader set-up (workers, persistence) as shipped.
    """
    from mmengine.config import Config

    cfg = Config.fromfile(config)
    cfg.work_dir = work_dir
    cfg.experiment_name = f'test_{uuid.uuid4().hex[:8]}'
    schedule_epochs = schedule_epochs or epochs
    for scheduler in cfg.param_scheduler:
        if 'total_steps' in scheduler:
            scheduler['total_steps'] = scheduler['end'] = schedule_epochs
    cfg.train_cfg.max_epochs = epochs
    cfg.train_cfg.val_interval = epochs
    for key, samples, size in (
        ('train_dataloader', train_samples, batch_size),
        ('val_dataloader', val_samples, 64),
        ('test_dataloader', val_samples, 64),
    ):
        loader = cfg[key]
        loader.dataset.num_samples = samples
        loader.batch_size = size
        if num_workers is not None:
            loader.num_workers = num_workers
            loader.persistent_workers = num_workers > 0
    if not augment:
        cfg.train_dataloader.dataset.pipeline = [dict(type='PackInputs')]
    cfg.default_hooks.logger.interval = 1
    cfg.default_hooks.checkpoint = dict(type='CheckpointHook', interval=1, max_keep_ckpts=-1)
    return cfg


#: ``--cfg-options`` that shrink a MultiDigits config's data and nothing else.
TINY_TOOL_DATA = [
    'train_dataloader.dataset.num_samples=64',
    'val_dataloader.dataset.num_samples=32',
    'test_dataloader.dataset.num_samples=32',
]

#: ``--cfg-options`` that make a MultiDigits config a seconds-long run of tools/train.py or test.py.
SMALL_TOOL_RUN = [
    'train_cfg.max_epochs=1',
    *TINY_TOOL_DATA,
    *(
        f'{loader}.{key}'
        for loader in ('train_dataloader', 'val_dataloader', 'test_dataloader')
        for key in ('num_workers=0', 'persistent_workers=False')
    ),
]


def run_tool(
    script: str, *args: str, timeout: int = 600, env: dict | None = None
) -> subprocess.CompletedProcess:
    """Run a repository script as a user would: ``python SCRIPT ARGS`` from the repository root,
    with this checkout's mlkd first on the path (and ``env`` added to the environment). Served by
    a preloaded interpreter that forks per run (``tests/tool_server.py`` says why that is the
    user's run); ``MLKD_TEST_FRESH_TOOLS=1`` runs every tool in a fresh interpreter."""

    return tool_server.run_python(
        [script, *args],
        cwd=REPO,
        timeout=timeout,
        env={**tool_server.server_env(REPO), **(env or {})},
    )


def load_tool(name: str):
    """``tools/<name>.py`` imported as a module, so that its functions can be called in-process."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        f'tool_{name}', osp.join(REPO, 'tools', f'{name}.py')
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


#: The distillation config the tool tests train (3D on MultiDigits, untrained teacher).
TOOL_RUN_CONFIG = 'configs/3d/3d_multidigits.py'
#: Two epochs of four logged iterations each (both evaluated), so that curves have points per
#: epoch and "last" and "best" epochs can differ.
TOOL_RUN_OPTIONS = [
    *SMALL_TOOL_RUN,
    'train_cfg.max_epochs=2',
    'train_cfg.val_interval=1',
    'train_dataloader.batch_size=16',
    'default_hooks.logger.interval=1',
    'model.teacher_ckpt=None',
    'model.allow_random_teacher=True',
]

#: A distillation config whose teacher cache fills in about a second: KD on MultiDigits with an
#: untrained teacher, two epochs of two shuffled batches each (so that a cache can be extended by
#: an epoch, and a read run has to find every sample of every epoch's own order).
CACHE_RUN_CONFIG = 'configs/kd/kd_multidigits.py'
CACHE_RUN_OPTIONS = [
    *SMALL_TOOL_RUN,
    'train_cfg.max_epochs=2',
    'train_cfg.val_interval=2',
    'train_dataloader.dataset.num_samples=32',
    'val_dataloader.dataset.num_samples=16',
    'train_dataloader.batch_size=16',
    'default_hooks.logger.interval=1',
    'model.teacher_ckpt=None',
    'model.allow_random_teacher=True',
    'randomness.seed=4',
]


def parsed_cfg_options(*options: str) -> dict:
    """``--cfg-options OPTIONS`` parsed as the tools' command lines parse them."""
    import argparse

    from mlkd.utils.cli import add_cfg_options_argument

    parser = argparse.ArgumentParser()
    add_cfg_options_argument(parser)
    return parser.parse_args(['--cfg-options', *options]).cfg_options


@pytest.fixture(scope='session')
def tool_runs(tmp_path_factory) -> dict:
    """Work dirs of two seeds of ``TOOL_RUN_CONFIG`` trained with tools/train.py, once per session.

    Returns ``{'root': folder holding both, 'seeds': {seed: work dir}}``.
    """
    with shared_across_workers(tmp_path_factory, 'tool_runs') as (root, done):
        seeds = {seed: str(root / f'3d_seed{seed}') for seed in (0, 1)}
        if not done:
            for seed, work_dir in seeds.items():
                out = run_tool(
                    'tools/train.py',
                    TOOL_RUN_CONFIG,
                    '--work-dir',
                    work_dir,
                    '--cfg-options',
                    *TOOL_RUN_OPTIONS,
                    f'randomness.seed={seed}',
                )
                assert out.returncode == 0, out.stderr[-3000:]
    return {'root': str(root), 'seeds': seeds}


@contextlib.contextmanager
def shared_across_workers(tmp_path_factory, name: str):
    """A folder made once per test session, also when pytest-xdist runs several test processes:
    yields ``(folder, done)``; the first process to arrive fills it (``done`` False) while the
    others wait on a lock, then find ``done`` True and reuse it."""
    import fcntl
    import pathlib

    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get('PYTEST_XDIST_WORKER') else base
    folder, marker = shared / name, shared / f'{name}.done'
    with open(shared / f'{name}.lock', 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = marker.exists()
        pathlib.Path(folder).mkdir(exist_ok=True)
        yield folder, done
        marker.touch()


def read_scalars(work_dir: str) -> list[dict]:
    """Every line of a work dir's ``scalars.json`` files, read independently of mlkd's reader."""
    import glob
    import json

    lines = []
    for path in sorted(glob.glob(osp.join(work_dir, '*', 'vis_data', 'scalars.json'))):
        with open(path, encoding='utf-8') as f:
            lines += [json.loads(text) for text in f if text.strip()]
    return lines


def logged_losses(work_dir: str) -> list[dict]:
    """The loss terms of every logged training step of a work dir (``loss*`` keys of
    ``scalars.json``)."""
    return [
        {k: v for k, v in line.items() if k.startswith('loss')}
        for line in read_scalars(work_dir)
        if 'loss' in line
    ]


def assert_png(path: str) -> None:
    """``path`` is a non-empty, decodable PNG image."""
    with open(path, 'rb') as f:
        assert f.read(8) == b'\x89PNG\r\n\x1a\n', f'{path} is not a PNG'
    import matplotlib.image

    image = matplotlib.image.imread(path)
    assert image.ndim == 3 and image.shape[0] > 50 and image.shape[1] > 50, image.shape
    assert image.std() > 0, f'{path} is blank'


def whole_and_resumed_runs(make_cfg, root, epochs: int = 2, resume_from: int | None = None):
    """Train ``epochs`` epochs in one go, then resume that run from its own checkpoint of epoch
    ``resume_from`` (``epochs - 1`` by default), as a run killed once that epoch was saved is
    resumed, in a work dir of its own, to ``epochs``.

    The resumed Runner starts from nothing but the checkpoint (it is built from the config like
    any other run), so it ends where the whole run did only if the checkpoint carries, and resume
    restores, everything the rest of the run depends on: weights, buffers and loss states,
    optimizer, schedulers, step, random generators, the sampler's epoch. ``make_cfg(work_dir,
    epochs)`` returns a run config whose schedule spans ``epochs`` and which saves a checkpoint
    every epoch; the loaders are whatever it sets up (``small_run_cfg(..., num_workers=None)``
    keeps a config's own). Returns both runners.
    """
    from mlkd.engine import build_runner

    resume_from = epochs - 1 if resume_from is None else resume_from
    assert 1 <= resume_from < epochs, (resume_from, epochs)
    whole = build_runner(make_cfg(osp.join(str(root), 'whole'), epochs))
    whole.train()
    again = make_cfg(osp.join(str(root), 'resumed'), epochs)
    again.resume, again.load_from = True, osp.join(whole.work_dir, f'epoch_{resume_from}.pth')
    assert osp.isfile(again.load_from)
    resumed = build_runner(again)
    resumed.train()
    return whole, resumed


def assert_same_state(model, reference, atol: float = 1e-6) -> None:
    """Every parameter and buffer of ``model`` equals ``reference``'s within ``atol``."""
    expected = reference.state_dict()
    assert model.state_dict().keys() == expected.keys()
    for key, value in model.state_dict().items():
        torch.testing.assert_close(value, expected[key], rtol=0, atol=atol, msg=key)


def assert_same_run_state(runner, reference) -> None:
    """Two trained Runners agree bit for bit: weights, buffers, optimizer state and step."""
    assert (runner.epoch, runner.iter) == (reference.epoch, reference.iter)
    assert_same_state(runner.model, reference.model, atol=0)
    assert_same_nested(
        runner.optim_wrapper.state_dict(), reference.optim_wrapper.state_dict(), 'optimizer'
    )


def assert_same_nested(loaded, reference, where: str = 'checkpoint') -> None:
    """Exact recursive equality (and types) of two objects: tensors, arrays, dicts (in order),
    lists, tuples, HistoryBuffers, plain values; ``where`` names the failing entry."""
    import numpy as np
    from mmengine.logging import HistoryBuffer

    assert type(loaded) is type(reference), where
    if isinstance(reference, torch.Tensor):
        assert torch.equal(loaded, reference), where
    elif isinstance(reference, np.ndarray):
        assert loaded.dtype == reference.dtype and np.array_equal(loaded, reference), where
    elif isinstance(reference, dict):
        assert list(loaded) == list(reference), where
        for key in reference:
            assert_same_nested(loaded[key], reference[key], f'{where}[{key!r}]')
    elif isinstance(reference, (list, tuple)):
        assert len(loaded) == len(reference), where
        for i, (a, b) in enumerate(zip(loaded, reference)):
            assert_same_nested(a, b, f'{where}[{i}]')
    elif isinstance(reference, HistoryBuffer):
        assert_same_nested(vars(loaded), vars(reference), f'{where}.__dict__')
    else:
        assert loaded == reference, where


def draw_all() -> tuple[float, float, float]:
    """One number from each generator a data transform may draw from: random, numpy, torch."""
    import random

    import numpy as np

    return random.random(), float(np.random.rand()), float(torch.rand(()))


def record_draws(results: dict) -> dict:
    """A pipeline step that stores :func:`draw_all` in ``results['draws']``."""
    results['draws'] = draw_all()
    return results


def capture_log_messages(level: int = logging.WARNING) -> list[str]:
    """A list that receives, from now on, the messages (at ``level`` or above) of a fresh MMEngine
    logger; the new logger becomes the current one, which datasets and hooks log to."""
    from mmengine.logging import MMLogger

    logger = MMLogger.get_instance(f'captured_{uuid.uuid4().hex[:8]}')
    messages: list[str] = []
    handler = logging.Handler(level)
    handler.emit = lambda record: messages.append(record.getMessage())
    logger.addHandler(handler)
    return messages


@contextlib.contextmanager
def file_size_limit(nbytes: int):
    """Writes past ``nbytes`` fail with ``OSError`` in the block, as on a full disk (a file-size
    limit whose signal is ignored: a failing write, not a killed process)."""
    import resource
    import signal

    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, handler)


def write_jpeg(path, size: tuple[int, int] = (40, 30), value: int = 90) -> None:
    """A flat ``size`` = (width, height) JPEG of grey level ``value``; parent folders created."""
    import numpy as np
    from PIL import Image

    os.makedirs(osp.dirname(str(path)), exist_ok=True)
    Image.fromarray(np.full((size[1], size[0], 3), value, np.uint8)).save(str(path))


#: CIFAR release layout: folder, train files, test files, meta file, meta key, label key.
CIFAR_LAYOUTS = {
    'CIFAR10': (
        'cifar-10-batches-py',
        [f'data_batch_{i}' for i in range(1, 6)],
        ['test_batch'],
        'batches.meta',
        'label_names',
        'labels',
    ),
    'CIFAR100': (
        'cifar-100-python',
        ['train'],
        ['test'],
        'meta',
        'fine_label_names',
        'fine_labels',
    ),
}


def write_cifar_release(
    root, dataset: str, per_file: int = 4, protocol: int = 2, seed: int = 0
) -> dict:
    """Write a tiny CIFAR-10/100 python release under ``root`` (the real file names and keys).

    Each batch file holds ``per_file`` random uint8 images (rows of 3072 = R, G, B planes) with
    labels cycling through the classes; Python 2 wrote the originals with pickle protocol 2.

    Returns:
        dict: ``{file name: (data [per_file, 3072] uint8, labels list)}`` of the batch files.
    """
    import pickle

    import numpy as np
    from mmpretrain.datasets.categories import CIFAR10_CATEGORIES, CIFAR100_CATEGORIES

    folder, train, test, meta, meta_key, label_key = CIFAR_LAYOUTS[dataset]
    classes = CIFAR10_CATEGORIES if dataset == 'CIFAR10' else CIFAR100_CATEGORIES
    os.makedirs(osp.join(str(root), folder), exist_ok=True)
    rng = np.random.default_rng(seed)
    written = {}
    for number, name in enumerate(train + test):
        data = rng.integers(0, 256, (per_file, 3072), dtype=np.uint8)
        labels = [(number * per_file + k) % len(classes) for k in range(per_file)]
        entry = {
            'batch_label': f'batch {number}',
            label_key: labels,
            'data': data,
            'filenames': [f'img_{number}_{k}.png' for k in range(per_file)],
        }
        if dataset == 'CIFAR100':
            entry['coarse_labels'] = [label // 5 for label in labels]
        with open(osp.join(str(root), folder, name), 'wb') as file:
            pickle.dump(entry, file, protocol=protocol)
        written[name] = (data, labels)
    with open(osp.join(str(root), folder, meta), 'wb') as file:
        pickle.dump({meta_key: list(classes)}, file, protocol=protocol)
    return written


def write_tiny_imagenet(
    root, wnids: list[str], train_per_class: int = 2, val_per_class: int = 1
) -> list[tuple[str, str]]:
    """Write a tiny Tiny ImageNet release under ``root`` (64x64 JPEGs, the real file layout).

    The grey level of every image of the ``i``-th wnid *of the file order* is ``40 * (i + 1)``;
    ``words.txt`` also lists a synset that is not a class, as the real one lists all of ImageNet.

    Returns:
        list: ``(val image file name, wnid)`` in ``val_annotations.txt`` order.
    """
    root = str(root)
    os.makedirs(root, exist_ok=True)
    with open(osp.join(root, 'wnids.txt'), 'w') as file:
        file.write(''.join(f'{w}\n' for w in wnids))
    with open(osp.join(root, 'words.txt'), 'w') as file:
        file.write(''.join(f'{w}\tthing {w}, object\n' for w in wnids + ['n99999999']))
    val = []
    for i, wnid in enumerate(wnids):
        boxes = []
        for k in range(train_per_class):
            name = f'{wnid}_{k}.JPEG'
            write_jpeg(osp.join(root, 'train', wnid, 'images', name), (64, 64), 40 * (i + 1))
            boxes.append(f'{name}\t0\t0\t63\t63\n')
        with open(osp.join(root, 'train', wnid, f'{wnid}_boxes.txt'), 'w') as file:
            file.write(''.join(boxes))
        for _ in range(val_per_class):
            val.append((f'val_{len(val)}.JPEG', wnid))
            write_jpeg(osp.join(root, 'val', 'images', val[-1][0]), (64, 64), 40 * (i + 1))
    with open(osp.join(root, 'val', 'val_annotations.txt'), 'w') as file:
        file.write(''.join(f'{name}\t{wnid}\t1\t2\t60\t61\n' for name, wnid in val))
    return val


def write_nus_wide(root, train: dict, test: dict, concepts: list[str] | None = None) -> list[str]:
    """Write a tiny NUS-WIDE release (official lists + label files + Flickr JPEGs) under ``root``.

    ``train`` / ``test`` map ``'folder\\file.jpg'`` (the list's Windows form) to the concept
    indices of that image, ``None`` for an image listed but not written (missing on disk).
    ``concepts`` defaults to ``c00 .. c80``. Returns the concept names.
    """
    concepts = concepts or [f'c{i:02d}' for i in range(81)]
    os.makedirs(osp.join(str(root), 'ImageList'), exist_ok=True)
    os.makedirs(osp.join(str(root), 'TrainTestLabels'), exist_ok=True)
    with open(osp.join(str(root), 'Concepts81.txt'), 'w') as file:
        file.write(''.join(f'{c}\n' for c in concepts))
    for tag, images in (('Train', train), ('Test', test)):
        with open(osp.join(str(root), 'ImageList', f'{tag}Imagelist.txt'), 'w') as file:
            file.write(''.join(f'{name}\n' for name in images))
        for col, concept in enumerate(concepts):
            with open(
                osp.join(str(root), 'TrainTestLabels', f'Labels_{concept}_{tag}.txt'), 'w'
            ) as file:
                file.write(
                    ''.join(f'{int(col in (labels or []))} \n' for labels in images.values())
                )
        for value, (name, labels) in enumerate(images.items()):
            if labels is not None:
                write_jpeg(osp.join(str(root), 'Flickr', *name.split('\\')), (20, 20), 10 + value)
    return concepts


def write_cub(
    root,
    images: list[tuple[str, int]],
    labels: list[tuple[int, int, int, int]],
    extra_field_lines: bool = True,
) -> None:
    """Write a tiny CUB-200-2011 (images.txt, split, attribute files, JPEGs) under ``root``.

    ``images``: ``(relative path, is_train)`` with ids 1, 2, ...; ``labels``: ``(image id,
    attribute id, is_present, certainty id)`` lines (a time field is appended, and an extra
    field on the first line, as in the release). ``attributes.txt`` goes next to ``root``.
    """
    root = str(root)
    os.makedirs(osp.join(root, 'attributes'), exist_ok=True)
    with open(osp.join(root, 'images.txt'), 'w') as file:
        file.write(''.join(f'{i} {path}\n' for i, (path, _) in enumerate(images, start=1)))
    with open(osp.join(root, 'train_test_split.txt'), 'w') as file:
        file.write(''.join(f'{i} {t}\n' for i, (_, t) in enumerate(images, start=1)))
    with open(osp.join(osp.dirname(root), 'attributes.txt'), 'w') as file:
        file.write(''.join(f'{a} has_attr::{a}\n' for a in range(1, 313)))
    lines = [f'{i} {a} {p} {c} 12.5' for i, a, p, c in labels]
    if extra_field_lines and lines:
        lines[0] += ' 0'
    with open(osp.join(root, 'attributes', 'image_attribute_labels.txt'), 'w') as file:
        file.write('\n'.join(lines) + '\n')
    for path, _ in images:
        write_jpeg(osp.join(root, 'images', path), (24, 24), 60)


def write_voc(root, objects: dict, image_sets: dict) -> None:
    """Write a tiny VOCdevkit year folder: one XML per image id and its JPEG, and image sets.

    ``objects``: ``{image id: [(class name, difficult), ...]}``; ``image_sets``: ``{split: [image
    ids]}`` written to ``ImageSets/Main/{split}.txt``.
    """
    root = str(root)
    for folder in ('Annotations', 'JPEGImages', osp.join('ImageSets', 'Main')):
        os.makedirs(osp.join(root, folder), exist_ok=True)
    for img_id, objs in objects.items():
        body = ''.join(
            f'<object><name>{name}</name><difficult>{int(diff)}</difficult></object>'
            for name, diff in objs
        )
        with open(osp.join(root, 'Annotations', f'{img_id}.xml'), 'w') as file:
            file.write(f'<annotation><filename>{img_id}.jpg</filename>{body}</annotation>')
        write_jpeg(osp.join(root, 'JPEGImages', f'{img_id}.jpg'), (50, 40), 80)
    for split, ids in image_sets.items():
        with open(osp.join(root, 'ImageSets', 'Main', f'{split}.txt'), 'w') as file:
            file.write(''.join(f'{i}\n' for i in ids))


def write_coco(
    root, split: str, images: list[dict], annotations: list[dict], categories: list[dict]
) -> str:
    """Write ``annotations/instances_{split}2014.json`` and a JPEG per image under ``root``.

    Images are written at their ``width`` x ``height`` when given (40 x 30 otherwise). Returns the
    json path.
    """
    import json

    root = str(root)
    os.makedirs(osp.join(root, 'annotations'), exist_ok=True)
    path = osp.join(root, 'annotations', f'instances_{split}2014.json')
    with open(path, 'w') as file:
        json.dump(dict(images=images, annotations=annotations, categories=categories), file)
    for img in images:
        write_jpeg(
            osp.join(root, f'{split}2014', img['file_name']),
            (img.get('width', 40), img.get('height', 30)),
        )
    return path


#: The MultiDigits ResNet networks alone (no data, no schedule): the models of model-level tests.
DIGITS_STUDENT_CFG = config_path('_base_', 'models', 'digits_resnet_student.py')
DIGITS_TEACHER_CFG = config_path('_base_', 'models', 'digits_resnet_teacher.py')

#: Shipped MultiDigits training configs (absolute paths, whole runs: data, model, schedule): the
#: ResNet student and ML-Decoder teacher classifiers, and the 3D, MLD and L2D distillers.
MULTIDIGITS_STUDENT = config_path('multidigits', 'resnet_student.py')
MULTIDIGITS_TEACHER = config_path('multidigits', 'mldecoder_teacher.py')
MULTIDIGITS_3D = config_path('3d', '3d_multidigits.py')
MULTIDIGITS_MLD = config_path('mld', 'mld_multidigits.py')
MULTIDIGITS_L2D = config_path('l2d', 'l2d_multidigits.py')


def build_model(cfg: dict):
    """``MODELS.build(cfg)`` in mlkd's registry scope."""
    from mmengine.registry import DefaultScope

    from mlkd.registry import MODELS

    with DefaultScope.overwrite_default_scope('mlkd'):
        return MODELS.build(cfg)


def digits_distiller(**cfg):
    """A SingleTeacherDistiller of the MultiDigits student and a random MultiDigits teacher, its
    taps probed at 32 x 32; ``cfg`` adds entries (losses, taps, connectors) or replaces them."""
    base = dict(
        type='SingleTeacherDistiller',
        allow_random_teacher=True,
        student=DIGITS_STUDENT_CFG,
        teacher=DIGITS_TEACHER_CFG,
        probe_input_size=(32, 32),
    )
    return build_model(dict(base, **cfg))


def distiller_step(cfg_path: str, size: int, batch: int = 2) -> dict:
    """Build a distillation config's model (random teacher) and take one loss + backward on a
    random multi-label batch of ``size`` x ``size`` images; returns the losses."""
    from mmengine.config import Config
    from mmpretrain.structures import DataSample

    cfg = Config.fromfile(cfg_path)
    model_cfg = cfg.model
    model_cfg.teacher_ckpt = None
    model_cfg.allow_random_teacher = True
    model_cfg.probe_input_size = (size, size)
    mlkd.register_all_modules()
    model = build_model(model_cfg)
    model.train()
    num_classes = model.num_classes
    samples = []
    for i in range(batch):
        labels = [i % num_classes, (i + 1) % num_classes]
        samples.append(
            DataSample()
            .set_gt_label(labels)
            .set_gt_score(torch.zeros(num_classes).index_fill_(0, torch.tensor(labels), 1.0))
        )
    losses = model.loss(torch.rand(batch, 3, size, size), samples)
    total = sum(v for k, v in losses.items() if 'loss' in k)
    assert torch.isfinite(total)
    total.backward()
    return losses


def step_on_own_data(path: str, dataset_overrides: dict) -> dict:
    """Build the config's model (random teacher), read three training samples through the
    config's own dataset (with ``dataset_overrides``), pipeline and data preprocessor, and
    back-propagate the losses; returns the losses."""
    from mmengine.config import Config
    from mmengine.dataset import pseudo_collate
    from mmengine.registry import DefaultScope

    from mlkd.registry import DATASETS, MODELS

    cfg = Config.fromfile(path)
    cfg.model.teacher_ckpt = None
    cfg.model.allow_random_teacher = True
    if cfg.get('data_preprocessor'):  # what mmengine's Runner does with a top-level one
        cfg.model.setdefault('data_preprocessor', cfg.data_preprocessor)
    mlkd.register_all_modules()
    with DefaultScope.overwrite_default_scope('mlkd'):
        model = MODELS.build(cfg.model)
        data = DATASETS.build(dict(cfg.train_dataloader.dataset, **dataset_overrides))
    model.train()
    batch = model.data_preprocessor(pseudo_collate([data[0], data[1], data[2]]), True)
    losses = model(**batch, mode='loss')
    distill = [k for k in losses if k.startswith('loss_') and k != 'loss_cls']
    assert distill, losses.keys()
    total = sum(v for k, v in losses.items() if 'loss' in k)
    assert torch.isfinite(total)
    total.backward()
    assert any(p.grad is not None for p in model.student.parameters())
    return losses


@pytest.fixture
def tmp_work_dir(tmp_path):
    path = tmp_path / 'work'
    path.mkdir()
    return str(path)


def register_test_losses():
    """Register the small losses the algorithm tests plug in (idempotent); returns their names."""
    from mlkd.models.losses.base import RoutedLoss
    from mlkd.registry import MODELS

    @MODELS.register_module(name='TestHintLoss', force=True)
    class TestHintLoss(RoutedLoss):
        """FitNet-style hint: ``mean((s_feats − t_feats)²)`` on maps of equal shape."""

        def compute(self, s_feats, t_feats):
            return (s_feats - t_feats).pow(2).mean()

    @MODELS.register_module(name='TestStackLoss', force=True)
    class TestStackLoss(RoutedLoss):
        """Sum of the means of a list of tensors (checks list sources)."""

        def compute(self, parts):
            return sum(p.mean() for p in parts)

    return 'TestHintLoss', 'TestStackLoss'


def write_tiny_distiller_config(path, base: str, extra: str = '') -> str:
    """Write ``path``: the distillation config ``base`` with a random teacher, 64 training and 32
    validation samples, batches of 16 and no loader workers (for runs through tools/train.py and
    tools/dist_train.sh), then ``extra`` (config lines). Returns the path as a string."""
    import textwrap

    path.write_text(
        textwrap.dedent(f"""
        _base_ = [{base!r}]
        model = dict(teacher_ckpt=None, allow_random_teacher=True)
        train_dataloader = dict(batch_size=16, num_workers=0, persistent_workers=False,
                                dataset=dict(num_samples=64))
        val_dataloader = dict(num_workers=0, persistent_workers=False,
                              dataset=dict(num_samples=32))
        test_dataloader = val_dataloader
    """)
        + textwrap.dedent(extra)
    )
    return str(path)


def free_port() -> int:
    """A free TCP port on localhost (for 2-process gloo tests)."""
    import socket

    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def pytest_sessionfinish(session, exitstatus):

    tool_server.close()


#: Test files that train end to end, longest first (seconds of CPU each in docs/testing.md's
#: profile). pytest-xdist (``--dist loadfile``) hands files to its processes in collection order,
#: one at a time, so starting with the longest keeps one process from being left with a long file
#: at the end while the other idles. A scheduling hint only: the order of files changes no result
#: (each file builds its own fixtures), and a file missing here simply runs in its usual place.
RUN_FIRST = (
    'tests/tools/test_training.py',
    'tests/utils/test_checkpoint_safety.py',
    'tests/configs/test_spml.py',
    'tests/configs/test_feature_configs.py',
    'tests/tools/test_tool_server.py',
    'tests/tools/analysis_tools/test_logs.py',
    'tests/engine/test_amp.py',
    'tests/tools/test_sweep_tool.py',
    'tests/tools/test_bad_inputs.py',
    'tests/tools/analysis_tools/test_per_class.py',
    'tests/engine/test_teacher_cache_distributed.py',
    'tests/tools/test_config_tools.py',
    'tests/engine/test_distributed.py',
    'tests/configs/test_paper_table_configs.py',
    'tests/tools/test_demo.py',
    'tests/tools/analysis_tools/test_intra_class_study.py',
    'tests/configs/test_intra_class_configs.py',
)


def pytest_collection_modifyitems(session, config, items):
    rank = {path: i for i, path in enumerate(RUN_FIRST)}

    def file_rank(item) -> int:
        return rank.get(osp.relpath(str(item.path), REPO), len(RUN_FIRST))

    items.sort(key=file_rank)  # stable: the order inside a file and among the rest is kept


# Libraries set environment variables in the test process when first used: building a Runner
# makes torch put TORCHINDUCTOR_CACHE_DIR (its default) there, importing sklearn (MultiDigits
# does) adds KMP_DUPLICATE_LIB_OK and KMP_INIT_AT_FORK. From then on every tool run of that
# process saw an environment that differs from the tool server's and went to a fresh interpreter
# (~5 s of CPU more per run, for most tool runs of the suite). Setting them first, by the same
# calls, keeps the environment constant; a tool run sets the same values itself.
import sklearn  # noqa: E402,F401
from torch._inductor.runtime.cache_dir_utils import cache_dir as _inductor_cache_dir  # noqa: E402

_inductor_cache_dir()

#: The classifier run several files read (tool-server fidelity, checkpoint safety, bad inputs):
#: tools/train.py on the MultiDigits ResNet student, one epoch of one 32-sample iteration (an
#: optimizer step and a scheduler step), then validation; seeded so that a second run (the tool
#: server's fresh-interpreter comparison) must give the same bits.
STUDENT_RUN_CONFIG = 'configs/multidigits/resnet_student.py'
STUDENT_RUN_OPTIONS = [
    *SMALL_TOOL_RUN,
    'train_dataloader.dataset.num_samples=32',
    'randomness.seed=0',
]


@pytest.fixture(scope='session')
def student_run(tmp_path_factory) -> dict:
    """``STUDENT_RUN_CONFIG`` trained by tools/train.py (served) once per session.

    Returns ``{'work_dir': its work dir, 'checkpoint': its epoch_1.pth, 'log': stdout + stderr}``.
    Readers must not modify what it holds (copy a file before changing it).
    """
    with shared_across_workers(tmp_path_factory, 'student_run') as (root, done):
        work_dir = str(root / 'work')
        log_path = root / 'log.txt'
        if not done:
            out = run_tool(
                'tools/train.py',
                STUDENT_RUN_CONFIG,
                '--work-dir',
                work_dir,
                '--cfg-options',
                *STUDENT_RUN_OPTIONS,
            )
            assert out.returncode == 0, out.stderr[-3000:]
            log_path.write_text(out.stdout + out.stderr)
    return {
        'work_dir': work_dir,
        'checkpoint': osp.join(work_dir, 'epoch_1.pth'),
        'log': log_path.read_text(),
    }


#: ``Config._file2dict`` results of shipped config files (see :func:`shipped_configs_parsed_once`),
#: by (path, modification time, size, parse flags); kept for the whole test process.
_PARSED_SHIPPED_CONFIGS: dict = {}


@contextlib.contextmanager
def shipped_configs_parsed_once():
    """Inside the block, each file under ``configs/`` is parsed by mmengine once per test process.

    ``Config.fromfile`` reads a leaf and, recursively, each of its ``_base_`` files through
    ``Config._file2dict`` (temporary copies, substitutions, an exec): ~30 ms for a leaf of 12
    files, and the config families share most bases. Here ``_file2dict`` of a shipped file is
    served from a cache of its result, keyed by path, modification time and size, and handed out
    as a fresh copy, so callers still own (and may edit) what they get (kept pickled: a copy is
    faster to make, and the cache adds no objects for the garbage collector to walk). The result depends only on
    the file's text and its bases' (no shipped config reads environment variables; a file that
    does is not cached), so a cached parse equals a fresh one; a file that fails to parse is not
    cached and fails again. Files outside ``configs/`` (a test's own leaf) are parsed as usual.
    """
    import pickle

    from mmengine.config import Config

    shipped = osp.join(REPO, 'configs') + os.sep
    original = Config.__dict__['_file2dict']
    parse = original.__func__

    def file2dict(
        filename, use_predefined_variables=True, use_environment_variables=True, lazy_import=None
    ):
        args = (use_predefined_variables, use_environment_variables, lazy_import)
        path = osp.abspath(osp.expanduser(str(filename)))
        if not path.startswith(shipped):
            return parse(filename, *args)
        stat = os.stat(path)
        key = (path, stat.st_mtime_ns, stat.st_size, *args)
        if key not in _PARSED_SHIPPED_CONFIGS:
            result = parse(filename, *args)
            if result[2]:  # environment variables were substituted: parse it every time
                return result
            _PARSED_SHIPPED_CONFIGS[key] = pickle.dumps(result, pickle.HIGHEST_PROTOCOL)
        return pickle.loads(_PARSED_SHIPPED_CONFIGS[key])

    Config._file2dict = staticmethod(file2dict)
    try:
        yield
    finally:
        Config._file2dict = original


@pytest.fixture(scope='module')
def parse_shipped_configs_once():
    """The module's tests run inside :func:`shipped_configs_parsed_once`."""
    with shipped_configs_parsed_once():
        yield


@functools.lru_cache(maxsize=2)
def _uniform_pool(size: int, seed: int) -> torch.Tensor:
    """``size`` numbers drawn from U(0, 1) with ``seed`` (made once per test process)."""
    return torch.rand(size, generator=torch.Generator().manual_seed(seed))


@contextlib.contextmanager
def cheap_default_init(pool_size: int = 1_000_003, seed: int = 0):
    """Inside the block, ``Tensor.uniform_`` (what PyTorch's default initialisation of
    convolutions and linear layers draws with, ``kaiming_uniform_`` and the bias bound) copies
    from a pool of ``pool_size`` numbers drawn once, instead of drawing each number: a
    ResNet-50-size network is then initialised in ~0.02 s instead of ~0.25 s. Each weight still
    lies in its layer's default bounds (the same scaling), and the numbers follow U(a, b); they are
    not independent across tensors more than ``pool_size`` apart, which a build-and-step test
    does not need. A prime pool size keeps the repetition out of step with layer shapes."""
    pool = _uniform_pool(pool_size, seed)
    position = 0

    def pooled_uniform_(tensor, low: float = 0.0, high: float = 1.0, *, generator=None):
        nonlocal position
        with torch.no_grad():
            flat = tensor.view(-1)
            done = 0
            while done < flat.numel():  # the read position moves on: tensors differ
                count = min(flat.numel() - done, pool_size - position)
                flat[done : done + count].copy_(pool[position : position + count])
                done += count
                position = (position + count) % pool_size
            flat.mul_(high - low).add_(low)
        return tensor

    original = torch.Tensor.uniform_
    torch.Tensor.uniform_ = pooled_uniform_
    try:
        yield
    finally:
        torch.Tensor.uniform_ = original


@pytest.fixture(scope='session')
def multidigits_teacher_ckpt(tmp_path_factory) -> str:
    """A trained teacher checkpoint: ``configs/multidigits/mldecoder_teacher.py``, one epoch on
    64 samples (``small_run_cfg``), trained once per session (also under pytest-xdist) for the
    distillation tests that load a real teacher. Read it; never write next to it."""
    with shared_across_workers(tmp_path_factory, 'multidigits_teacher') as (root, done):
        if not done:
            from mlkd.engine import build_runner

            build_runner(
                small_run_cfg(
                    MULTIDIGITS_TEACHER, str(root), epochs=1, train_samples=64, val_samples=32
                )
            ).train()
    return str(root / 'epoch_1.pth')
