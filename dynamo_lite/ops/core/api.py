"""The public ``dl.*`` functions: the ``__all__`` of every ops module (and of tensor interop)."""
from ...tensor import interop as _interop
from ...tensor.interop import *  # noqa: F401,F403
from ..creation.conversions import *  # noqa: F401,F403
from ..shape.views import *  # noqa: F401,F403
from ..shape.indexing import *  # noqa: F401,F403
from ..creation.factories import *  # noqa: F401,F403
from ..pointwise.pointwise import *  # noqa: F401,F403
from ..pointwise.unary import *  # noqa: F401,F403
from ..pointwise.comparison import *  # noqa: F401,F403
from ..reductions.reductions import *  # noqa: F401,F403
from ..reductions.normalization import *  # noqa: F401,F403
from ..linalg.linalg import *  # noqa: F401,F403
from ..shape.shape_ops import *  # noqa: F401,F403
from ..nn.conv import *  # noqa: F401,F403
from ..nn.nn_ops import *  # noqa: F401,F403
from ..pointwise.math_ops import *  # noqa: F401,F403
from ..linalg.contractions import *  # noqa: F401,F403
from ..shape.rearrange import *  # noqa: F401,F403
from ..reductions.sorting import *  # noqa: F401,F403
from ..shape.scattering import *  # noqa: F401,F403
from ..shape.selection import *  # noqa: F401,F403
from ..random.sampling import *  # noqa: F401,F403
from ..nn.adaptive_pool import *  # noqa: F401,F403
from ..nn.conv_transpose import *  # noqa: F401,F403
from ..nn.embedding_bags import *  # noqa: F401,F403
from ..nn.resample import *  # noqa: F401,F403
from ..pointwise.complex_ops import *  # noqa: F401,F403
from ..creation.tensor_functions import *  # noqa: F401,F403
from ..reductions.order_stats import *  # noqa: F401,F403
from ..shape.differences import *  # noqa: F401,F403
from ..linalg.matrix_solve import *  # noqa: F401,F403
from ..pointwise.special_ops import *  # noqa: F401,F403
from ..pointwise.float_functions import *  # noqa: F401,F403
from ..pointwise.gamma_functions import *  # noqa: F401,F403
from ..reductions.scans_and_stats import *  # noqa: F401,F403
from ..shape.diagonals import *  # noqa: F401,F403
from ..shape.splits import *  # noqa: F401,F403
from ..shape.index_functions import *  # noqa: F401,F403
from ..creation.buffers import *  # noqa: F401,F403
from ..linalg.products import *  # noqa: F401,F403

from ..creation import conversions as _conversions, factories as _factories, tensor_functions as _tensor_functions, buffers as _buffers
from ..shape import views as _views, indexing as _indexing, shape_ops as _shape_ops, rearrange as _rearrange, scattering as _scattering, selection as _selection, differences as _differences, diagonals as _diagonals, splits as _splits, index_functions as _index_functions
from ..pointwise import pointwise as _pointwise, unary as _unary, comparison as _comparison, math_ops as _math_ops, complex_ops as _complex_ops, special_ops as _special_ops, float_functions as _float_functions, gamma_functions as _gamma_functions
from ..reductions import reductions as _reductions, normalization as _normalization, sorting as _sorting, order_stats as _order_stats, scans_and_stats as _scans_and_stats
from ..linalg import linalg as _linalg, contractions as _contractions, matrix_solve as _matrix_solve, products as _products
from . import inplace_twins as _inplace_twins  # Tensor methods only (NOTE: [in-place twins])
from ..nn import conv as _conv, nn_ops as _nn_ops, adaptive_pool as _adaptive_pool, conv_transpose as _conv_transpose, embedding_bags as _embedding_bags, resample as _resample
from ..random import sampling as _sampling

# A name two modules export comes from the later one.
API_MODULES = (
    _interop,
    _conversions, _views, _indexing, _factories, _pointwise, _unary, _comparison, _reductions, _normalization,
    _linalg, _shape_ops, _conv, _nn_ops, _math_ops, _contractions, _rearrange, _sorting, _scattering,
    _selection, _sampling, _adaptive_pool, _conv_transpose, _embedding_bags, _resample, _complex_ops,
    _tensor_functions, _order_stats, _differences, _matrix_solve, _special_ops, _float_functions,
    _gamma_functions, _scans_and_stats, _diagonals, _splits, _index_functions, _buffers, _products,
    _inplace_twins,
)
__all__ = sorted({name for module in API_MODULES for name in module.__all__})
