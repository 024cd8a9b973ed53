"""Export a classifier, or the student of a distillation checkpoint, to ONNX and check it with
ONNX Runtime.

    python tools/deployment/pytorch2onnx.py CONFIG CHECKPOINT --out model.onnx
        [--num-images 16] [--external-normalization] [--exporter torchscript|dynamo]
        [--opset 17] [--tolerance 1e-4] [--precision fp32|fp16|int8] [--cfg-options ...]
        [--overwrite]

The graph takes ``images [B, 3, H, W]`` (dynamic batch; pixels as the config's test pipeline
leaves them) and returns ``scores [B, C]`` (sigmoid for multi-label heads, ML-Decoder included).
The data preprocessor's mean / std (and BGR→RGB flip) are folded into the graph, or, with
``--external-normalization``, left to the caller; they are recorded in the file's metadata either
way, with the class names and the test pipeline (``mlkd infer model.onnx IMAGES`` needs nothing
else). ONNX Runtime then scores the first ``--num-images`` test images and the largest |Δ| against
PyTorch is printed; above ``--tolerance`` the tool fails and writes nothing. ``--precision fp16``
(float16 graph) or ``int8`` (dynamically quantised weights) converts the checked float32 graph
and writes the converted one, printing its size and its mAP on the config's whole test split next
to the float32 file's (both run by ONNX Runtime). Needs the ``deploy`` extra:
``pip install "mlkd[deploy]"``.
"""

import argparse
import sys

from mlkd.apis import OnnxCheckError, export_onnx
from mlkd.deployment import EXPORTERS, PRECISIONS
from mlkd.utils.cli import add_cfg_options_argument, add_trust_checkpoint_argument
from mlkd.utils.output_policy import add_overwrite_argument


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description='Export a classifier to ONNX, checked by ONNX Runtime'
    )
    parser.add_argument('config', help='config file (a distillation config exports its student)')
    parser.add_argument('checkpoint', help='checkpoint file or work dir (its last checkpoint)')
    parser.add_argument('--out', required=True, help='the ONNX file to write')
    parser.add_argument('--num-images', type=int, default=16, help='test images checked (16)')
    parser.add_argument(
        '--external-normalization',
        action='store_true',
        help='leave mean / std to the caller (recorded in the metadata) instead of in the graph',
    )
    parser.add_argument('--exporter', choices=EXPORTERS, default='torchscript')
    parser.add_argument('--opset', type=int, default=None, help='ONNX opset (default 17)')
    parser.add_argument('--tolerance', type=float, default=1e-4, help='largest |Δ| of the scores')
    parser.add_argument(
        '--precision', choices=PRECISIONS, default='fp32', help='write a float16 / int8 file'
    )
    add_cfg_options_argument(parser, help='override config entries')
    add_overwrite_argument(parser)
    add_trust_checkpoint_argument(parser)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    try:
        result = export_onnx(
            args.config,
            args.checkpoint,
            args.out,
            cfg_options=args.cfg_options,
            num_images=args.num_images,
            fold_normalization=not args.external_normalization,
            opset=args.opset,
            exporter=args.exporter,
            tolerance=args.tolerance,
            precision=args.precision,
            overwrite=args.overwrite,
        )
    except OnnxCheckError as error:
        sys.exit(f'pytorch2onnx: {error}')
    print(
        f'max |Δ| of the scores, ONNX Runtime vs PyTorch, on {result.num_images} test images: '
        f'{result.max_abs_diff:.3g} (tolerance {args.tolerance:g})'
    )
    if result.precision != 'fp32':
        fp32_map, converted_map = result.test_map['fp32'], result.test_map[result.precision]
        print(
            f'{result.precision}: max |Δ| vs PyTorch {result.converted_max_abs_diff:.3g}; test '
            f'mAP {converted_map:.2f} vs {fp32_map:.2f} in float32 ({converted_map - fp32_map:+.2f}); '
            f'{result.size_bytes / 1e6:.2f} MB vs {result.fp32_size_bytes / 1e6:.2f} MB'
        )
    print(
        f'wrote {result.path} ({result.size_bytes / 1e6:.2f} MB; input images '
        f'[B, {", ".join(map(str, result.input_shape))}], {len(result.classes)} {result.activation} '
        'scores)'
    )


if __name__ == '__main__':
    main()
