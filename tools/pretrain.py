"""Rebuild the demo's bundled pretrained backbones (MultiGlyphs) and check them against the manifest.

    OMP_NUM_THREADS=1 python tools/pretrain.py                    # rebuild both, compare sha256
    OMP_NUM_THREADS=1 python tools/pretrain.py --names multiglyphs_student_backbone
    OMP_NUM_THREADS=1 python tools/pretrain.py --update-bundled   # maintainers: ship the result

Each name of ``mlkd/weights/manifest.json`` is trained from its config (``configs/pretrain/``,
seed 0) by the runner the config names (``MLKDRunner``), its backbone is extracted from the last
checkpoint and written to ``<work-dir>/<name>.pth`` (a backbone state dict, serialised so that
the same tensors give the same bytes). The tool prints the file's sha256 beside the one recorded
in the manifest and exits 1 when they differ. The recorded files were built with
``OMP_NUM_THREADS=1`` on the torch version the manifest names: the thread count changes the order
of floating-point sums, so another thread count or machine gives weights that differ in the last
bits (and another digest). ``--update-bundled`` copies the rebuilt files into ``mlkd/weights/``
and records their sha256. Every file is written atomically (a crash leaves the old one intact).
"""

from __future__ import annotations

import argparse
import io
import os
import os.path as osp
import shutil
import sys
from collections import OrderedDict

import torch

import mlkd  # noqa: F401
from mlkd.apis.runs import train_and_evaluate
from mlkd.models.bundled_weights import (
    BUNDLED_DIR,
    MANIFEST,
    bundled_manifest,
    file_sha256,
)
from mlkd.models.weights import resolve_checkpoint
from mlkd.utils.atomic import atomic_write, write_json_atomic
from mlkd.utils.checkpoint import load_local_checkpoint
from mlkd.utils.cli import load_config
from mlkd.utils.output_policy import add_overwrite_argument, check_outputs

#: The repository (or the installed ``mlkd/.mim``): the manifest names configs relative to it.
ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
BACKBONE_PREFIX = 'backbone.'


def backbone_state(checkpoint_path: str) -> OrderedDict:
    """The ``backbone.*`` tensors of a classifier checkpoint, prefix removed, in stored order."""
    state = load_local_checkpoint(checkpoint_path, map_location='cpu')['state_dict']
    backbone = OrderedDict(
        (k[len(BACKBONE_PREFIX) :], v.detach().clone().contiguous())
        for k, v in state.items()
        if k.startswith(BACKBONE_PREFIX)
    )
    if not backbone:
        raise ValueError(f'{checkpoint_path!r} holds no {BACKBONE_PREFIX}* weights')
    return backbone


def save_reproducibly(state: OrderedDict, path: str) -> None:
    """``torch.save`` through memory: the archive's internal name and id then depend on the
    tensors only (saving to a path names the archive after the file). Written atomically: a
    crash or a full disk leaves the file it replaces intact."""
    buffer = io.BytesIO()
    torch.save(state, buffer)
    with atomic_write(path) as f:
        f.write(buffer.getvalue())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    manifest = bundled_manifest()
    parser.add_argument(
        '--names',
        nargs='+',
        default=sorted(manifest),
        choices=sorted(manifest),
        help='which bundled weights to rebuild (default: all)',
    )
    parser.add_argument('--work-dir', default='work_dirs/pretrain')
    add_overwrite_argument(
        parser, help='replace the rebuilt files of an earlier call in --work-dir'
    )
    parser.add_argument(
        '--update-bundled',
        action='store_true',
        help='copy the rebuilt files into mlkd/weights and record their sha256',
    )
    parser.add_argument('--verbose', action='store_true', help='show the training logs')
    args = parser.parse_args(argv)

    check_outputs(
        [osp.join(args.work_dir, f'{name}.pth') for name in args.names], overwrite=args.overwrite
    )
    mismatches = []
    for name in args.names:
        entry = manifest[name]
        cfg = load_config(osp.join(ROOT, entry['config']))
        cfg.work_dir = osp.join(args.work_dir, name)
        cfg.randomness = dict(seed=0, deterministic=False)
        result = train_and_evaluate(
            cfg, f'[pretrain] {name}', verbose=args.verbose, overwrite=args.overwrite
        )
        out = osp.join(args.work_dir, f'{name}.pth')
        save_reproducibly(backbone_state(resolve_checkpoint(result['checkpoint'])), out)
        digest = file_sha256(out)
        same = digest == entry.get('sha256')
        print(
            f'{name}: val mAP {result["val"]["mAP"]:.2f}; {out}\n  sha256 {digest}\n  manifest '
            f'{entry.get("sha256")} ({"same" if same else "DIFFERENT"})',
            flush=True,
        )
        if args.update_bundled:
            with (
                open(out, 'rb') as rebuilt,
                atomic_write(osp.join(BUNDLED_DIR, entry['file'])) as f,
            ):
                shutil.copyfileobj(rebuilt, f)
            entry.update(
                sha256=digest,
                bytes=os.path.getsize(out),
                torch=torch.__version__,
                pretrain_val_mAP=round(result['val']['mAP'], 2),
            )
            write_json_atomic(osp.join(BUNDLED_DIR, MANIFEST), manifest)
        elif not same:
            mismatches.append(name)
    if mismatches:
        print(
            f'rebuilt weights differ from the bundled ones: {mismatches} (see the thread-count '
            "note in this tool's docstring)",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
