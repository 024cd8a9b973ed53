from .one_cycle import OneCycleLRWithMultipliers, OneCycleMomentum, lr_multipliers

__all__ = ['OneCycleLRWithMultipliers', 'OneCycleMomentum', 'lr_multipliers']
