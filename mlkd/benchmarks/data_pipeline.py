"""Images per second of one data-loading worker: the shipped COCO train pipelines, torchvision
``transforms.v2`` pipelines doing the same crops, and JPEG decoders alone.

The images are generated: :func:`write_coco` writes COCO-2014-format annotations and JPEGs of
COCO's typical sizes (640 x 480 and the like, smooth content with edges and grain, quality 90), so
every variant decodes real JPEG files from disk (the OS file cache, after the first pass).

A worker of a ``DataLoader`` runs one sample at a time on one core: every variant is timed here
in this process, one thread for torch and OpenCV (:func:`one_worker_threads`), over all images
per pass; passes of all variants are interleaved (:func:`~.common.timed_interleaved`) and the
median pass gives the rate. ``dataloader_rate`` measures a real ``DataLoader`` with several
workers instead (scaling over the host's cores).
"""

from __future__ import annotations

import io
import json
import os
import os.path as osp
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import torch
from PIL import Image, ImageDraw

from .common import config, timed_interleaved

#: Shipped train pipelines: name -> dataset config (configs/_base_/datasets/<file>).
PIPELINES = {
    'l2d': 'coco2014_l2d.py',  # pillow decode, squish 224, flip, cutout, UDA RandAugment
    'two_views': 'coco2014_two_views.py',  # 3D: l2d's squish, then a weak and a strong view
    'two_way': 'coco2014_two_way.py',  # cv2 decode, RandomResizedCrop 224, flip, jitter, lighting
    'spml': 'coco2014_spml.py',  # cv2 decode, squish 672, square RandomResizedCrop 448, flip
}
#: Decoders of the shipped pipelines (mmcv's LoadImageFromFile ``imdecode_backend``).
SHIPPED_DECODERS = ('cv2', 'pillow')
#: Decoders feeding the torchvision pipelines (to a uint8 [3, H, W] tensor).
TV_DECODERS = ('torchvision', 'pil', 'cv2')
#: COCO train2014's commonest sizes (width, height), drawn uniformly.
COCO_SIZES = ((640, 480), (480, 640), (640, 427), (427, 640), (640, 426), (500, 375), (640, 512))
JPEG_QUALITY = 90
#: Standard deviation of the grain (pixel levels): sets the JPEG size (COCO train2014: ~160 KB).
GRAIN = 20.0


# ----------------------------------------------------------------------------------- the images


def _image(rng: np.random.Generator, size: tuple[int, int]) -> Image.Image:
    """A photo-like RGB image: a smooth colour field, a few shapes (edges), sensor-like grain."""
    width, height = size
    coarse = rng.integers(0, 256, (6, 8, 3), dtype=np.uint8)
    image = Image.fromarray(coarse).resize(size, Image.Resampling.BICUBIC)
    draw = ImageDraw.Draw(image)
    for _ in range(int(rng.integers(3, 9))):
        x0, x1 = sorted(rng.integers(0, width, 2).tolist())
        y0, y1 = sorted(rng.integers(0, height, 2).tolist())
        colour = tuple(rng.integers(0, 256, 3).tolist())
        (draw.ellipse if rng.random() < 0.5 else draw.rectangle)((x0, y0, x1, y1), fill=colour)
    pixels = np.asarray(image, dtype=np.int16) + rng.normal(0, GRAIN, (height, width, 3))
    return Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8))


def write_coco(root: str, count: int, seed: int = 0, num_classes: int = 80) -> dict[str, Any]:
    """Write ``count`` JPEGs to ``root/train2014`` and ``root/annotations/instances_train2014.json``
    (1-4 instance annotations per image over ``num_classes`` categories).

    Returns:
        ``dict(images=count, mean_bytes=..., sizes=...)`` of what was written.
    """
    rng = np.random.default_rng(seed)
    os.makedirs(osp.join(root, 'train2014'), exist_ok=True)
    os.makedirs(osp.join(root, 'annotations'), exist_ok=True)
    images, annotations, total = [], [], 0
    for index in range(count):
        size = COCO_SIZES[int(rng.integers(len(COCO_SIZES)))]
        name = f'COCO_train2014_{index:012d}.jpg'
        path = osp.join(root, 'train2014', name)
        _image(rng, size).save(path, quality=JPEG_QUALITY)
        total += osp.getsize(path)
        images.append(dict(id=index, file_name=name, width=size[0], height=size[1]))
        for category in rng.choice(num_classes, int(rng.integers(1, 5)), replace=False):
            annotations.append(
                dict(id=len(annotations), image_id=index, category_id=int(category) + 1)
            )
    categories = [dict(id=i + 1, name=f'category_{i:02d}') for i in range(num_classes)]
    with open(osp.join(root, 'annotations', 'instances_train2014.json'), 'w') as file:
        json.dump(dict(images=images, annotations=annotations, categories=categories), file)
    return dict(images=count, mean_bytes=total / max(count, 1))


