# Study student: the demo's CIFAR ResNet-18 at width 4 (45 k parameters), softmax head.
_base_ = ['./teacher.py']
model = dict(backbone=dict(stem_channels=4, base_channels=4), head=dict(in_channels=32))
