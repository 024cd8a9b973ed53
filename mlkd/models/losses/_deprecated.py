"""Old import paths of the flat ``mlkd.models.losses`` folder, kept for one release.

The losses moved into family folders (``task/``, ``logit_kd/``, ``feature_kd/``,
``single_positive/``). ``import mlkd.models.losses.kd`` still works: a finder on ``sys.meta_path``
answers the old module names with the new modules and warns once per import
(``DeprecationWarning``). Registry names and config keys did not change.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

PACKAGE = 'mlkd.models.losses'
#: old module (under PACKAGE) -> new module (under PACKAGE)
MOVED = {
    **{name: f'task.{name}' for name in ('asymmetric', 'bce', 'focal', 'missing_label', 'two_way')},
    'task': 'task',
    **{
        name: f'logit_kd.{name}'
        for name in (
            'kd',
            'dkd',
            'mlld',
            'mld',
            'mse',
            'partial_softmax',
            'negative_discrepancy',
            'label_embedding',
            'mdkd',
        )
    },
    **{name: f'feature_kd.{name}' for name in ('ofd', 'review', 'vid', 'crd', 'relation')},
    'feature': 'feature_kd',
    'consistency': 'single_positive',
}
#: old class names -> (new module, new name)
RENAMED = {
    'MultiLabelTaskLoss': ('base', 'TaskLoss'),
}


class _MovedModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Resolves ``mlkd.models.losses.<old>`` to its new module, with a DeprecationWarning."""

    def find_spec(self, fullname, path=None, target=None):
        prefix, _, name = fullname.rpartition('.')
        if prefix != PACKAGE or name not in MOVED or MOVED[name] == name:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        new = f'{PACKAGE}.{MOVED[spec.name.rpartition(".")[2]]}'
        warnings.warn(
            f'{spec.name} moved to {new}; the old path works for one release',
            DeprecationWarning,
            stacklevel=3,
        )
        return importlib.import_module(new)

    def exec_module(self, module):
        pass


def install() -> None:
    """Put the finder on ``sys.meta_path`` once."""
    if not any(isinstance(f, _MovedModuleFinder) for f in sys.meta_path):
        sys.meta_path.append(_MovedModuleFinder())


def renamed(name: str):
    """The object an old name stands for, with a DeprecationWarning; AttributeError if unknown."""
    if name not in RENAMED:
        raise AttributeError(f'module {PACKAGE!r} has no attribute {name!r}')
    module, new = RENAMED[name]
    warnings.warn(
        f'{PACKAGE}.{name} is deprecated; use {PACKAGE}.{module}.{new}',
        DeprecationWarning,
        stacklevel=3,
    )
    return getattr(importlib.import_module(f'{PACKAGE}.{module}'), new)
