# Distillation pair of 3D Table B.2: swin_t -> mobilenet_v2 on PASCAL VOC 2007. Train the teacher
# first with configs/teachers/voc_swin_t_mldecoder.py (30 of 80 epochs).
_base_ = ['./l2d/voc2007.py', './l2d/distiller.py']
model = dict(
    teacher='{{fileDirname}}/../../teachers/voc_swin_t_mldecoder.py',
    student='{{fileDirname}}/../../students/voc_mobilenet_v2_mldecoder.py',
    teacher_ckpt='work_dirs/teachers/voc_swin_t_mldecoder',
)
