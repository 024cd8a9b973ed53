from .one_cycle import OneCycleMomentum

__all__ = ['OneCycleMomentum']
