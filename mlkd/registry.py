"""mlkd registries: every node is a child of mmpretrain's.

An unscoped ``type`` in an mlkd config is looked up in the mlkd registry first and then in its
parents, so mmpretrain's classes (``ImageClassifier``, ``ResNet``, ``VOC``, ``AveragePrecision``)
resolve from mlkd configs while mlkd's own classes stay in the ``mlkd`` scope.

``locations`` lists the parent package too: a lookup through a child does not trigger the
parent's lazy import, so without it ``ResNet`` is not found until ``mmpretrain.models`` happens
to have been imported.
"""

from mmengine.registry import Registry
from mmpretrain import registry as mmpretrain_registry

__all__ = [
    'RUNNERS',
    'RUNNER_CONSTRUCTORS',
    'LOOPS',
    'HOOKS',
    'LOG_PROCESSORS',
    'OPTIMIZERS',
    'OPTIM_WRAPPERS',
    'OPTIM_WRAPPER_CONSTRUCTORS',
    'PARAM_SCHEDULERS',
    'DATASETS',
    'DATA_SAMPLERS',
    'TRANSFORMS',
    'MODELS',
    'MODEL_WRAPPERS',
    'WEIGHT_INITIALIZERS',
    'BATCH_AUGMENTS',
    'TASK_UTILS',
    'METRICS',
    'EVALUATORS',
    'VISUALIZERS',
    'VISBACKENDS',
    'register_all_modules',
]


def _child(name: str, locations: list[str]) -> Registry:
    parent = getattr(mmpretrain_registry, name)
    return Registry(parent.name, parent=parent, scope='mlkd', locations=locations)


_ENGINE = ['mlkd.engine', 'mmpretrain.engine']
_DATASETS = ['mlkd.datasets', 'mmpretrain.datasets']
_MODELS = ['mlkd.models', 'mmpretrain.models']
_EVALUATION = ['mlkd.evaluation', 'mmpretrain.evaluation']
_VISUAL = ['mmpretrain.visualization']

RUNNERS = _child('RUNNERS', _ENGINE)
RUNNER_CONSTRUCTORS = _child('RUNNER_CONSTRUCTORS', _ENGINE)
LOOPS = _child('LOOPS', _ENGINE)
HOOKS = _child('HOOKS', _ENGINE)
LOG_PROCESSORS = _child('LOG_PROCESSORS', _ENGINE)
OPTIMIZERS = _child('OPTIMIZERS', _ENGINE)
OPTIM_WRAPPERS = _child('OPTIM_WRAPPERS', _ENGINE)
OPTIM_WRAPPER_CONSTRUCTORS = _child('OPTIM_WRAPPER_CONSTRUCTORS', _ENGINE)
PARAM_SCHEDULERS = _child('PARAM_SCHEDULERS', _ENGINE)
DATASETS = _child('DATASETS', _DATASETS)
DATA_SAMPLERS = _child('DATA_SAMPLERS', _DATASETS)
TRANSFORMS = _child('TRANSFORMS', _DATASETS)
MODELS = _child('MODELS', _MODELS)
MODEL_WRAPPERS = _child('MODEL_WRAPPERS', _MODELS)
WEIGHT_INITIALIZERS = _child('WEIGHT_INITIALIZERS', _MODELS)
BATCH_AUGMENTS = _child('BATCH_AUGMENTS', _MODELS)
TASK_UTILS = _child('TASK_UTILS', _MODELS)
METRICS = _child('METRICS', _EVALUATION)
EVALUATORS = _child('EVALUATORS', _EVALUATION)
VISUALIZERS = _child('VISUALIZERS', _VISUAL)
VISBACKENDS = _child('VISBACKENDS', _VISUAL)


def register_all_modules(init_default_scope: bool = True) -> None:
    """Import every mlkd (and mmpretrain) module so that all classes are registered.

    Args:
        init_default_scope: also make ``mlkd`` the current default scope, as configs that set
            ``default_scope='mlkd'`` do.
    """
    import mmpretrain.datasets  # noqa: F401
    import mmpretrain.engine  # noqa: F401
    import mmpretrain.evaluation  # noqa: F401
    import mmpretrain.models  # noqa: F401

    import mlkd.datasets  # noqa: F401
    import mlkd.engine  # noqa: F401
    import mlkd.evaluation  # noqa: F401
    import mlkd.models  # noqa: F401

    if init_default_scope:
        from mmengine.registry import DefaultScope

        if DefaultScope.get_current_instance() is None or not DefaultScope.check_instance_created(
            'mlkd'
        ):
            DefaultScope.get_instance('mlkd', scope_name='mlkd')
