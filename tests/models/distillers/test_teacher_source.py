"""Teacher sources: the live teacher, the teacher that fills a cache, the cache that replaces it."""

import pytest
import torch
from mmpretrain.structures import DataSample
from torch import nn

from mlkd.models.distillers.teacher_source import (
    CachedTeacher,
    CachingTeacher,
    LiveTeacher,
    build_teacher_source,
)
from mlkd.teacher_cache import TeacherCacheError

FINGERPRINT = dict(teacher_weights_sha256='a' * 64, seed=0)


def _samples(indices):
    return [DataSample(metainfo=dict(sample_idx=i)) for i in indices]


class _Teacher:
    """A teacher forward that counts its calls: outputs are a function of the inputs."""

    def __init__(self) -> None:
        self.network, self.calls = nn.Linear(2, 3), 0

    def __call__(self, inputs):
        self.calls += 1
        return {'t_logits': inputs.sum(1, keepdim=True) * torch.arange(3.0)}


def _source(cache_cfg, teacher):
    return build_teacher_source(cache_cfg, teacher.network, teacher, ['t_logits'], view=1)


def test_one_call_three_sources(tmp_path):
    inputs, samples = torch.tensor([[1.0, 2.0], [3.0, 4.0]]), _samples([5, 2])
    expected = {'t_logits': torch.tensor([[0.0, 3.0, 6.0], [0.0, 7.0, 14.0]])}

    live = _source(None, _Teacher())
    assert type(live) is LiveTeacher and live.cache is None and live.view == 1
    torch.testing.assert_close(live(inputs, samples), expected)

    teacher = _Teacher()
    writer = _source(dict(dir=str(tmp_path), mode='write'), teacher)
    assert type(writer) is CachingTeacher
    writer.cache.open(FINGERPRINT, writer.output_names)
    writer.cache.begin_epoch(0, rows=2)
    torch.testing.assert_close(writer(inputs, samples), expected)  # the live outputs...
    writer.cache.end_epoch()
    assert teacher.calls == 1

    teacher = _Teacher()
    reader = _source(dict(dir=str(tmp_path), mode='read'), teacher)
    assert type(reader) is CachedTeacher
    reader.cache.open(FINGERPRINT, reader.output_names)
    reader.cache.begin_epoch(0, rows=2)
    # ... stored by sample index: served in any order, without running the teacher.
    served = reader(torch.zeros(2, 2), _samples([2, 5]))
    assert torch.equal(served['t_logits'], expected['t_logits'].flip(0))
    assert teacher.calls == 0


def test_a_bad_cache_config_is_refused_naming_the_key():
    with pytest.raises(TeacherCacheError, match="model.teacher_cache.mode must be 'write' or"):
        _source(dict(dir='x', mode='replace'), _Teacher())
