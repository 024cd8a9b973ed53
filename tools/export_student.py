"""Write the student of a distillation checkpoint as a plain, weights-only state dict.

    python tools/export_student.py work_dirs/x/epoch_80.pth student.pth [--overwrite]

The output holds ``state_dict`` (tensors only, keys as mmpretrain's ``ImageClassifier`` expects)
and a ``meta`` of plain strings and numbers, so ``torch.load(path, weights_only=True)`` and
``ImageClassifier.load_state_dict(..., strict=True)`` accept it under any torch and numpy version.
When the run used ``StudentEMAHook``, the checkpoint's student weights are the EMA ones.

The output is written atomically (complete or not at all). It may not be the input checkpoint,
and an existing file is only replaced with ``--overwrite`` (or its old name ``--force``). A
student with NaN or infinite weights (a diverged run) is refused.
"""

import argparse
import os
import os.path as osp
from collections import OrderedDict

import torch

import mlkd
from mlkd.models.weights import STUDENT_PREFIX as PREFIX
from mlkd.models.weights import non_finite_keys, show_keys
from mlkd.utils.checkpoint import load_local_checkpoint
from mlkd.utils.cli import add_trust_checkpoint_argument
from mlkd.utils.output_policy import add_overwrite_argument, check_output, open_output


def check_output_path(checkpoint_path: str, out_path: str, overwrite: bool = False) -> None:
    """Refuse to write over the input, over an existing file without ``overwrite``
    (:func:`~mlkd.utils.output_policy.check_output`), or into a path that cannot hold a file;
    every error names the path at fault."""
    check_output(out_path, inputs=[checkpoint_path], overwrite=overwrite)
    folder = osp.dirname(osp.abspath(out_path))
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as error:
        raise OSError(
            f'cannot write {out_path!r}: cannot create its folder {folder!r} '
            f'({error.strerror or error})'
        ) from None
    if not os.access(folder, os.W_OK):
        raise PermissionError(f'cannot write {out_path!r}: folder {folder!r} is not writable')


def export_student(checkpoint_path: str, out_path: str, overwrite: bool = False) -> dict:
    """Extract the student; returns the written dictionary (see :func:`check_output_path`)."""
    check_output_path(checkpoint_path, out_path, overwrite)
    checkpoint = load_local_checkpoint(checkpoint_path, map_location='cpu')
    state = checkpoint.get('state_dict', checkpoint)
    student = OrderedDict(
        (k[len(PREFIX) :], v.detach().clone())
        for k, v in state.items()
        if k.startswith(PREFIX) and isinstance(v, torch.Tensor)
    )
    if not student:
        raise ValueError(
            f'{checkpoint_path} has no "{PREFIX}*" weights: not a distiller '
            'checkpoint (a plain classifier checkpoint needs no export)'
        )
    bad = non_finite_keys(student)
    if bad:
        raise ValueError(
            f'refusing to export {checkpoint_path!r}: the student holds NaN or '
            f'infinite weights in {show_keys(bad)} (a diverged run); export an '
            'earlier checkpoint'
        )
    meta = checkpoint.get('meta', {}) if isinstance(checkpoint, dict) else {}
    classes = (meta.get('dataset_meta') or {}).get('classes')
    out = {
        'state_dict': student,
        'meta': {
            'source': osp.abspath(checkpoint_path),
            'mlkd_version': mlkd.__version__,
            'epoch': int(meta.get('epoch', -1)),
            'classes': [str(c) for c in classes] if classes else [],
        },
    }
    try:
        with open_output(out_path, 'wb', inputs=[checkpoint_path], overwrite=overwrite) as file:
            torch.save(out, file)
    except OSError as error:
        raise OSError(f'cannot write {out_path!r}: {error.strerror or error}') from error
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description='Export the student of a distiller checkpoint')
    parser.add_argument('checkpoint', help="a distillation run's checkpoint file")
    parser.add_argument('out', help="the student's checkpoint to write (a plain classifier's)")
    add_overwrite_argument(parser, '--force')
    add_trust_checkpoint_argument(parser)
    args = parser.parse_args(argv)
    out = export_student(args.checkpoint, args.out, overwrite=args.overwrite)
    print(f'wrote {len(out["state_dict"])} student tensors to {args.out}')


if __name__ == '__main__':
    main()