# ---------------------------------------------------------------------------------- the variants


def shipped_dataset(
    name: str,
    data_root: str,
    decoder: str | None = None,
    images: int | None = None,
    fused: bool = False,
):
    """The training dataset of a shipped COCO dataset config (its pipeline as shipped), reading
    ``data_root`` (generated by :func:`write_coco`, or MS-COCO itself); ``decoder`` swaps
    ``LoadImageFromFile``'s ``imdecode_backend``; ``images`` keeps the first ones only.
    ``fused`` replaces a PIL decode followed by a PIL squish resize by the one
    :class:`~mlkd.datasets.transforms.PillowLoadResize` step (same pixels)."""
    from mmengine.registry import DefaultScope

    from mlkd.registry import DATASETS

    cfg = config(f'_base_/datasets/{PIPELINES[name]}').train_dataloader.dataset.to_dict()
    cfg['data_root'] = data_root
    # Serialising the sample list (mmengine's default, to share it with workers) runs a
    # gc.collect() of the whole process per dataset built; a sample's fetch is the same without.
    cfg['serialize_data'] = False
    if images is not None:
        cfg['indices'] = int(images)
    if decoder is not None:
        for step in cfg['pipeline']:
            if step['type'] == 'LoadImageFromFile':
                step['imdecode_backend'] = decoder
    if fused:
        if not fusable(name):
            raise ValueError(f'pipeline {name!r} does not start with a PIL decode and squish')
        resize = cfg['pipeline'][1]
        cfg['pipeline'][:2] = [
            dict(
                type='PillowLoadResize',
                scale=resize['scale'],
                interpolation=resize['interpolation'],
            )
        ]
    with DefaultScope.overwrite_default_scope('mlkd'):
        return DATASETS.build(cfg)


def fusable(name: str) -> bool:
    """Whether a shipped pipeline starts with a PIL decode and a PIL squish resize (what
    ``PillowLoadResize`` does in one step)."""
    load, resize = config(f'_base_/datasets/{PIPELINES[name]}').train_pipeline[:2]
    return (
        load['type'] == 'LoadImageFromFile'
        and load.get('imdecode_backend') == 'pillow'
        and resize['type'] == 'Resize'
        and resize.get('backend') == 'pillow'
        and resize.get('keep_ratio') is False
    )


def decoded_size(name: str) -> int:
    """The side of the shipped pipeline's output (its dataset config's ``image_size``)."""
    return int(config(f'_base_/datasets/{PIPELINES[name]}').image_size)


def _lighting(eigval: list[float], eigvec: list[list[float]], alphastd: float) -> Callable:
    """AlexNet PCA lighting on a uint8 ``[3, H, W]`` RGB tensor (torchvision has no such op)."""
    values = torch.tensor(eigval)
    vectors = torch.tensor(eigvec)

    def apply(image: torch.Tensor) -> torch.Tensor:
        alpha = torch.randn(3) * alphastd
        shift = vectors @ (alpha * values)
        return (image.float() + shift[:, None, None]).clamp_(0, 255).to(torch.uint8)

    return apply


