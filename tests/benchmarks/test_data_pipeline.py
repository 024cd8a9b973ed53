"""mlkd/benchmarks/data_pipeline.py: the generated COCO folder is read by the shipped dataset
configs; each torchvision counterpart makes the images its shipped pipeline makes (sizes, views);
the PillowLoadResize variant of the L2D pipeline gives the shipped samples, pixel for pixel."""

import numpy as np
import pytest
import torch

import mlkd
from mlkd.benchmarks import data_pipeline


@pytest.fixture(scope='module')
def coco_root(tmp_path_factory):
    mlkd.register_all_modules()
    root = str(tmp_path_factory.mktemp('coco'))
    info = data_pipeline.write_coco(root, 3)
    assert info['images'] == 3 and info['mean_bytes'] > 50_000  # grainy, COCO-like sizes
    return root


@pytest.mark.parametrize('name', sorted(data_pipeline.PIPELINES))
def test_torchvision_counterpart_makes_the_shipped_shapes(coco_root, name):
    dataset = data_pipeline.shipped_dataset(name, coco_root, images=2)
    assert len(dataset) == 2
    transform = data_pipeline.torchvision_pipeline(name)
    for decoder in data_pipeline.TV_DECODERS:
        decode = data_pipeline.tensor_decoder(decoder)
        for index in range(2):
            with open(dataset.get_data_info(index)['img_path'], 'rb') as file:
                image = decode(file.read())
            assert image.dtype == torch.uint8 and image.shape[0] == 3
            shipped, ours = dataset[index]['inputs'], transform(image)
            if isinstance(shipped, list):  # two views
                assert [v.shape for v in ours] == [v.shape for v in shipped]
            else:
                assert ours.shape == shipped.shape == (3, *[data_pipeline.decoded_size(name)] * 2)


def test_decoders_agree_on_the_image(coco_root):
    blob = open(data_pipeline.image_files(coco_root, 1)[0], 'rb').read()
    rgb = {d: data_pipeline.tensor_decoder(d)(blob) for d in data_pipeline.TV_DECODERS}
    for decoder, image in rgb.items():  # libjpeg builds may round differently, by a level or two
        assert image.shape == rgb['pil'].shape, decoder
        assert (image.int() - rgb['pil'].int()).abs().float().mean() < 1.0, decoder


@pytest.mark.parametrize('name', ['l2d', 'two_views'])
def test_fused_variant_gives_the_shipped_samples(coco_root, name):
    assert data_pipeline.fusable(name) and not data_pipeline.fusable('two_way')
    shipped = data_pipeline.shipped_dataset(name, coco_root)
    fused = data_pipeline.shipped_dataset(name, coco_root, fused=True)
    assert fused.pipeline.transforms[0].__class__.__name__ == 'PillowLoadResize'
    for index in range(len(shipped)):
        np.random.seed(index)
        a = shipped[index]['inputs']
        np.random.seed(index)
        b = fused[index]['inputs']
        for x, y in zip(a if isinstance(a, list) else [a], b if isinstance(b, list) else [b]):
            assert torch.equal(x, y)
