"""Key layouts of other libraries' classifiers, mapped onto mmpretrain's ``ImageClassifier``.

A layout is a function from the state dict another library writes to the keys of the mmpretrain
classifier that computes the same function; ``dict(path=PATH, layout=NAME)`` names one wherever
mlkd loads a whole classifier (``model.teacher_ckpt``). Nothing is renamed silently: the result
is still loaded strictly, so a key the layout does not account for is an error naming it.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable, Mapping

import torch

__all__ = ['LAYOUTS', 'convert_layout', 'guess_layout', 'torchvision_resnet']


def torchvision_resnet(state: Mapping[str, torch.Tensor]) -> OrderedDict:
    """A torchvision ResNet classifier (``torchvision.models.resnet18 .. resnet152``,
    ``resnext*``, ``wide_resnet*``) as mmpretrain's ``ImageClassifier`` with a ``ResNet`` /
    ``ResNeXt`` backbone (``style='pytorch'``, stride in the 3x3 conv, as torchvision's v1.5),
    a ``GlobalAveragePooling`` neck and a linear head.

    The module names inside the backbone are the same in both libraries (``conv1``, ``bn1``,
    ``layerN.i.convK`` / ``bnK``, ``layerN.i.downsample.0`` / ``.1``), so the backbone's keys
    gain ``backbone.`` and torchvision's ``fc`` becomes the head's ``head.fc``.
    """
    return OrderedDict(
        (f'head.{k}' if k.startswith('fc.') else f'backbone.{k}', v) for k, v in state.items()
    )


#: Layout name -> conversion of a state dict to mmpretrain's ``ImageClassifier`` keys.
LAYOUTS: dict[str, Callable[[Mapping[str, torch.Tensor]], OrderedDict]] = {
    'torchvision_resnet': torchvision_resnet,
}

#: Keys that only a torchvision ResNet state dict has at its top level.
_TORCHVISION_RESNET = re.compile(r'^(conv1\.weight|layer1\.0\.conv1\.weight|fc\.weight)$')


def convert_layout(state: Mapping[str, torch.Tensor], layout: str, source: str) -> OrderedDict:
    """``state`` with its keys mapped by the layout ``layout``.

    Raises:
        KeyError: ``layout`` is unknown (the known ones are listed), naming ``source``.
    """
    if layout not in LAYOUTS:
        raise KeyError(f'{source!r}: unknown layout {layout!r}; known layouts: {sorted(LAYOUTS)}')
    return LAYOUTS[layout](state)


def guess_layout(state: Mapping[str, torch.Tensor]) -> str | None:
    """The layout whose keys ``state`` has (for an error's hint), or None."""
    if sum(bool(_TORCHVISION_RESNET.match(k)) for k in state) == 3:
        return 'torchvision_resnet'
    return None
