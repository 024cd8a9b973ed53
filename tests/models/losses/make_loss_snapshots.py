"""Record the value (and Σ grad²) of every registered loss on its case in ``loss_cases.py``.

    PYTHONPATH=<checkout> python tests/models/losses/make_loss_snapshots.py OUT.json

``tests/data/loss_snapshots.json`` was recorded from the flat losses folder (before the contracts
refactor, commit be9c4c4) and pins that every loss kept its value, gradient and state behaviour.
Re-record it only for a deliberate change of a loss's math, and say so in the commit.
"""

import json
import sys

from loss_cases import CASES, record  # the script's folder, first on sys.path as for any script

import mlkd  # noqa: F401


def main(out: str) -> None:
    snapshots = {name: record(name) for name in sorted(CASES)}
    with open(out, 'w') as f:
        json.dump(dict(mlkd_file=mlkd.__file__, values=snapshots), f, indent=1, sort_keys=True)


if __name__ == '__main__':
    main(sys.argv[1])
