"""Write the resolved-config snapshots that ``test_config_resolution.py`` compares against.

    python tests/configs/make_config_snapshots.py            # every leaf of SAMPLE
    python tests/configs/make_config_snapshots.py --check    # compare only, write nothing

A snapshot is ``tests/data/config_snapshots/<folder>__<name>.json``: the leaf config resolved by
mmengine's ``Config.fromfile`` (every ``_base_`` merged, ``_base_.x`` references and
``{{fileDirname}}`` expanded), as ``cfg.to_dict()``, encoded by :func:`encode`.

When to regenerate: ONLY for a deliberate change of what a config means (a new default, a fixed
value, a new key), and in the same commit as that change, so that the diff of the JSON shows the
reviewer exactly what users will see change. A restructuring of ``configs/`` (moving shared parts
into bases, renaming base files) must leave every snapshot as it is; if the test fails after such
a change, the change is wrong, not the snapshot. ``--check`` says which snapshots would change.
"""

from __future__ import annotations

import argparse
import json
import os.path as osp
import sys

REPO = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))
CONFIGS = osp.join(REPO, 'configs')
SNAPSHOT_DIR = osp.join(REPO, 'tests', 'data', 'config_snapshots')

#: Leaves (paths under configs/) whose resolution is pinned: every method folder, every kind of
#: data (CIFAR-100, Tiny ImageNet, MS-COCO and VOC with the L2D protocol and two views,
#: MultiDigits multi-label / single-label / single-positive / held-out / partial labels, COCO
#: single-positive and full labels, the Two-way datasets) and every pair family (three- and
#: four-stage feature methods, ImageNet-layout, CIFAR-layout and Swin pairs).
SAMPLE = (
    '3d/3d_coco_resnet101_to_resnet34_two_views.py',
    '3d/3d_voc_swin_t_to_resnet18.py',
    'at/at_cifar100_resnet110_to_resnet32.py',
    'at/at_multidigits_single_label.py',
    'cifar100/resnet110.py',
    'cifar100/shufflev1.py',
    'crd/crd_tiny_imagenet_resnet32x4_to_resnet8x4.py',
    'demo/3d_paper_weights.py',
    'demo/l2d.py',
    'demo/student.py',
    'dkd/dkd_cifar100_vgg13_to_mobilenetv2.py',
    'fitnet/fitnet_multidigits.py',
    'intra_class/cifar100/ours_rkd_resnet50_to_resnet34.py',
    'intra_class/tiny_imagenet/vgg13_intra_class.py',
    'kd/kd_cifar100_wrn_40_2_to_shufflev1.py',
    'kd/kd_coco_cifar_resnet56_to_cifar_resnet20.py',
    'l2d/l2d_voc_resnet50_to_repvgg_a0.py',
    'mdkd/mdkd_coco_vgg13_bn_to_mobilenet_v2.py',
    'mld/mld_coco_resnet34_to_resnet101.py',
    'mlld/mlld_cifar100_resnet32x4_to_shufflev2.py',
    'mse/mse_voc_swin_t_to_mobilenet_v2.py',
    'multi_teacher/l2d_two_teachers_best_ap.py',
    'multidigits/mldecoder_teacher.py',
    'multidigits/resnet_student_single_positive.py',
    'multidigits/resnet_teacher_single_label.py',
    'ofd/ofd_cifar100_resnet32x4_to_resnet8x4.py',
    'own_teacher/3d_multidigits_torchvision_teacher.py',
    'own_teacher/l2d_coco_timm_convnext_tiny_to_resnet34.py',
    'own_teacher/l2d_multidigits_timm_teacher.py',
    'ofd/ofd_cifar100_vgg13_to_vgg8.py',
    'pkt/pkt_coco_cifar_wrn_40_2_to_cifar_wrn_16_2.py',
    'pretrain/multiglyphs_student_backbone.py',
    'ps/ps_multidigits.py',
    'ranking/kd.py',
    'reviewkd/reviewkd_coco_cifar_resnet32x4_to_shufflenet_v2.py',
    'reviewkd/reviewkd_voc_swin_t_to_mobilenet_v2.py',
    'rkd/rkd_voc_resnet50_to_mobilenet_v2.py',
    'spml/bce_coco_full.py',
    'spml/cl_multidigits.py',
    'spml/partial/scl_partial75_multidigits.py',
    'spml/role_coco_partial40.py',
    'students/coco_cifar_resnet20_mldecoder.py',
    'students/voc_repvgg_a0_mldecoder.py',
    'task_losses/resnet_student_two_way.py',
    'task_losses/two_way_samplewise_nuswide_resnet50.py',
    'teachers/coco_cifar_wrn_40_2_mldecoder.py',
    'teachers/coco_resnet34_mldecoder.py',
    'tiny_imagenet/resnet8x4.py',
    'vid/vid_cifar100_wrn_40_2_to_wrn_16_2.py',
    'vid/vid_multidigits.py',
)


def encode(value, root: str = REPO):
    """``cfg.to_dict()`` as JSON-safe data that keeps what JSON would lose.

    * dict key order is kept (JSON objects keep it; the comparison in the test is
      order-sensitive: the order of ``distill_losses``, ``connectors``, taps and hooks is the
      order they run in, and print_config shows the keys in this order);
    * a tuple becomes ``{"__tuple__": [...]}`` (mmengine keeps tuples and lists apart);
    * a string that contains the repository root (a ``{{fileDirname}}`` expansion) is
      normalised with ``os.path.normpath`` and the root replaced by ``<REPO>``: the only
      legitimately path-dependent part of a resolved config (the clone's location, and
      ``_base_/pairs/../../x.py`` vs ``x.py`` naming the same file).
    """
    if isinstance(value, dict):
        return {str(key): encode(item, root) for key, item in value.items()}
    if isinstance(value, tuple):
        return {'__tuple__': [encode(item, root) for item in value]}
    if isinstance(value, list):
        return [encode(item, root) for item in value]
    if isinstance(value, str) and root in value:
        return osp.normpath(value).replace(root, '<REPO>')
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f'config value of type {type(value).__name__} cannot be snapshotted: {value!r}')


def resolve(leaf: str) -> dict:
    """The encoded resolution of ``configs/<leaf>``."""
    from mmengine.config import Config

    return encode(Config.fromfile(osp.join(CONFIGS, leaf)).to_dict())


def snapshot_path(leaf: str) -> str:
    return osp.join(SNAPSHOT_DIR, leaf[:-3].replace('/', '__') + '.json')


def dumps(resolved: dict) -> str:
    return json.dumps(resolved, indent=1) + '\n'


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        '--check', action='store_true', help='only report which snapshots differ; write nothing'
    )
    args = parser.parse_args(argv)
    differing = []
    for leaf in SAMPLE:
        text = dumps(resolve(leaf))
        path = snapshot_path(leaf)
        old = open(path, encoding='utf-8').read() if osp.isfile(path) else None
        if old == text:
            continue
        differing.append(leaf)
        if not args.check:
            import os

            os.makedirs(SNAPSHOT_DIR, exist_ok=True)
            with open(path, 'w', encoding='utf-8') as f:
                f.write(text)
    verb = 'differ' if args.check else 'written'
    print(f'{len(SAMPLE)} leaves, {len(differing)} snapshots {verb}: {differing}')
    return 1 if args.check and differing else 0


if __name__ == '__main__':
    sys.exit(main())
