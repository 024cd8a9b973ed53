from .multidigits import MultiDigits
from .worker_seed import epoch_seeded_worker_init_fn

__all__ = ['MultiDigits', 'epoch_seeded_worker_init_fn']
