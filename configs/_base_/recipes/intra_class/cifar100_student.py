# Students of the intra-class contrastive paper on CIFAR-100, alone or distilled: its student recipe
# (global batch 128, lr 0.05, 90 epochs; schedules/sgd_90e.py), for every student network (the
# paper gives no other lr for MobileNetV2 / ShuffleV2, unlike mdistiller's 0.01).
_base_ = ['./cifar100.py', '../../schedules/sgd_90e.py']
train_dataloader = dict(batch_size=128)
