"""Print a config fully resolved: every ``_base_`` merged and ``--cfg-options`` applied.

python tools/misc/print_config.py configs/3d/3d_multidigits.py
python tools/misc/print_config.py mlkd::3d/3d_multidigits.py --cfg-options a.b=1
python tools/misc/print_config.py CONFIG --out resolved.py    # also write it (loadable again)
"""

from __future__ import annotations

import argparse

from mlkd.utils.cli import add_cfg_options_argument, load_config, run_tool
from mlkd.utils.config_paths import resolve_config_path
from mlkd.utils.output_policy import add_overwrite_argument, check_output, write_text


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description='Print the fully resolved config')
    parser.add_argument('config', help='config file path (or mlkd::<path under configs/>)')
    add_cfg_options_argument(parser, help='override config entries, e.g. train_cfg.max_epochs=3')
    parser.add_argument('--out', help='also write the resolved config to this .py file')
    add_overwrite_argument(parser)
    return parser.parse_args(argv)


def config_text(cfg, path: str) -> str:
    """``cfg`` as the text of a file named ``path``: Python for ``.py``, else the format of the
    extension (json, yaml), as ``Config.dump(path)`` writes it."""
    if path.endswith('.py'):
        return cfg.pretty_text
    from mmengine.fileio import dump

    return dump(cfg.to_dict(), file_format=path.rsplit('.', 1)[-1])


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    policy = dict(inputs=[resolve_config_path(args.config)], overwrite=args.overwrite)
    if args.out:
        check_output(args.out, **policy)
    cfg = load_config(args.config, args.cfg_options)
    print(f'Config (path: {args.config}):\n{cfg.pretty_text}')
    if args.out:
        write_text(args.out, config_text(cfg, args.out), **policy)
        print(f'written to {args.out}')


if __name__ == '__main__':
    run_tool(main)
