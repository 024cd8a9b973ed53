_base_ = ['../_base_/pairs/coco_vgg13_bn_to_mobilenet_v2.py', '../_base_/methods/mse.py']
model = dict(distill_losses=_base_.distill_losses, student_taps=_base_.student_taps,
             teacher_taps=_base_.teacher_taps)