def torchvision_pipeline(name: str) -> Callable[[torch.Tensor], Any]:
    """The torchvision ``transforms.v2`` counterpart of a shipped pipeline, on uint8 ``[3, H, W]``
    tensors: the same geometry (squish / random-resized crops, flips, output sizes) and the closest
    torchvision photometric ops (``RandAugment`` for UDA RandAugment, ``RandomErasing`` of a
    quarter of the area for the half-side cutout; PCA lighting as a small tensor op)."""
    from torchvision.transforms import v2

    cfg = config(f'_base_/datasets/{PIPELINES[name]}')
    if name in ('l2d', 'two_views'):
        squish = v2.Resize((cfg.image_size, cfg.image_size), antialias=True)
        flip = v2.RandomHorizontalFlip()
        strong = [
            flip,
            v2.RandomErasing(p=1.0, scale=(0.25, 0.25), ratio=(1.0, 1.0)),
            v2.RandAugment(num_ops=2),
        ]
        if name == 'l2d':
            return v2.Compose([squish, *strong])
        weak_view, strong_view = v2.Compose([flip]), v2.Compose(strong)

        def two_views(image: torch.Tensor) -> list[torch.Tensor]:
            image = squish(image)
            return [weak_view(image), strong_view(image)]

        return two_views
    if name == 'two_way':
        lighting = next(t for t in cfg.train_pipeline if t['type'] == 'Lighting')
        return v2.Compose(
            [
                v2.RandomResizedCrop(cfg.image_size, antialias=True),
                v2.RandomHorizontalFlip(),
                v2.ColorJitter(brightness=0.4, contrast=0.4, saturation=0.4),
                _lighting(lighting['eigval'], lighting['eigvec'], lighting['alphastd']),
            ]
        )
    if name == 'spml':
        return v2.Compose(
            [
                v2.Resize((cfg.resize_size, cfg.resize_size), antialias=True),
                v2.RandomResizedCrop(
                    cfg.image_size, scale=(0.25, 1.0), ratio=(1.0, 1.0), antialias=True
                ),
                v2.RandomHorizontalFlip(),
            ]
        )
    raise KeyError(f'no torchvision counterpart of pipeline {name!r}; known: {sorted(PIPELINES)}')


def tensor_decoder(name: str) -> Callable[[bytes], torch.Tensor]:
    """JPEG bytes -> uint8 RGB ``[3, H, W]`` tensor, by ``torchvision`` (``io.decode_jpeg``),
    ``pil`` or ``cv2``."""
    if name == 'torchvision':
        from torchvision.io import ImageReadMode, decode_jpeg

        return lambda data: decode_jpeg(
            torch.frombuffer(bytearray(data), dtype=torch.uint8), mode=ImageReadMode.RGB
        )
    if name == 'pil':
        from torchvision.transforms.v2.functional import pil_to_tensor

        return lambda data: pil_to_tensor(Image.open(io.BytesIO(data)).convert('RGB'))
    if name == 'cv2':
        import cv2

        def decode(data: bytes) -> torch.Tensor:
            image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
            return torch.from_numpy(cv2.cvtColor(image, cv2.COLOR_BGR2RGB)).permute(2, 0, 1)

        return decode
    raise KeyError(f'unknown decoder {name!r}; known: {TV_DECODERS}')


def raw_decoders(target: int = 224) -> dict[str, Callable[[bytes], Any]]:
    """Decoders alone (bytes in memory -> pixels): what the pipelines above call, plus the
    reduced-size decodes a pipeline that shrinks to ``target`` px could use (PIL's ``draft``:
    the largest DCT scale 1/1..1/8 keeping both sides >= ``target``; OpenCV's 1/2 scale)."""
    import cv2
    import mmcv

    def pil(data: bytes):
        return np.asarray(Image.open(io.BytesIO(data)).convert('RGB'))

    def pil_draft(data: bytes):
        image = Image.open(io.BytesIO(data))
        image.draft('RGB', (target, target))
        return np.asarray(image.convert('RGB'))

    decoders = {
        'PIL': pil,
        f'PIL draft (>= {target} px)': pil_draft,
        'OpenCV': lambda data: cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR),
        'OpenCV 1/2 scale': lambda data: cv2.imdecode(
            np.frombuffer(data, np.uint8), cv2.IMREAD_REDUCED_COLOR_2
        ),
        'torchvision.io.decode_jpeg': tensor_decoder('torchvision'),
        'mmcv imfrombytes (pillow)': lambda data: mmcv.imfrombytes(data, backend='pillow'),
        'mmcv imfrombytes (cv2)': lambda data: mmcv.imfrombytes(data, backend='cv2'),
    }
    return decoders


# ------------------------------------------------------------------------------------ measuring


@contextmanager
def one_worker_threads() -> Iterator[None]:
    """One torch thread and no OpenCV threads, as in a ``DataLoader`` worker of an mlkd run
    (``env_cfg.mp_cfg.opencv_num_threads=0``); restored after."""
    import cv2

    torch_threads, cv2_threads = torch.get_num_threads(), cv2.getNumThreads()
    torch.set_num_threads(1)
    cv2.setNumThreads(0)
    try:
        yield
    finally:
        torch.set_num_threads(torch_threads)
        cv2.setNumThreads(cv2_threads)


def image_files(data_root: str, images: int | None = None) -> list[str]:
    """The training images of ``data_root`` in dataset order (the first ``images``)."""
    dataset = shipped_dataset('l2d', data_root, images=images)
    return [dataset.get_data_info(i)['img_path'] for i in range(len(dataset))]


