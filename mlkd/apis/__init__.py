"""What the tools call (mmpretrain's ``apis``): train or evaluate a run, fill a teacher cache, run
a benchmark (a task graph of stages over seeds) or a sweep, collect results. Library code under
``mlkd`` never imports this package; the tools under ``tools/`` are argument parsers over it.
"""

from mlkd.utils.fingerprint import fingerprint

from .teacher_cache import AMP_DTYPES, TeacherCacheWriter, fill_teacher_cache

__all__ = ['AMP_DTYPES', 'TeacherCacheWriter', 'fill_teacher_cache', 'fingerprint']
