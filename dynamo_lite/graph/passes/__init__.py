"""Graph passes: dead code, common subexpressions, constant folding, pointwise fusion."""
from .const_fold import FoldResult, fold_constants
from .cse import eliminate_common_subexpressions
from .dce import eliminate_dead_code
from .fusion import FusionGroup, fusion_schedule, partition_pointwise

__all__ = [
    "FoldResult", "FusionGroup", "eliminate_common_subexpressions", "eliminate_dead_code",
    "fold_constants", "fusion_schedule", "partition_pointwise",
]
