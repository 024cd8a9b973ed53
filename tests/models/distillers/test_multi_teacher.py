"""MultiTeacherDistiller: teachers of partial label sets, label-wise choice, weights, bad input."""

import pytest
import torch
from conftest import MULTIDIGITS_TEACHER, build_model, cheap_default_init, config_path
from mmengine.registry import DefaultScope
from mmpretrain.structures import DataSample

import mlkd
from mlkd.models.builder import build_network
from mlkd.models.losses.base import RoutedLoss
from mlkd.registry import MODELS

STUDENT = config_path('multidigits', 'mldecoder_student.py')  # ML-Decoder: label embeddings
CLASSES = ['0', '1', '2', '3']
pytestmark = pytest.mark.usefixtures('parse_shipped_configs_once')

#: Teacher `a` lacks class '1', predicts a class the student lacks ('x'), in its own order.
A_CLASSES = ['3', '0', 'x', '2']
B_CLASSES = ['1', '2']


@MODELS.register_module(force=True)
class _SeenLoss(RoutedLoss):
    """Test loss: records the tensors it is given; its value is their (weighted) sum."""

    def compute(self, s_logits, t_logits, gt, s_label_emb, t_label_emb):
        self.seen = dict(s_logits=s_logits, t_logits=t_logits, gt=gt, s_emb=s_label_emb)
        self.seen['t_emb'] = t_label_emb
        return s_logits.sum() * 0 + 1.0


def _samples(labels, num_classes=4):
    samples = []
    for i, positives in enumerate(labels):
        sample = DataSample(metainfo=dict(sample_idx=i)).set_gt_label(positives)
        sample.set_gt_score(torch.zeros(num_classes).index_fill_(0, torch.tensor(positives), 1.0))
        samples.append(sample)
    return samples


def _entry(classes, **extra):
    return dict(
        network=dict(cfg_path=MULTIDIGITS_TEACHER, head=dict(num_classes=len(classes))),
        allow_random=True,
        classes=classes,
        distill_losses=dict(
            mld=dict(type='MultiLabelLogitDistillLoss'), seen=dict(type='_SeenLoss')
        ),
        student_taps=dict(label_emb='head.decoder'),
        teacher_taps=dict(label_emb='head.decoder'),
        **extra,
    )


def _distiller(teachers=None, **kwargs):
    cfg = dict(
        type='MultiTeacherDistiller',
        student=dict(cfg_path=STUDENT, head=dict(num_classes=4)),
        classes=CLASSES,
        teachers=teachers or dict(a=_entry(A_CLASSES), b=_entry(B_CLASSES, weight=0.5)),
        probe_input_size=(32, 32),
    )
    cfg.update(kwargs)
    mlkd.register_all_modules()
    with cheap_default_init():
        return build_model(cfg)


@pytest.fixture(scope='module')
def distiller():
    torch.manual_seed(0)
    return _distiller().eval()  # eval: no dropout, so that two forwards agree


@pytest.fixture(scope='module')
def batch():
    torch.manual_seed(1)
    return torch.rand(3, 3, 32, 32), _samples([[0, 1], [1, 3], [2]])


def _binary_kl_loop(t_logits, s_logits):
    """(1/B) Σ_b Σ_c KL(Bernoulli(σ(t)) ‖ Bernoulli(σ(s))), written out entry by entry."""
    total = 0.0
    for b in range(t_logits.shape[0]):
        for c in range(t_logits.shape[1]):
            p, q = torch.sigmoid(t_logits[b, c]), torch.sigmoid(s_logits[b, c])
            total += p * torch.log(p / q) + (1 - p) * torch.log((1 - p) / (1 - q))
    return total / t_logits.shape[0]