def pipeline_variants(
    data_root: str,
    pipelines: list[str],
    images: int | None = None,
    shipped_decoders: tuple[str, ...] = SHIPPED_DECODERS,
    tv_decoders: tuple[str, ...] = TV_DECODERS,
) -> dict[tuple[str, str, str], Callable[[], None]]:
    """``(pipeline, implementation, decoder) -> one pass over the images`` (the first
    ``images`` of ``data_root``)."""
    files = image_files(data_root, images)
    variants: dict[tuple[str, str, str], Callable[[], None]] = {}
    for name in pipelines:
        shipped_default = next(
            step.get('imdecode_backend', 'cv2')
            for step in config(f'_base_/datasets/{PIPELINES[name]}').train_pipeline
            if step['type'] == 'LoadImageFromFile'
        )
        for decoder in shipped_decoders:
            dataset = shipped_dataset(name, data_root, decoder, images)
            label = f'{decoder} (as shipped)' if decoder == shipped_default else decoder
            variants[(name, 'shipped (mmcv / mmpretrain)', label)] = _pass(dataset)
        if fusable(name):
            dataset = shipped_dataset(name, data_root, images=images, fused=True)
            variants[(name, 'shipped, PillowLoadResize', 'pillow')] = _pass(dataset)
        transform = torchvision_pipeline(name)
        for decoder in tv_decoders:
            decode = tensor_decoder(decoder)

            def run(decode=decode, transform=transform) -> None:
                for path in files:
                    with open(path, 'rb') as file:
                        transform(decode(file.read()))

            variants[(name, 'torchvision transforms.v2', decoder)] = run
    return variants


def _pass(dataset) -> Callable[[], None]:
    def run() -> None:
        for index in range(len(dataset)):
            dataset[index]

    return run


def decoder_variants(
    data_root: str, images: int | None = None, target: int = 224
) -> dict[str, Callable[[], None]]:
    """``decoder -> one pass`` over the images' bytes (read into memory first: decode only)."""
    blobs = []
    for path in image_files(data_root, images):
        with open(path, 'rb') as file:
            blobs.append(file.read())

    def decode_all(decode: Callable[[bytes], Any]) -> Callable[[], None]:
        def run() -> None:
            for blob in blobs:
                decode(blob)

        return run

    return {name: decode_all(decode) for name, decode in raw_decoders(target).items()}


def cuda_decode_rate(
    data_root: str, images: int | None = None, batch: int = 64, repeats: int = 5
) -> float | None:
    """Images per second of ``torchvision.io.decode_jpeg(..., device='cuda')`` on batches of
    ``batch`` files (nvJPEG); ``None`` without CUDA."""
    if not torch.cuda.is_available():
        return None
    from torchvision.io import decode_jpeg, read_file

    datas = [read_file(path) for path in image_files(data_root, images)]
    batches = [datas[i : i + batch] for i in range(0, len(datas), batch)]

    def run() -> None:
        for chunk in batches:
            decode_jpeg(chunk, device='cuda')

    seconds = timed_interleaved({'gpu': run}, repeats, 'cuda', warmup=1)['gpu']
    return len(datas) / seconds


def measure(
    variants: dict[Any, Callable[[], None]],
    images: int,
    repeats: int,
    warmup: int = 1,
    clock: Callable[[], float] | None = None,
) -> dict[Any, float]:
    """Images per second of each variant (one pass = ``images`` images), in one worker's
    threads, passes interleaved, median of ``repeats`` after ``warmup``."""
    with one_worker_threads():
        seconds = timed_interleaved(variants, repeats, 'cpu', warmup, clock or time.perf_counter)
    return {key: images / value for key, value in seconds.items()}


def dataloader_rate(dataset, workers: int, batch_size: int = 32, passes: int = 2) -> float:
    """Images per second of a ``DataLoader`` over ``dataset`` with ``workers`` processes
    (mmengine's ``pseudo_collate``, as the runner), the best of ``passes`` epochs after one
    warm-up epoch (the workers persist)."""
    from mmengine.dataset import pseudo_collate
    from torch.utils.data import DataLoader

    loader = DataLoader(
        dataset,
        batch_size=batch_size,
        num_workers=workers,
        collate_fn=pseudo_collate,
        persistent_workers=workers > 0,
    )
    best = 0.0
    for epoch in range(passes + 1):
        start = time.perf_counter()
        for _ in loader:
            pass
        if epoch:
            best = max(best, len(dataset) / (time.perf_counter() - start))
    return best
