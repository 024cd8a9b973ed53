# Plain teachers of the intra-class contrastive paper on CIFAR-100: its teacher recipe (global batch
# 256, lr 0.5, 90 epochs; schedules/sgd_90e_teacher.py).
_base_ = ['./cifar100.py', '../../schedules/sgd_90e_teacher.py']
train_dataloader = dict(batch_size=256)