def test_a_teacher_distils_only_the_classes_it_shares_with_the_student(distiller, batch):
    inputs, samples = batch
    losses = distiller.loss(inputs, samples)
    with torch.no_grad():
        student = distiller.student(inputs, mode='tensor')
        teacher_a = distiller.teachers['a'](inputs, mode='tensor')
    # Teacher a has '0', '2', '3' of the student's classes (its columns 1, 3, 0); '1' is absent
    # from its losses, 'x' is dropped.
    expected = _binary_kl_loop(teacher_a[:, [1, 3, 0]], student[:, [0, 2, 3]])
    torch.testing.assert_close(losses['loss_a_mld'], expected, rtol=1e-5, atol=1e-6)
    seen = distiller.loss_router['a']['seen'].seen
    torch.testing.assert_close(seen['s_logits'], student[:, [0, 2, 3]])
    torch.testing.assert_close(seen['t_logits'], teacher_a[:, [1, 3, 0]])
    gt = torch.tensor([[1.0, 1, 0, 0], [0, 1, 0, 1], [0, 0, 1, 0]])
    assert torch.equal(seen['gt'], gt[:, [0, 2, 3]])
    # Label embeddings [B, C, D] are class-indexed too.
    assert seen['s_emb'].shape[:2] == (3, 3) and seen['t_emb'].shape[:2] == (3, 3)
    # Teacher b ('1', '2'), weight 0.5: its loss is half the loss of the same tensors.
    seen_b = distiller.loss_router['b']['seen'].seen
    torch.testing.assert_close(seen_b['s_logits'], student[:, [1, 2]])
    unweighted = _binary_kl_loop(seen_b['t_logits'], seen_b['s_logits'])
    torch.testing.assert_close(losses['loss_b_mld'], 0.5 * unweighted, rtol=1e-5, atol=1e-6)
    assert losses['loss_b_seen'].item() == pytest.approx(0.5)


def test_a_class_the_teacher_lacks_gets_no_gradient_from_it(distiller, batch):
    outputs = []
    hook = distiller.student.head.register_forward_hook(lambda m, a, out: outputs.append(out))
    try:
        losses = distiller.loss(*batch)
    finally:
        hook.remove()
    logits = outputs[0]  # the student's [B, 4] logits, upstream of every loss
    grad_a = torch.autograd.grad(losses['loss_a_mld'], logits, retain_graph=True)[0]
    assert torch.all(grad_a[:, 1] == 0) and torch.all(grad_a[:, [0, 2, 3]] != 0)
    grad_b = torch.autograd.grad(losses['loss_b_mld'], logits)[0]  # b has '1' and '2' only
    assert torch.all(grad_b[:, [0, 3]] == 0) and torch.all(grad_b[:, [1, 2]] != 0)


def test_best_val_ap_distils_each_class_from_one_teacher_and_survives_a_reload(batch):
    teachers = dict(a=_entry(CLASSES), b=_entry(['3', '2']))
    model = _distiller(label_targets='best_val_ap', teachers=teachers).eval()
    inputs, samples = batch
    with pytest.raises(RuntimeError, match='add TeacherEvalHook'):
        model.loss(inputs, samples)
    nan = float('nan')
    ap = {'a': [0.9, nan, 0.4, 0.8], 'b': [nan, nan, 0.6, 0.8]}  # '1': no positive on val
    assert model.select_label_teachers(ap) == ['a', 'a', 'b', 'a']  # '3': a tie, a is first
    model.loss(inputs, samples)
    with torch.no_grad():
        student = model.student(inputs, mode='tensor')
    seen = {name: model.loss_router[name]['seen'].seen for name in teachers}
    torch.testing.assert_close(seen['a']['s_logits'], student[:, [0, 1, 3]])
    torch.testing.assert_close(seen['b']['s_logits'], student[:, [2]])
    state = model.state_dict()
    assert state['label_teacher'].tolist() == [0, 0, 1, 0]
    assert state['label_teacher_ap'][1].tolist() == pytest.approx([-1.0, -1.0, 0.6, 0.8])
    with pytest.raises(ValueError, match=r"teacher\(s\) \['b'\] have the best validation AP on no"):
        model.select_label_teachers({'a': [0.9, nan, 0.7, 0.8], 'b': [nan, nan, 0.6, 0.7]})
    model.load_state_dict(state)  # as a resumed run: the choice comes back with the weights
    assert model.label_choice() == ['a', 'a', 'b', 'a']
    assert model._columns_b.tolist() == [[2], [1]]  # student column 2 = b's column 1 ('2')


