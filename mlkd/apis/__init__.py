"""What the tools call (mmpretrain's ``apis``): train or evaluate a run (:func:`train`,
:func:`evaluate`), fill a teacher cache, run a benchmark (a task graph of stages over seeds) or a
sweep or a study (runs trained for every seed: the intra-class study), collect results, export a
network to ONNX, calibrate thresholds, label images. Library code under ``mlkd`` never imports
this package; the tools under ``tools/`` are argument parsers over it.
"""

from mlkd.utils.fingerprint import fingerprint

from .benchmark import (
    Benchmark,
    BenchmarkRequestError,
    ProtocolError,
    protocol_of,
    run_benchmark,
)
from .demo import BENCHMARKS, DEMO, MULTI_TEACHER
from .deployment import OnnxCheckError, OnnxExport, calibrate_thresholds, export_onnx
from .expected_negatives import expected_negative_report, negative_set_quality, quality_table
from .inference import (
    ImageDecodeError,
    ImageLabeler,
    LoadedClassifier,
    init_classifier,
    label_images,
    list_images,
    save_labels,
    split_scores,
)
from .intra_class import INTRA_CLASS, run_intra_class_study, run_rkd_search
from .runs import (
    METRICS,
    StaleResultError,
    evaluate,
    evaluate_checkpoint,
    load_finished_run,
    prepare_training,
    save_finished_run,
    set_run_seed,
    train,
    train_and_evaluate,
)
from .study import Study, StudyRequestError, StudyRun, run_study
from .sweep import SweepRequestError, run_sweep
from .tasks import Task, run_tasks
from .teacher_cache import AMP_DTYPES, TeacherCacheWriter, fill_teacher_cache

__all__ = [
    'ImageDecodeError',
    'ImageLabeler',
    'LoadedClassifier',
    'OnnxCheckError',
    'OnnxExport',
    'calibrate_thresholds',
    'export_onnx',
    'init_classifier',
    'label_images',
    'list_images',
    'save_labels',
    'split_scores',
    'AMP_DTYPES',
    'BENCHMARKS',
    'DEMO',
    'INTRA_CLASS',
    'MULTI_TEACHER',
    'METRICS',
    'Benchmark',
    'BenchmarkRequestError',
    'ProtocolError',
    'StaleResultError',
    'Study',
    'StudyRequestError',
    'StudyRun',
    'SweepRequestError',
    'Task',
    'TeacherCacheWriter',
    'evaluate',
    'evaluate_checkpoint',
    'expected_negative_report',
    'fill_teacher_cache',
    'fingerprint',
    'load_finished_run',
    'negative_set_quality',
    'prepare_training',
    'protocol_of',
    'quality_table',
    'run_benchmark',
    'run_intra_class_study',
    'run_rkd_search',
    'run_study',
    'run_sweep',
    'run_tasks',
    'save_finished_run',
    'set_run_seed',
    'train',
    'train_and_evaluate',
]
