"""Parameters and FLOPs of the networks of a config: teacher(s) and student of a distiller, or the
classifier of a classifier config.

    python tools/analysis_tools/get_flops.py configs/3d/3d_voc_resnet50_to_mobilenet_v2.py \
        --shape 224 224
    python tools/analysis_tools/get_flops.py configs/multidigits/resnet_student.py --shape 3 32 32

FLOPs are mmengine's count (``mmengine.analysis.FlopAnalyzer``, fvcore's rules: one multiply-add
is one FLOP; convolutions, matrix products, attention, normalisations and adaptive pooling are
counted, element-wise activations are not; operators without a rule are listed) for one image
through the network's ``tensor`` forward (backbone, neck, head). The input size is ``--shape``
(``H W`` or ``C H W``), else the distiller's ``probe_input_size``, else 224 x 224.
"""

from __future__ import annotations

import argparse
import math

from mlkd.utils.cli import add_cfg_options_argument, load_config, run_tool
from mlkd.utils.tables import TABLE_STYLES, render_table


def networks(model_cfg: dict) -> list[tuple[str, object]]:
    """``(role, config)`` of the networks to count: the teacher (or each teacher of a
    multi-teacher distiller, ``teacher <name>``) and the student, or the model itself."""
    if 'teachers' in model_cfg and 'student' in model_cfg:
        teachers = [
            (f'teacher {name}', entry['network']) for name, entry in model_cfg['teachers'].items()
        ]
        return [*teachers, ('student', model_cfg['student'])]
    if 'teacher' in model_cfg and 'student' in model_cfg:
        return [('teacher', model_cfg['teacher']), ('student', model_cfg['student'])]
    return [('model', model_cfg)]


def input_shape(shape: list[int] | None, model_cfg: dict) -> tuple[int, int, int]:
    if shape:
        if len(shape) not in (2, 3):
            raise ValueError(f'--shape takes H W or C H W, got {shape}')
        if min(shape) < 1:
            raise ValueError(f'--shape sizes must be positive integers, got {shape}')
        return tuple(shape) if len(shape) == 3 else (3, *shape)
    probe = model_cfg.get('probe_input_size')
    if probe:
        return (3, *probe)
    return (3, 224, 224)


def human(number: float) -> str:
    for unit, scale in (('G', 1e9), ('M', 1e6), ('K', 1e3)):
        if abs(number) >= scale:
            return f'{number / scale:.3f}{unit}'
    return f'{number:.0f}'


def attention_flop_jit(inputs: list, outputs: list) -> int:
    """Multiply-adds of ``aten::scaled_dot_product_attention`` (not counted by mmengine 0.10):
    ``Q K^T`` and ``softmax(.) V`` for ``q [..., L, E]``, ``k [..., S, E]``, ``v [..., S, Ev]``."""
    from mmengine.analysis.jit_handles import get_shape

    q, v = get_shape(inputs[0]), get_shape(inputs[2])
    batch = math.prod(q[:-2])
    return batch * q[-2] * v[-2] * (q[-1] + v[-1])


def count(role: str, network_cfg, shape: tuple[int, int, int]) -> dict:
    """Build one network and count its parameters and FLOPs for a ``[1, *shape]`` input."""
    import torch
    from mmengine.analysis import FlopAnalyzer

    from mlkd.models.builder import build_network

    model = build_network(network_cfg, role)
    model.eval()
    with torch.no_grad():
        analyzer = FlopAnalyzer(model, inputs=(torch.zeros(1, *shape),))
        analyzer.set_op_handle('aten::scaled_dot_product_attention', attention_flop_jit)
        analyzer.unsupported_ops_warnings(False)
        analyzer.uncalled_modules_warnings(False)
        flops = analyzer.total()
    params = sum(p.numel() for p in model.parameters())
    return dict(
        role=role,
        type=type(model).__name__,
        params=params,
        flops=int(flops),
        uncounted=dict(analyzer.unsupported_ops()),
    )


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Parameters and FLOPs of a config's networks")
    parser.add_argument('config', help='config file path (or mlkd::<path under configs/>)')
    parser.add_argument('--shape', type=int, nargs='+', help='input size: H W or C H W')
    add_cfg_options_argument(
        parser, help='override config entries, e.g. model.student.head.num_classes=20'
    )
    parser.add_argument('--style', choices=TABLE_STYLES, default='ascii')
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    from mmengine.registry import init_default_scope

    args = parse_args(argv)
    cfg = load_config(args.config, args.cfg_options)
    init_default_scope(cfg.get('default_scope', 'mlkd'))
    model_cfg = cfg.model.to_dict() if hasattr(cfg.model, 'to_dict') else dict(cfg.model)
    shape = input_shape(args.shape, model_cfg)
    results = [count(role, network_cfg, shape) for role, network_cfg in networks(model_cfg)]
    header = ['network', 'type', 'params', 'FLOPs', 'input']
    rows = [
        [
            r['role'],
            r['type'],
            f'{r["params"]} ({human(r["params"])})',
            f'{r["flops"]} ({human(r["flops"])})',
            'x'.join(map(str, shape)),
        ]
        for r in results
    ]
    if len(results) == 2:
        teacher, student = results
        rows.append(
            [
                'student / teacher',
                '',
                f'{student["params"] / teacher["params"]:.3f}',
                f'{student["flops"] / teacher["flops"]:.3f}',
                '',
            ]
        )
    print(render_table(header, rows, args.style, title=args.config))
    for r in results:
        if r['uncounted']:
            ops = ', '.join(f'{op} x{n}' for op, n in sorted(r['uncounted'].items()))
            print(f'{r["role"]}: operators without a FLOP rule (not counted): {ops}')


if __name__ == '__main__':
    run_tool(main)