def test_teachers_of_the_students_classes_need_no_names(batch):
    model = _distiller(
        classes=None,
        teachers=dict(
            a=dict(
                network=dict(cfg_path=MULTIDIGITS_TEACHER, head=dict(num_classes=4)),
                allow_random=True,
                distill_losses=dict(mld=dict(type='MultiLabelLogitDistillLoss')),
            )
        ),
    )
    assert model.classes is None and model._identity == {'a': True}
    assert model.label_sets['a'].student_index == (0, 1, 2, 3)
    assert set(model.loss(*batch)) == {'loss_cls', 'loss_a_mld'}


@pytest.mark.parametrize(
    'change, error, message',
    [
        (
            dict(teachers=dict(a=dict(_entry(['0']), ckpt=None, allow_random=False))),
            ValueError,
            r'model.teachers.a.ckpt is None.*model.teachers.a.allow_random=True',
        ),
        (dict(teachers={'a_b': _entry(['0'])}), ValueError, r"teacher name 'a_b' must be letters"),
        (
            dict(teachers=dict(a=dict(_entry(['0']), taps={}))),
            ValueError,
            r"model.teachers.a has unknown key\(s\) \['taps'\]",
        ),
        (
            dict(
                teachers=dict(a=dict(_entry(CLASSES), network=dict(cfg_path=MULTIDIGITS_TEACHER)))
            ),
            ValueError,
            r"teacher 'a': its head predicts 10 classes, but its classes, "
            r'model.teachers.a.classes, are 4',
        ),
        (
            dict(teachers=dict(a=_entry(['cat', 'dog']))),
            ValueError,
            'model.teachers.a.classes shares no class with model.classes',
        ),
        (
            dict(teachers=dict(a=_entry(['0', '1']), b=_entry(['2', '3']))),
            ValueError,
            'share nothing with the other teachers',
        ),
        (
            dict(teachers=dict(a=_entry(['0', '1', '2']))),
            ValueError,
            r"model.classes \['3'\] are in no teacher",
        ),
        (dict(label_targets='best'), ValueError, 'model.label_targets must be one of'),
        (
            dict(
                label_targets='best_val_ap',
                teachers=dict(
                    a=dict(
                        _entry(CLASSES),
                        distill_losses=dict(
                            mdkd=dict(type='MultiOrderDependencyLoss', teacher_ema=0.9)
                        ),
                    )
                ),
            ),
            ValueError,
            r"model.teachers.a.distill_losses.mdkd keeps state per class \(\['t_dep_ema'\]\)",
        ),
        (
            dict(teachers=dict(a=dict(_entry(CLASSES), cache=dict(mode='read')))),
            Exception,
            r'model.teachers.a.cache.mode=.read. needs model.teachers.a.cache.dir',
        ),
        (
            dict(
                teachers=dict(
                    a=dict(
                        _entry(CLASSES),
                        distill_losses=dict(
                            kd=dict(type='MultiLabelKDLoss', inputs=dict(t_logits='t_stage9'))
                        ),
                    )
                )
            ),
            ValueError,
            r"teachers.a.distill_losses.kd .* needs \['t_stage9'\]",
        ),
    ],
)
def test_bad_teachers_are_refused_before_training_naming_the_key(change, error, message):
    with pytest.raises(error, match=message):
        _distiller(**change)


def test_teacher_classes_come_from_its_checkpoint_and_must_agree_with_the_config(tmp_path, batch):
    with DefaultScope.overwrite_default_scope('mlkd'), cheap_default_init():
        net = build_network(dict(cfg_path=MULTIDIGITS_TEACHER, head=dict(num_classes=2)), 'teacher')
    path = str(tmp_path / 'teacher.pth')
    torch.save(
        {'state_dict': net.state_dict(), 'meta': {'dataset_meta': {'classes': ('3', '1')}}}, path
    )
    entry = dict(_entry(['3', '1']), ckpt=path, allow_random=False)
    del entry['classes']
    model = _distiller(teachers=dict(a=entry), allow_uncovered_classes=True)
    assert model.label_sets['a'].classes == ('3', '1')
    assert model.label_sets['a'].student_index == (1, 3)
    with pytest.raises(
        ValueError,
        match=r"model.teachers.a.classes is \['1', '3'\], but its "
        r"checkpoint was trained on \['3', '1'\]",
    ):
        _distiller(teachers=dict(a=dict(entry, classes=['1', '3'])), allow_uncovered_classes=True)


