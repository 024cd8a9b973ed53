"""Any timm network as an mmpretrain backbone: its feature stages as a tuple of maps and as taps.

mlkd wraps timm itself instead of using mmpretrain's ``TIMMBackbone``, which does not give what a
teacher or student from timm needs here:

* stage maps: without ``features_only`` it returns only the last output (a ViT's tokens); with
  ``features_only`` its ``checkpoint_path`` fails (pytorch-image-models#488, as its own warning
  says), so the stages and a weights file do not go together;
* taps: mlkd's taps are forward hooks on module paths; a ViT's blocks give ``[B, 1 + N, D]``
  tokens, not the maps that FitNet or ReviewKD connectors take;
* errors: a weights file of another network should fail naming the file and the keys, as every
  other checkpoint mlkd loads (:func:`mlkd.models.weights.load_state_strictly`).

:class:`TimmBackbone` builds the timm classifier without its classifier layer
(``pretrained=False``: timm never downloads anything here), prunes what comes after the last
stage it returns (so no parameter is left unused, which DDP would refuse), loads ``weights``
strictly when the model is initialised (``init_weights``), and runs timm's
``forward_intermediates``: the maps ``[B, C_i, H_i, W_i]`` of the
stages ``out_indices`` (indices into the model's ``feature_info``; a ViT's patch tokens laid out
on their grid, its class token dropped), as ``timm.create_model(..., features_only=True)`` gives
them. Each map also passes through ``feature_maps.<k>`` (an identity), the module path a tap
names: ``dict(stage1='backbone.feature_maps.0')`` in any timm network. Inside the timm model the
usual timm names stay addressable too (``backbone.model.layer3``, ``backbone.model.blocks.5``).
"""

from __future__ import annotations

import difflib
import os.path as osp
from collections.abc import Sequence

import torch
from mmengine.logging import MMLogger
from mmengine.model import BaseModule
from torch import nn

from mlkd.registry import MODELS

__all__ = ['TimmBackbone', 'HUB_PREFIX', 'hub_weights_file']

#: ``weights`` that start with this name a Hugging Face Hub repository (``hf-hub:timm/<name>``),
#: downloaded once into the Hub's cache (online users; the tests never name one).
HUB_PREFIX = 'hf-hub:'
#: The arguments of ``timm.create_model`` that TimmBackbone sets itself, and why.
_OWN_ARGUMENTS = {
    'pretrained': 'timm would download weights; give a local file as weights=PATH',
    'pretrained_cfg_overlay': 'give the weights file as weights=PATH',
    'checkpoint_path': 'give the weights file as weights=PATH',
    'features_only': 'TimmBackbone always returns the maps of out_indices',
    'num_classes': 'the classifier comes from the head of the mmpretrain classifier',
    'init_cfg': 'timm initialises the network; load a file with weights=PATH',
}


def _import_timm():
    try:
        import timm
    except ImportError as error:
        raise ImportError(
            'TimmBackbone needs timm: pip install "mlkd[timm]" (or pip install timm safetensors)'
        ) from error
    return timm


def hub_weights_file(repo_id: str) -> str:
    """The local file of a Hugging Face Hub repository's weights, downloaded once into the Hub's
    cache: ``model.safetensors``, else ``pytorch_model.bin`` (what timm's Hub repositories hold).
    """
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError

    try:
        return hf_hub_download(repo_id, 'model.safetensors')
    except EntryNotFoundError:
        return hf_hub_download(repo_id, 'pytorch_model.bin')


def classifier_keys(model: nn.Module, state: dict) -> list[str]:
    """Keys of ``state`` that belong to the timm model's classifier layer (``pretrained_cfg``'s
    ``classifier``: ``'fc'``, ``'head'``, ``('head', 'head_dist')``...), which TimmBackbone drops.
    """
    names = model.pretrained_cfg.get('classifier') or ()
    names = (names,) if isinstance(names, str) else tuple(names)
    return [k for k in state if any(k.startswith(f'{name}.') for name in names)]


