"""Label images with a trained classifier or its ONNX export.

    python tools/infer.py CONFIG IMAGES... --checkpoint CKPT [--thresholds thresholds.json]
    python tools/infer.py model.onnx IMAGES... [--thresholds thresholds.json]
        [--out labels.jsonl | labels.csv] [--overwrite] [--batch-size 32] [--threshold 0.5]

IMAGES are image files, folders (their images, sub-folders included) and image lists (``.txt``:
one path per line, relative to the list). Each image goes through the config's test pipeline (an
ONNX file carries it); a distillation config labels with its student. Labels are the classes whose
score reaches the threshold: the per-class thresholds of ``--thresholds`` (from
``tools/analysis_tools/calibrate_thresholds.py``; refused if made for another label set), else
``--threshold`` (0.5). Without ``--out`` each image's labels and scores are printed; ``--out``
writes JSON lines (``{"image", "labels", "scores"}``) or CSV (``image, labels, <one score column per
class>``). Runs on CPU (``--device cuda`` for PyTorch on a GPU).
"""

import argparse

from mlkd.apis import ImageLabeler, label_images, save_labels
from mlkd.apis.inference import check_labels_path, format_labels
from mlkd.utils.cli import add_cfg_options_argument, add_trust_checkpoint_argument, probability
from mlkd.utils.output_policy import add_overwrite_argument


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description='Label images with a classifier or an ONNX model')
    parser.add_argument('model', help='a config (with --checkpoint) or an .onnx file')
    parser.add_argument('images', nargs='+', help='image files, folders, image lists (.txt)')
    parser.add_argument('--checkpoint', help='checkpoint file or work dir (with a config)')
    parser.add_argument('--thresholds', help='per-class thresholds file (calibrate_thresholds.py)')
    parser.add_argument(
        '--threshold', type=probability, default=0.5, help='one threshold for all classes'
    )
    parser.add_argument(
        '--out', help='write the labels to a .jsonl or .csv file instead of printing'
    )
    parser.add_argument('--batch-size', type=int, default=32)
    parser.add_argument('--device', default='cpu', help='PyTorch device (cpu, cuda)')
    parser.add_argument('--threads', type=int, help="ONNX Runtime threads (default: torch's)")
    add_cfg_options_argument(parser, help='override config entries')
    add_overwrite_argument(parser)
    add_trust_checkpoint_argument(parser)
    args = parser.parse_args(argv)
    is_onnx = args.model.lower().endswith('.onnx')
    if is_onnx and (args.checkpoint or args.cfg_options):
        parser.error('an .onnx model takes no --checkpoint or --cfg-options')
    if not is_onnx and not args.checkpoint:
        parser.error(f'{args.model} is a config: give its --checkpoint (or pass an .onnx file)')
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    inputs = [args.model, args.checkpoint, args.thresholds]
    if args.out:  # refused before any work
        check_labels_path(args.out, args.overwrite, [p for p in inputs if p])
    if args.model.lower().endswith('.onnx'):
        labeler = ImageLabeler.from_onnx(args.model, threads=args.threads)
    else:
        labeler = ImageLabeler.from_checkpoint(
            args.model, args.checkpoint, args.cfg_options, args.device
        )
    records = label_images(
        labeler, args.images, args.thresholds or args.threshold, args.batch_size, progress=True
    )
    if args.out:
        save_labels(records, args.out, labeler.classes, args.overwrite, [p for p in inputs if p])
        print(f'labelled {len(records)} images with {labeler.description}; wrote {args.out}')
    else:
        for record in records:
            print(format_labels(record))


if __name__ == '__main__':
    main()
