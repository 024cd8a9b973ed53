"""Several frozen teachers, one student: each teacher with its own taps, losses, weight and cache."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any

import torch
from mmengine.logging import MMLogger
from torch import nn

from mlkd.models.algorithms.base import (
    BATCH_NAMES,
    TASK_LOSS_KEY,
    build_routers,
    probe_network,
    tap_paths,
    task_loss_keys,
)
from mlkd.models.algorithms.taps import Taps
from mlkd.models.builder import network_taps
from mlkd.models.weights import checkpoint_classes
from mlkd.registry import MODELS
from mlkd.teacher_cache import TeacherOutputCache

from .base import Distiller, build_frozen_teacher
from .label_sets import TeacherLabels, best_teacher_per_label, map_label_sets
from .teacher_source import TeacherSource, build_teacher_source

#: Keys of one teacher's entry in ``teachers``.
TEACHER_KEYS = (
    'network',
    'ckpt',
    'allow_random',
    'classes',
    'distill_losses',
    'connectors',
    'teacher_taps',
    'student_taps',
    'weight',
    'cache',
)
#: ``label_targets`` values: every teacher distils every class it has, or each class is distilled
#: by the teacher with the best validation AP on it.
LABEL_TARGETS = ('all', 'best_val_ap')
#: A teacher name prefixes its log keys (``loss_<name>_<loss>``): letters and digits only, so that
#: the keys of two teachers never collide.
TEACHER_NAME = re.compile(r'[A-Za-z][A-Za-z0-9]*')


@MODELS.register_module()
class MultiTeacherDistiller(Distiller):
    """Distil a student from several frozen teachers, each with its own taps, losses and weight.

    Each entry of ``teachers`` is a single-teacher distillation in its own right: its losses and
    connectors read ``s_<tap>`` / ``t_<tap>`` (``t_`` is *that* teacher), ``gt``, ``sample_idx``...
    exactly as in a :class:`SingleTeacherDistiller` config, so a method base
    (``configs/_base_/methods/*.py``) serves a teacher unchanged; its results log as
    ``loss_<teacher>_<loss>``, times the teacher's ``weight``. Every teacher is built, loaded
    strictly and frozen like the single teacher (eval mode, ``no_grad``, never re-initialised) and
    is read through its own :class:`~.teacher_source.TeacherSource`: live, or its own teacher cache
    (``cache=dict(dir=..., mode=...)``), fingerprinted with its own weights; ``TeacherCacheHook``
    drives them all (:attr:`teacher_sources`).

    **Label sets.** Teachers may predict other classes than the student, mapped onto the
    student's ``classes`` by name (:mod:`.label_sets`). A teacher distils only the classes it
    shares with the student: for its losses, every *class-indexed* tensor — the taps named in
    ``class_taps`` (dim 1 is the class axis: ``logits`` ``[B, C]``, ML-Decoder's ``label_emb``
    ``[B, C, D]``) of the student and of that teacher, and ``gt`` / ``gt_full`` — is restricted to
    those classes, in the student's order. A class the teacher lacks is thus **absent** from its
    losses: it contributes no term and no gradient to them (masked, not a target of zero), for any
    loss, whether or not it reads ``gt``; a reduction that divides by the class count (``'mean'``)
    divides by the teacher's shared count. Another teacher that has the class still distils it.

    **Label-wise teacher choice.** ``label_targets='best_val_ap'`` distils each class from one
    teacher only: the one with the best AP on it on the validation set, computed once before
    training by ``TeacherEvalHook`` (which logs the table and writes it to
    ``<work_dir>/teacher_label_ap.json``), kept in the buffers ``label_teacher`` /
    ``label_teacher_ap`` (so a resumed run and the checkpoint keep the choice). Each teacher's
    class-indexed tensors are then restricted to the classes it was chosen for; ties and classes
    without a positive on val go to the first teacher (in ``teachers`` order) that has them. A
    teacher chosen for no class is refused (its logit losses would have nothing to distil).
    ``'all'`` (default): every teacher distils every class it shares with the student (the AP
    table is still logged and written). A loss with per-class state (MDKD's teacher EMA), sized
    when it is built, is refused with ``'best_val_ap'``.

    **Fidelity.** ``DistillFidelity`` compares the student's scores of every class with *one*
    teacher's (``teacher_score``, put on the evaluated samples while ``TeacherScoreHook`` asks):
    ``fidelity_teacher``, which must predict every class of the student (its scores reordered to
    the student's classes). With one such teacher and ``fidelity_teacher=None`` it is that one.
    Otherwise the choice is ambiguous (several teachers) or impossible (teachers of partial label
    sets; a score per class from several teachers would not be one teacher's fidelity), and an
    evaluator holding the metric is refused before training, naming ``model.fidelity_teacher``.

    Args:
        student: the student's model config or config path.
        teachers: teacher name (letters and digits) -> entry with keys ``network`` (model config
            or the teacher's config path), ``ckpt`` (its checkpoint or work dir; ``None`` only
            with ``allow_random=True``, tests of the plumbing), ``classes`` (its class names in
            output order; default: those its checkpoint was trained with, ``meta.dataset_meta``,
            else the student's ``classes``), ``distill_losses``, ``connectors``,
            ``teacher_taps``, ``student_taps`` (as in :class:`SingleTeacherDistiller`),
            ``weight`` (factor on all of its losses, default 1) and ``cache`` (its
            ``teacher_cache``, default none).
        classes: the student's class names in output order (its dataset's ``classes``; checked
            against the datasets by ``NumClassesCheckHook``). ``None``: every teacher predicts
            the student's classes, in order.
        label_targets: ``'all'`` or ``'best_val_ap'`` (above).
        fidelity_teacher: the teacher ``DistillFidelity`` compares the student with (above);
            ``None``: the only teacher, if it predicts every class of the student.
        student_taps: student taps shared by all teachers (each entry's ``student_taps`` are
            added; one name must not name two module paths), added to those the student's
            config declares (:func:`~mlkd.models.builder.network_taps`; the teachers' too).
        class_taps: tap names whose dim 1 is the class axis (restricted per teacher, above).
        allow_disjoint_teachers: accept teachers that share no class with any other teacher.
        allow_uncovered_classes: accept student classes that no teacher predicts.
        task_loss_weight, views, probe_input_size, data_preprocessor, init_cfg, loss_guard: see
            :class:`~.base.Distiller` (``views['teacher']`` feeds every teacher).
    """

    #: Module paths of networks that predict their own label sets (``NumClassesCheckHook``
    #: checks the student against the datasets, and the teachers against their ``classes`` here).
    networks_with_own_classes = ('teachers',)

    def __init__(
        self,
        student: dict | str,
        teachers: Mapping[str, Mapping],
        classes: Sequence[str] | None = None,
        label_targets: str = 'all',
        fidelity_teacher: str | None = None,
        student_taps: dict[str, str] | None = None,
        class_taps: Sequence[str] = ('logits', 'label_emb'),
        allow_disjoint_teachers: bool = False,
        allow_uncovered_classes: bool = False,
        task_loss_weight: float = 1.0,
        views: dict[str, int] | None = None,
        probe_input_size: Sequence[int] = (224, 224),
        data_preprocessor: dict | None = None,
        init_cfg: dict | None = None,
        loss_guard: Mapping | None = None,
    ) -> None:
        entries = _teacher_entries(teachers)
        if label_targets not in LABEL_TARGETS:
            raise ValueError(
                f'model.label_targets must be one of {LABEL_TARGETS}, got {label_targets!r}'
            )
        # Bad cache settings fail before anything is built.
        caches = {
            name: TeacherOutputCache.from_config(entry.get('cache'), f'model.teachers.{name}.cache')
            for name, entry in entries.items()
        }
        super().__init__(
            student,
            task_loss_weight,
            views,
            probe_input_size,
            data_preprocessor,
            init_cfg,
            loss_guard,
        )
        self.label_targets = label_targets
        self.class_taps = tuple(class_taps)
        self.teachers = nn.ModuleDict(
            {
                name: build_frozen_teacher(
                    entry['network'],
                    entry.get('ckpt'),
                    bool(entry.get('allow_random', False)),
                    role=f'teacher {name!r}',
                    ckpt_key=f'model.teachers.{name}.ckpt',
                    allow_key=f'model.teachers.{name}.allow_random',
                )
                for name, entry in entries.items()
            }
        )
        self.teacher_ckpts = {name: entry.get('ckpt') for name, entry in entries.items()}
        self.teacher_weights = {
            name: float(entry.get('weight', 1.0)) for name, entry in entries.items()
        }
        #: The student's class names as given (``None``: unnamed, every teacher has them).
        self.classes = None if classes is None else tuple(map(str, classes))
        #: The student's class names, or their indices when unnamed.
        self.label_names, teacher_classes = self._label_sets(classes, entries)
        self.num_classes = len(self.label_names)
        self.label_sets: dict[str, TeacherLabels] = map_label_sets(
            self.label_names, teacher_classes, allow_disjoint_teachers, allow_uncovered_classes
        )
        self._log_label_sets()
        self.fidelity_teacher = self._fidelity_teacher(fidelity_teacher)
        self._build_branches(entries, student, student_taps)
        if label_targets == 'best_val_ap':
            self._refuse_class_state()
            self.register_buffer('label_teacher', torch.full((self.num_classes,), -1))
            # -1: no AP (the teacher lacks the class, or it has no positive on val).
            self.register_buffer(
                'label_teacher_ap', torch.full((len(entries), self.num_classes), -1.0)
            )
            self.register_load_state_dict_post_hook(_restore_label_choice)
        self._set_columns(choice=None)
        self.teacher_sources: dict[str, TeacherSource] = {}
        for name, cache in caches.items():
            self.serve_teacher_from(name, cache)

    # ----------------------------------------------------------------- construction
    def _label_sets(
        self, classes: Sequence[str] | None, entries: Mapping[str, Mapping]
    ) -> tuple[tuple[str, ...], dict[str, tuple[str, ...]]]:
        """The student's classes and each teacher's, each checked against its head's count."""
        student_count = _head_classes(self.student)
        if classes is None:
            declared = [name for name, entry in entries.items() if entry.get('classes')]
            if declared:
                raise ValueError(
                    f'model.teachers.{declared[0]}.classes names its classes, so model.classes '
                    "must name the student's (classes are matched by name)"
                )
            if student_count is None:
                raise ValueError("model.classes is None and the student's head has no num_classes")
            student_classes = tuple(str(i) for i in range(student_count))
        else:
            student_classes = tuple(map(str, classes))
            if student_count is not None and student_count != len(student_classes):
                raise ValueError(
                    f'model.classes lists {len(student_classes)} classes but the student head '
                    f'predicts {student_count}'
                )
        teacher_classes = {}
        self.teacher_checkpoint_classes = {}
        for name, teacher in self.teachers.items():
            entry = entries[name]
            declared = entry.get('classes')
            declared = None if declared is None else tuple(map(str, declared))
            saved = None
            if entry.get('ckpt') is not None:
                saved = checkpoint_classes(entry['ckpt'], f'teacher {name!r}')
            self.teacher_checkpoint_classes[name] = saved
            if classes is None:  # read by index: NumClassesCheckHook checks the dataset's names
                saved = None
            if declared is not None and saved is not None and declared != saved:
                raise ValueError(
                    f'model.teachers.{name}.classes is {list(declared)}, but its checkpoint was '
                    f'trained on {list(saved)} (meta.dataset_meta.classes); fix the list or the '
                    'checkpoint'
                )
            own, source = declared, f'model.teachers.{name}.classes'
            if own is None:
                own, source = saved, 'its checkpoint (meta.dataset_meta.classes)'
            if own is None:
                own, source = student_classes, "the student's (model.teachers.<name>.classes unset)"
            count = _head_classes(teacher)
            if count is not None and count != len(own):
                raise ValueError(
                    f'teacher {name!r}: its head predicts {count} classes, but its classes, '
                    f'{source}, are {len(own)}: {list(own)}'
                )
            teacher_classes[name] = own
        return student_classes, teacher_classes

    def _log_label_sets(self) -> None:
        logger = MMLogger.get_current_instance()
        for name, labels in self.label_sets.items():
            shared = [self.label_names[i] for i in labels.student_index]
            text = f"teacher {name!r}: distils {len(shared)} of the student's {self.num_classes} classes"
            if len(shared) < self.num_classes:
                text += f' ({shared})'
            if labels.dropped:
                text += f"; its classes {list(labels.dropped)} are not the student's (dropped)"
            logger.info(text)

    def _lacking(self, name: str) -> list[str]:
        """The student's classes teacher ``name`` does not predict."""
        shared = set(self.label_sets[name].student_index)
        return [label for i, label in enumerate(self.label_names) if i not in shared]

    def _fidelity_teacher(self, name: str | None) -> str | None:
        """The teacher ``DistillFidelity`` compares with (class doc), ``None`` if there is none."""
        if name is None:
            only = next(iter(self.teachers))
            return only if len(self.teachers) == 1 and not self._lacking(only) else None
        if name not in self.teachers:
            raise ValueError(
                f'model.fidelity_teacher is {name!r}, not one of model.teachers '
                f'{list(self.teachers)}'
            )
        lacking = self._lacking(name)
        if lacking:
            raise ValueError(
                f'model.fidelity_teacher is {name!r}, but that teacher lacks the student classes '
                f"{lacking}: DistillFidelity compares the student's scores of every class with "
                "one teacher's; name a teacher that predicts all of model.classes"
            )
        return name

    def _build_branches(
        self,
        entries: Mapping[str, Mapping],
        student: dict | str,
        student_taps: Mapping[str, str] | None,
    ) -> None:
        """Per teacher, the connectors and losses of its branch (:func:`build_routers`), and the
        taps every network records (each network's declared taps, :func:`network_taps`, with
        the config's added)."""
        merged = dict(student_taps or {})
        for name, entry in entries.items():
            for tap, path in (entry.get('student_taps') or {}).items():
                if merged.setdefault(tap, path) != path:
                    raise ValueError(
                        f'model.teachers.{name}.student_taps names {tap!r} {path!r}, but another '
                        f'entry names it {merged[tap]!r}; give one of them another name'
                    )
        merged = network_taps(student, merged, 'student')
        student_paths = tap_paths(self.student, merged, 'student')
        self._tap_paths = {'s_': student_paths}
        self._teacher_paths = {
            name: tap_paths(
                net,
                network_taps(
                    entries[name]['network'], entries[name].get('teacher_taps'), f'teacher {name!r}'
                ),
                f'teacher {name!r}',
            )
            for name, net in self.teachers.items()
        }
        probed: dict[str, dict[str, Any]] = {}

        def probe(name: str) -> dict[str, Any]:
            if name not in probed:
                if 's_' not in probed:
                    probed['s_'] = probe_network(
                        self.student, student_paths, 'student', 's_', self.probe_input_size
                    )
                teacher = probe_network(
                    self.teachers[name],
                    self._teacher_paths[name],
                    f'teacher {name!r}',
                    't_',
                    self.probe_input_size,
                )
                labels = self.label_sets[name]
                probed[name] = self._scoped(
                    probed['s_'],
                    teacher,
                    {},
                    torch.tensor(labels.student_index),
                    torch.tensor(labels.teacher_index),
                    name,
                )
            return probed[name]

        self.connectors = nn.ModuleDict()
        setattr(self, self.losses_attr, nn.ModuleDict())
        consumed: dict[str, set[str]] = {}
        for name, entry in entries.items():
            supplied = (
                set(BATCH_NAMES)
                | {f's_{t}' for t in student_paths}
                | {f't_{t}' for t in self._teacher_paths[name]}
            )
            connectors, losses = build_routers(
                supplied,
                entry.get('connectors'),
                entry.get('distill_losses'),
                functools.partial(probe, name),
                {
                    'num_classes': len(self.label_sets[name].student_index),
                    'teacher': self.teachers[name],
                },
                {'s_': list(student_paths), 't_': list(self._teacher_paths[name])},
                reserved=(TASK_LOSS_KEY,),
                loss_prefix=f'loss_{name}_',
                owner=f'teachers.{name}.',
            )
            self.connectors[name] = connectors
            self.loss_router[name] = losses
            consumed[name] = (losses.consumed | connectors.consumed) - set(connectors)
        probed.clear()  # one-off; do not keep tensors alive
        every = set().union(*consumed.values())
        self._recorded = {
            ('', 's_'): {
                'logits': student_paths['logits'],
                **{t: p for t, p in student_paths.items() if f's_{t}' in every},
            }
        }
        self._teacher_recorded = {
            name: {
                'logits': paths['logits'],
                **{t: p for t, p in paths.items() if f't_{t}' in consumed[name]},
            }
            for name, paths in self._teacher_paths.items()
        }
        self._consumed = every

    def _refuse_class_state(self) -> None:
        """With the best-AP choice a teacher's classes narrow after the losses are built: a loss
        holding state per class (sized then) cannot follow."""
        for name, losses in self.loss_router.items():
            for loss_name, loss in losses.items():
                per_class = [
                    k for k, by in getattr(loss, 'state_names', {}).items() if by == 'class'
                ]
                if per_class:
                    raise ValueError(
                        f'model.teachers.{name}.distill_losses.{loss_name} keeps state per class '
                        f"({per_class}), sized when it is built; with label_targets='best_val_ap' "
                        'the classes of each teacher are chosen later, before the first step. Use '
                        "label_targets='all', or a loss without per-class state"
                    )

    def networks(self) -> dict:
        """The student (``s_``); each teacher is tapped under ``t_`` in its own branch."""
        return {'s_': (self.student, 'student')}

    def frozen_networks(self) -> list[nn.Module]:
        return list(self.teachers.values())

    def consumed_names(self) -> set[str]:
        return set(self._consumed)

    # ----------------------------------------------------------------- teacher sources
    def serve_teacher_from(self, name: str, cache: Mapping | TeacherOutputCache | None) -> None:
        """Set where teacher ``name``'s outputs come from (:attr:`teacher_sources`): the live
        network (``None``) or a teacher cache (its config dict, or a built cache)."""
        if isinstance(cache, Mapping):
            cache = TeacherOutputCache.from_config(cache, f'model.teachers.{name}.cache')
        self.teacher_sources[name] = build_teacher_source(
            cache,
            self.teachers[name],
            functools.partial(self.run_teacher, name),
            self.teacher_outputs(name),
            view=(self.views or {}).get('teacher'),
            tap_paths={f't_{tap}': path for tap, path in self._teacher_recorded[name].items()},
        )

    def teacher_outputs(self, name: str) -> list[str]:
        """Names of teacher ``name``'s tensors a training step uses (``t_logits`` and the taps its
        connectors or losses read): what its teacher cache stores."""
        return [f't_{tap}' for tap in self._teacher_recorded[name]]

    def run_teacher(self, name: str, inputs) -> dict[str, Any]:
        """Live teacher ``name``'s :meth:`teacher_outputs` on a preprocessed batch (``no_grad``)."""
        teacher = self.teachers[name]
        with (
            torch.no_grad(),
            Taps(teacher, self._teacher_recorded[name], f'teacher {name!r}', 't_') as taps,
        ):
            teacher(self._view(inputs, 'teacher'), mode='tensor')
        return taps.values()

    @torch.no_grad()
    def teacher_logits(self, inputs) -> dict[str, torch.Tensor]:
        """Each live teacher's logits ``[B, C_k]`` on the ``C_k`` classes it shares with the
        student (in the student's order, columns ``label_sets[name].student_index``): what
        ``TeacherEvalHook`` ranks for the per-label validation AP."""
        out = {}
        for name, teacher in self.teachers.items():
            logits = teacher(self._view(inputs, 'teacher'), mode='tensor')
            out[name] = logits[:, list(self.label_sets[name].teacher_index)]
        return out

    # ----------------------------------------------------------------- fidelity
    def check_teacher_score(self, metrics: Sequence[str], key: str) -> None:
        """Refuse ``metrics`` of evaluator ``key`` (``DistillFidelity``) without a
        :attr:`fidelity_teacher` (``TeacherScoreHook`` asks before training)."""
        if self.fidelity_teacher is not None:
            return
        complete = [name for name in self.teachers if not self._lacking(name)]
        if len(self.teachers) == 1:
            only = next(iter(self.teachers))
            reason = (
                f'its only teacher, {only!r}, lacks the student classes {self._lacking(only)}, '
                "and DistillFidelity compares the student's scores of every class with one "
                f"teacher's: drop {metrics} from {key}"
            )
        else:
            reason = (
                f'it has {len(self.teachers)} teachers ({list(self.teachers)}) and '
                'model.fidelity_teacher=None does not say which to compare with: set it to a '
                f'teacher of every student class ({complete or "none of them is"}), or drop '
                f'{metrics} from {key}'
            )
        raise ValueError(
            f"{key} holds {metrics}, which compare the student with a teacher's scores, but "
            f'the MultiTeacherDistiller cannot give them: {reason}'
        )

    @torch.no_grad()
    def _put_teacher_scores(self, inputs, predictions: list) -> None:
        """Put :attr:`fidelity_teacher`'s scores (its head's own activation), reordered to the
        student's classes, on every student prediction as ``teacher_score``. The teacher runs
        live (its cache holds training batches only)."""
        self.check_teacher_score(['DistillFidelity'], 'the evaluator')
        name = self.fidelity_teacher
        scored = self.teachers[name](self._view(inputs, 'teacher'), mode='predict')
        columns = list(self.label_sets[name].teacher_index)  # in the student's class order
        scores = torch.stack([sample.pred_score for sample in scored])[:, columns]
        for sample, score in zip(predictions, scores):
            sample.set_field(score, 'teacher_score')

    # ----------------------------------------------------------------- label-wise choice
    def select_label_teachers(self, ap: Mapping[str, Sequence[float]]) -> list[str | None]:
        """Take each class's target from the teacher with the best validation AP on it.

        Args:
            ap: teacher name -> AP per student class (``[C]``, NaN where the teacher lacks the
                class or the class has no positive on val).

        Returns:
            the chosen teacher per student class (``None``: no teacher has it).

        Raises:
            ValueError: a teacher chosen for no class (with ``label_targets='best_val_ap'``).
        """
        if self.label_targets != 'best_val_ap':
            raise RuntimeError("select_label_teachers needs label_targets='best_val_ap'")
        chosen = best_teacher_per_label(ap, self.label_sets, self.num_classes)
        idle = [name for name in self.teachers if name not in chosen]
        if idle:
            raise ValueError(
                f"label_targets='best_val_ap': teacher(s) {idle} have the best validation AP on "
                f'no class, so they would distil no label; drop them from model.teachers or use '
                f"label_targets='all'"
            )
        names = list(self.teachers)
        ap_rows = [[float(v) for v in ap[name]] for name in names]
        self.label_teacher.copy_(
            torch.tensor([-1 if c is None else names.index(c) for c in chosen])
        )
        self.label_teacher_ap.copy_(torch.tensor(ap_rows, dtype=torch.float32).nan_to_num(-1.0))
        self._set_columns(chosen)
        return chosen

    def label_choice(self) -> list[str | None] | None:
        """The teacher each class is distilled from (``best_val_ap``), ``None`` before the
        choice is made (or with ``label_targets='all'``)."""
        if self.label_targets != 'best_val_ap' or not bool((self.label_teacher >= 0).any()):
            return None
        names = list(self.teachers)
        return [None if i < 0 else names[i] for i in self.label_teacher.tolist()]

    def _set_columns(self, choice: Sequence[str | None] | None) -> None:
        """Per teacher, the student and teacher columns its class-indexed tensors keep: every
        shared class, or (``choice`` given) the shared classes chosen for it."""
        self._columns_ready = choice is not None or self.label_targets == 'all'
        device = next(self.student.parameters()).device
        self._identity = {}
        for name, labels in self.label_sets.items():
            kept = [
                (s, t)
                for s, t in zip(labels.student_index, labels.teacher_index)
                if choice is None or choice[s] == name
            ]
            self._identity[name] = len(labels.classes) == self.num_classes and kept == [
                (i, i) for i in range(self.num_classes)
            ]
            columns = torch.tensor(kept, dtype=torch.long, device=device).reshape(-1, 2).t()
            self.register_buffer(f'_columns_{name}', columns.contiguous(), persistent=False)

    # ----------------------------------------------------------------- training step
    def _scoped(
        self,
        student: Mapping[str, Any],
        teacher: Mapping[str, Any],
        batch: Mapping[str, Any],
        student_columns: torch.Tensor,
        teacher_columns: torch.Tensor,
        name: str,
        identity: bool = False,
    ) -> dict[str, Any]:
        """The named tensors teacher ``name``'s branch sees: the student's taps, the teacher's
        (``t_``) and the batch names, class-indexed ones restricted to the branch's columns."""
        out = dict(batch)
        if not identity:
            for key in ('gt', 'gt_full'):
                if key in out:
                    out[key] = out[key][:, student_columns]
        for values, columns, count, role in (
            (student, student_columns, self.num_classes, 'student'),
            (teacher, teacher_columns, len(self.label_sets[name].classes), f'teacher {name!r}'),
        ):
            for key, value in values.items():
                if key[2:] in self.class_taps:
                    if (
                        not isinstance(value, torch.Tensor)
                        or value.dim() < 2
                        or (value.shape[1] != count)
                    ):
                        raise ValueError(
                            f'{role} tap {key!r} is in model.class_taps (dim 1 the class axis), '
                            f'but its shape is {getattr(value, "shape", type(value).__name__)} '
                            f'and the {role} predicts {count} classes; take the tap out of '
                            'model.class_taps'
                        )
                    if not identity:
                        value = value.index_select(1, columns.to(value.device))
                out[key] = value
        return out

    def loss(self, inputs, data_samples) -> dict[str, torch.Tensor]:
        if not self._columns_ready:
            raise RuntimeError(
                "label_targets='best_val_ap' needs each teacher's per-label AP on the validation "
                'set before the first step: add TeacherEvalHook to custom_hooks and keep a '
                'val_dataloader (the shipped multi-teacher configs have both)'
            )
        with self.record('s_') as student_taps:
            task = self.student(self._view(inputs, 'student'), data_samples, mode='loss')
        student = student_taps.values()
        batch = self.batch_names(data_samples, self.num_classes, student['s_logits'].device)
        losses = task_loss_keys(task, self.task_loss_weight)
        for name, source in self.teacher_sources.items():
            columns = getattr(self, f'_columns_{name}')
            available = self._scoped(
                student,
                source(inputs, data_samples),
                batch,
                columns[0],
                columns[1],
                name,
                self._identity[name],
            )
            self.connectors[name](available)
            weight = self.teacher_weights[name]
            for key, value in self.loss_router[name](available).items():
                if key in losses:  # build time refuses known clashes; a dict term could still
                    raise RuntimeError(f'two losses log under {key!r}')
                losses[key] = value if weight == 1.0 else value * weight
        return losses


def _restore_label_choice(module: MultiTeacherDistiller, incompatible_keys: Any) -> None:
    """After a state dict is loaded (a resumed run), narrow the columns to the stored choice."""
    choice = module.label_choice()
    if choice is not None:
        module._set_columns(choice)


def _teacher_entries(teachers: Any) -> dict[str, dict]:
    if not isinstance(teachers, Mapping) or not teachers:
        raise ValueError(
            'model.teachers must map teacher names to dict(network=..., ckpt=..., '
            f'distill_losses=...), got {teachers!r}'
        )
    entries = {}
    for name, entry in teachers.items():
        if not isinstance(name, str) or not TEACHER_NAME.fullmatch(name):
            raise ValueError(
                f'model.teachers: teacher name {name!r} must be letters and digits (starting with '
                'a letter); it prefixes the log keys loss_<name>_<loss>'
            )
        if not isinstance(entry, Mapping):
            raise ValueError(f'model.teachers.{name} must be a dict, got {entry!r}')
        unknown = sorted(set(entry) - set(TEACHER_KEYS))
        if unknown:
            raise ValueError(
                f'model.teachers.{name} has unknown key(s) {unknown}; known: {list(TEACHER_KEYS)}'
            )
        if entry.get('network') is None:
            raise ValueError(
                f"model.teachers.{name}.network is missing: the teacher's model config or the "
                'config it was trained with'
            )
        weight = entry.get('weight', 1.0)
        if not isinstance(weight, (int, float)) or not weight >= 0:
            raise ValueError(f'model.teachers.{name}.weight must be a number >= 0, got {weight!r}')
        entries[name] = dict(entry)
    return entries


def _head_classes(net: nn.Module) -> int | None:
    count = getattr(getattr(net, 'head', None), 'num_classes', None)
    return int(count) if isinstance(count, int) else None
