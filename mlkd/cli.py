"""The ``mlkd`` command (also ``python -m mlkd``): the repository's tools under one name.

    mlkd train mlkd::3d/3d_multidigits.py --work-dir work_dirs/3d
    mlkd test CONFIG CHECKPOINT --out results.npz
    mlkd collect work_dirs/ --out results.md
    mlkd analyze-logs plot_curve work_dirs/3d --out curves.png
    mlkd print-config mlkd::3d/3d_multidigits.py
    mlkd export-onnx CONFIG CHECKPOINT --out model.onnx
    mlkd infer model.onnx images/ --thresholds thresholds.json

Each command runs a script of ``tools/`` with the remaining arguments, exactly as
``python tools/<script> ...`` would: from the repository when mlkd runs from a source checkout,
else from the copy that ``pip install`` puts in ``mlkd/.mim/tools``. Configs can be given as
``mlkd::<path under configs/>``.
"""

from __future__ import annotations

import os.path as osp
import runpy
import sys

#: command -> script under tools/
COMMANDS = {
    'train': 'train.py',
    'test': 'test.py',
    'export-student': 'export_student.py',
    'export-onnx': 'deployment/pytorch2onnx.py',
    'calibrate-thresholds': 'analysis_tools/calibrate_thresholds.py',
    'infer': 'infer.py',
    'demo': 'demo.py',
    'collect': 'analysis_tools/collect_results.py',
    'analyze-logs': 'analysis_tools/analyze_logs.py',
    'per-class-ap': 'analysis_tools/per_class_ap.py',
    'get-flops': 'analysis_tools/get_flops.py',
    'print-config': 'misc/print_config.py',
    'browse-dataset': 'visualization/browse_dataset.py',
}


def tools_dir() -> str:
    """``tools/`` of the source checkout mlkd runs from, else the installed ``mlkd/.mim/tools``.

    Raises:
        FileNotFoundError: when neither exists (an install made without setup.py's copy step).
    """
    from mlkd.utils.config_paths import source_checkout_root

    root = source_checkout_root()
    candidates = [osp.join(root, 'tools')] if root else []
    candidates.append(osp.join(osp.dirname(osp.abspath(__file__)), '.mim', 'tools'))
    for candidate in candidates:
        if osp.isdir(candidate):
            return candidate
    raise FileNotFoundError(
        f'mlkd tools not found (looked in {" and ".join(candidates)}); '
        'reinstall mlkd with pip so that setup.py copies them'
    )


def usage() -> str:
    width = max(map(len, COMMANDS))
    lines = [
        'usage: mlkd COMMAND [ARGS ...]   (mlkd COMMAND --help for its arguments)',
        '',
        'commands:',
    ]
    lines += [f'  {name:<{width}}  tools/{script}' for name, script in COMMANDS.items()]
    return '\n'.join(lines)


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ('-h', '--help'):
        print(usage())
        return
    command, args = argv[0], argv[1:]
    if command not in COMMANDS:
        sys.exit(f'mlkd: unknown command {command!r}\n\n{usage()}')
    script = osp.join(tools_dir(), COMMANDS[command])
    sys.argv = [script, *args]
    # the script's own folder first on the path, as `python tools/<script>` would have it
    sys.path.insert(0, osp.dirname(script))
    runpy.run_path(script, run_name='__main__')


if __name__ == '__main__':
    main()
