# Kobayashi (CVPR 2023) Tables B / C wiring (no data): ResNet-50 from mmpretrain's ImageNet-1K
# weights with a linear head whose task loss each leaf names, trained with the Two-way recipe (SGD,
# cosine, 40 epochs). The dataset bases coco_resnet50.py / nuswide_resnet50.py add the data.
_base_ = [
    '../models/resnet50_ml.py',
    '../schedules/sgd_cosine_40e.py',
    '../default_runtime.py',
]
