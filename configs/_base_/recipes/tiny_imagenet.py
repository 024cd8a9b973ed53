# mdistiller's CIFAR recipe (240 epochs of SGD) on Tiny ImageNet (datasets/tiny_imagenet.py) with
# mlkd's runtime: what a Tiny ImageNet classifier or distillation config adds its model to.
_base_ = ['../datasets/tiny_imagenet.py', '../schedules/sgd_cifar_240e.py', '../default_runtime.py']
