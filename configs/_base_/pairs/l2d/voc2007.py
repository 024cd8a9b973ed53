# Common part of the L2D-protocol distillation pairs on Pascal VOC 2007 (pairs/voc_*.py): the
# dataset and the student's recipe (that of recipes/voc2007_l2d.py).
_base_ = ['../../datasets/voc2007_l2d.py', './recipe.py']
