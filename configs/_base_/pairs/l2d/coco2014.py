# Common part of the L2D-protocol distillation pairs on MS-COCO 2014 (pairs/coco_*.py): the
# dataset and the student's recipe (that of recipes/coco2014_l2d.py).
_base_ = ['../../datasets/coco2014_l2d.py', './recipe.py']
