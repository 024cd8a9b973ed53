# cifar100.py for a MobileNet or ShuffleNet student: mdistiller trains those at lr 0.01 (0.05 for
# the others), as their "student alone" configs do (configs/cifar100/{mobilenetv2,shufflev1}.py).
_base_ = ['./cifar100.py']
optim_wrapper = dict(optimizer=dict(lr=0.01))