@MODELS.register_module()
class TimmBackbone(BaseModule):
    """A timm network as a backbone returning the feature maps of ``out_indices``.

    Args:
        model_name: a timm model name (``timm.list_models()``), optionally with a pretrained tag
            (``'convnext_tiny.in12k_ft_in1k'``: only the architecture matters, weights come from
            ``weights``).
        out_indices: stages to return, as indices into the model's ``feature_info`` (negative
            ones count from the end; default the last four). Stages after the last one are
            pruned.
        weights: ``None`` (timm's random initialisation), a local ``.safetensors`` / ``.pth`` /
            ``.bin`` / ``.pt`` file holding the state dict of the timm classifier
            (``timm.create_model(model_name, ...).state_dict()``, with or without its classifier
            layer; a checkpoint dict with ``state_dict`` or ``model`` is unwrapped), or
            ``'hf-hub:<repo id>'`` (downloaded once; online users only). Read by
            :meth:`init_weights` and loaded strictly: a key missing, left over or of another
            shape is an error naming it.
        norm: apply the model's final norm to every map (timm's ``features_only`` ``norm``).
        **timm_kwargs: further arguments of ``timm.create_model`` (``img_size``,
            ``output_stride``, ``drop_path_rate``, ...).

    Shapes: input ``[B, 3, H, W]``; output a tuple of ``[B, C_i, H_i, W_i]``, one per
    ``out_indices`` entry (:attr:`out_channels` gives the ``C_i``).

    Raises:
        KeyError: ``model_name`` is not a timm model (close names are listed).
        ValueError: an argument TimmBackbone sets itself, an out index out of range, or (from
            :meth:`init_weights`) a weights file that does not fit.
        FileNotFoundError: (from :meth:`init_weights`) ``weights`` is not a file.
    """

    def __init__(
        self,
        model_name: str,
        out_indices: Sequence[int] = (-4, -3, -2, -1),
        weights: str | None = None,
        norm: bool = False,
        **timm_kwargs,
    ) -> None:
        super().__init__()
        timm = _import_timm()
        refused = sorted(set(timm_kwargs) & set(_OWN_ARGUMENTS))
        if refused:
            raise ValueError(
                f'TimmBackbone({model_name!r}) sets {refused} itself: '
                + '; '.join(f'{k}: {_OWN_ARGUMENTS[k]}' for k in refused)
            )
        if not timm.is_model(model_name):
            architecture = model_name.split('.', 1)[0]
            close = difflib.get_close_matches(architecture, timm.list_models(), n=5, cutoff=0.6)
            raise KeyError(
                f'TimmBackbone: {model_name!r} is not a timm model (timm {timm.__version__})'
                + (f'; close names: {close}' if close else '; see timm.list_models()')
            )
        self.model_name = model_name
        self.model = timm.create_model(model_name, pretrained=False, num_classes=0, **timm_kwargs)
        if not hasattr(self.model, 'forward_intermediates'):
            raise ValueError(
                f'TimmBackbone: timm model {model_name!r} has no forward_intermediates '
                "(timm's feature API), so its stages cannot be returned"
            )
        stages = len(self.model.feature_info)
        absolute = []
        for index in out_indices:
            if not -stages <= index < stages:
                raise ValueError(
                    f'TimmBackbone({model_name!r}): out index {index} is out of range; the model '
                    f'has {stages} feature stages (feature_info modules '
                    f'{[f["module"] for f in self.model.feature_info]})'
                )
            absolute.append(index % stages)
        self.out_indices = tuple(absolute)
        self.out_channels = [self.model.feature_info[i]['num_chs'] for i in self.out_indices]
        self.norm = bool(norm)
        self.weights = weights
        before = set(self.model.state_dict())
        if hasattr(self.model, 'prune_intermediate_layers'):
            self.model.prune_intermediate_layers(list(self.out_indices), prune_norm=not self.norm)
        #: Keys of the full classifier that pruning removed: a weights file may hold them.
        self.pruned_keys = before - set(self.model.state_dict())
        self.feature_maps = nn.ModuleList(nn.Identity() for _ in self.out_indices)

    def init_weights(self) -> None:
        """Load ``weights`` (strictly), if any.

        timm initialised the network when it was built; it is not initialised a second time
        (mmengine's default would call the ``init_weights`` methods of timm's modules, which
        re-draw a ViT's weights). As with mmpretrain's ``init_cfg``, the file is read here, not when the model is
        built, so a distiller's teacher, whose weights come from ``teacher_ckpt`` and which is
        never initialised, does not read (or download) it.
        """
        if self.weights is not None:
            self.load_weights(self.weights)
        self._is_init = True

    def load_weights(self, weights: str) -> None:
        """Load a timm classifier's state dict (a file or ``'hf-hub:<repo id>'``) strictly: its
        classifier layer and the layers pruned after the last stage are left out, every other
        key must fit.

        Raises:
            FileNotFoundError: naming the file.
            ValueError: naming the missing, unexpected and mis-shaped keys.
        """
        from mlkd.models.weights import load_state_strictly, read_state_dict

        role = f'TimmBackbone({self.model_name!r})'
        path = weights
        if weights.startswith(HUB_PREFIX):
            path = hub_weights_file(weights[len(HUB_PREFIX) :])
        if not osp.isfile(path):
            raise FileNotFoundError(f'{role}: weights file not found: {path!r}')
        state = read_state_dict(path, role)
        dropped = classifier_keys(self.model, state)
        for key in dropped + [k for k in state if k in self.pruned_keys]:
            del state[key]
        load_state_strictly(self.model, state, path, role)
        MMLogger.get_current_instance().info(
            f'{role}: loaded {len(state)} tensors from {path} (strict'
            + (f'; its classifier layer {dropped} left out)' if dropped else ')')
        )

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """``[B, 3, H, W]`` -> the maps of ``out_indices``, each ``[B, C_i, H_i, W_i]``."""
        maps = self.model.forward_intermediates(
            x, indices=list(self.out_indices), norm=self.norm, intermediates_only=True
        )
        return tuple(tap(m) for tap, m in zip(self.feature_maps, maps))
