_base_ = ['../_base_/pairs/coco_resnet101_to_resnet34.py', '../_base_/methods/kd.py']
model = dict(distill_losses=_base_.distill_losses, student_taps=_base_.student_taps,
             teacher_taps=_base_.teacher_taps)
