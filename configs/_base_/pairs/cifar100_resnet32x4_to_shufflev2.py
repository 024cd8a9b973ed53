# Single-label distillation pair resnet32x4 -> shufflev2 on CIFAR-100 with mdistiller's recipe:
# cifar100_resnet32x4_to_shufflev1.py with the ShuffleNetV2 student (same ShuffleNet taps, same
# lr 0.01). Train the teacher first with configs/cifar100/resnet32x4.py.
_base_ = ['./cifar100_resnet32x4_to_shufflev1.py']
model = dict(student='{{fileDirname}}/../../cifar100/shufflev2.py')