def test_a_class_tap_without_the_class_axis_is_refused_at_the_step(batch):
    entry = _entry(CLASSES)
    entry['distill_losses'] = dict(
        kd=dict(type='MultiLabelKDLoss', inputs=dict(s_logits='s_feats', t_logits='t_feats'))
    )
    model = _distiller(teachers=dict(a=entry), class_taps=('logits', 'feats'))
    with pytest.raises(ValueError, match=r"student tap 's_feats' is in model.class_taps"):
        model.loss(*batch)


def test_the_teachers_stay_frozen_and_in_eval_mode():
    model = _distiller().train()
    for teacher in model.teachers.values():
        assert not teacher.training
        assert not any(p.requires_grad for p in teacher.parameters())
    assert model.networks_with_own_classes == ('teachers',)
    assert [t.output_names for t in model.teacher_sources.values()] == [
        ['t_logits', 't_label_emb'],
        ['t_logits', 't_label_emb'],
    ]


def test_fidelity_reads_the_named_teachers_scores_in_the_students_class_order(batch):
    """``teacher_score`` is the named teacher's sigmoid scores, its columns reordered by class name;
    the student's predictions stay what they are without it."""
    teachers = dict(a=_entry(['3', '0', '2', '1']), b=_entry(B_CLASSES))
    model = _distiller(teachers=teachers, fidelity_teacher='a').eval()
    inputs, samples = batch
    plain = model(inputs, _samples([[0], [1], [2]]), mode='predict')
    model.eval_teacher_score = True
    scored = model(inputs, samples, mode='predict')
    with torch.no_grad():
        teacher = torch.sigmoid(model.teachers['a'](inputs, mode='tensor'))
    for i, sample in enumerate(scored):
        # Student class '0' is the teacher's column 1, '1' its 3, '2' its 2, '3' its 0.
        torch.testing.assert_close(sample.teacher_score, teacher[i, [1, 3, 2, 0]])
        assert torch.equal(sample.pred_score, plain[i].pred_score)
    assert 'teacher_score' not in plain[0]
    model.check_teacher_score(['DistillFidelity'], 'val_evaluator')  # a teacher is named: fine


@pytest.mark.parametrize(
    'teachers, fidelity_teacher, message',
    [
        (  # two teachers, none named: ambiguous
            dict(a=_entry(CLASSES), b=_entry(B_CLASSES)),
            None,
            r"val_evaluator holds \['DistillFidelity'\].*2 teachers \(\['a', 'b'\]\) and "
            r"model.fidelity_teacher=None.*teacher of every student class \(\['a'\]\)",
        ),
        (  # the only teacher lacks classes
            dict(b=_entry(B_CLASSES)),
            None,
            r"its only teacher, 'b', lacks the student classes \['0', '3'\].*drop "
            r"\['DistillFidelity'\] from val_evaluator",
        ),
    ],
)
def test_fidelity_without_a_teacher_of_every_class_is_refused(teachers, fidelity_teacher, message):
    model = _distiller(
        teachers=teachers, fidelity_teacher=fidelity_teacher, allow_uncovered_classes=True
    )
    assert model.fidelity_teacher is None
    with pytest.raises(ValueError, match=message):
        model.check_teacher_score(['DistillFidelity'], 'val_evaluator')


def test_the_only_teacher_of_every_class_is_the_fidelity_teacher_and_a_bad_name_is_refused():
    assert _distiller(teachers=dict(a=_entry(CLASSES))).fidelity_teacher == 'a'
    with pytest.raises(
        ValueError, match=r"model.fidelity_teacher is 'c', not one of .*\['a', 'b'\]"
    ):
        _distiller(fidelity_teacher='c')
    with pytest.raises(
        ValueError,
        match=r"model.fidelity_teacher is 'b', but that teacher lacks the student classes "
        r"\['0', '3'\]",
    ):
        _distiller(fidelity_teacher='b')
