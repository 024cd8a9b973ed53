# Kobayashi (CVPR 2023) Table C (NUS-WIDE), ResNet-50: "Softmax", the softmax cross-entropy
# against the uniform distribution over each image's positives, averaged over the batch.
_base_ = ['../_base_/task_losses/nuswide_resnet50.py']
model = dict(head=dict(loss=dict(_delete_=True, type='MultiLabelSoftmaxLoss')))
