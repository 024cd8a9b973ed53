# Common part of the L2D-protocol distillation pairs on NUS-WIDE (pairs/nuswide_*.py): the
# dataset and the student's recipe (that of recipes/nuswide_l2d.py).
_base_ = ['../../datasets/nuswide_l2d.py', './recipe.py']
