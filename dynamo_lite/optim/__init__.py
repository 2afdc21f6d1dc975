"""Optimizers (SGD, Adam, AdamW, RMSprop, Adagrad) and learning-rate schedulers."""
from . import lr_scheduler, swa_utils  # noqa: F401
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Adagrad", "Adam", "AdamW", "Optimizer", "RMSprop", "SGD", "lr_scheduler", "swa_utils"]
from .adam_variants import Adamax, NAdam, RAdam  # noqa: E402

__all__ += ["Adamax", "NAdam", "RAdam"]
from .lbfgs import LBFGS  # noqa: E402

__all__ += ["LBFGS"]
from .adadelta import Adadelta  # noqa: E402
from .asgd import ASGD  # noqa: E402
from .rprop import Rprop  # noqa: E402

__all__ += ["Adadelta", "ASGD", "Rprop"]
