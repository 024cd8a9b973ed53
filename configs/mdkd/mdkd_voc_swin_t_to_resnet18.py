_base_ = ['../_base_/pairs/voc_swin_t_to_resnet18.py', '../_base_/methods/mdkd.py']
model = dict(distill_losses=_base_.distill_losses, student_taps=_base_.student_taps,
             teacher_taps=_base_.teacher_taps)
