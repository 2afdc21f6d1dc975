"""dynamo_lite: a bytecode-rewriting frontend compiler for torch-like tensor programs."""
from ._backends_path import locate_backends as _locate_backends

_locate_backends()
from .tensor.dtype import (
    bool_ as bool, dtype, float16, float32, float64, get_default_dtype, half, int8, int16,
    int32, int64, long, set_default_dtype, uint8, double, short,
)
from .tensor.device import device
# torch's other dtype names and type queries (``dl.float``, ``dl.finfo`` ...).
from .tensor.dtype import bfloat16, cdouble, cfloat, complex64, complex128, float, int, promote_types  # noqa: E402,A001
from .tensor.device import get_default_device, set_default_device  # noqa: E402
from .tensor.type_info import finfo, iinfo  # noqa: E402
from .tensor.layout import Size, channels_last, contiguous_format, preserve_format
from .tensor.layout import strided  # noqa: E402  (Tensor.layout)
from .tensor.meta import TensorMeta
from .tensor.tensor import Tensor
from .tensor.legacy import (BoolTensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor, HalfTensor,  # noqa: E402
                            IntTensor, LongTensor, ShortTensor)

from . import ops  # noqa: E402  (registers every op and installs Tensor methods)
from .ops.core.api import *  # noqa: E402,F401,F403  (the dl.* functions)
from . import autograd  # noqa: E402  (plugs gradient recording into dispatch)
from .autograd.grad_mode import (  # noqa: E402
    enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad, set_grad_enabled,
)
from . import nn  # noqa: E402
from . import config  # noqa: E402
from .serialization import load, save  # noqa: E402
from .frames.errors import CompileError, Unsupported  # noqa: E402
from .frames.api import compile, disable, reset, stats  # noqa: E402
from .frames.explain import explain  # noqa: E402
from .frames.api import is_disabled  # noqa: E402
from .frames.tracing.dynamic_policy import mark_dynamic, mark_static  # noqa: E402
from .backends import InvalidBackend, list_backends, lookup_backend, register_backend  # noqa: E402
from . import optim  # noqa: E402
from . import utils  # noqa: E402
from .backends import get_num_threads, set_num_threads  # noqa: E402
from . import compiler, cuda, jit  # noqa: E402  (the torch.compiler/cuda/jit queries ported code makes)
from . import testing  # noqa: E402  (dl.testing.assert_close)
from . import linalg, special  # noqa: E402  (dl.linalg.norm/inv/solve ..., dl.special.erf ...)
from . import overrides, return_types  # noqa: E402  (torch.overrides queries, named result types)
from . import distributions  # noqa: E402  (dl.distributions.Normal, Categorical, kl_divergence ...)
from .linalg_decompositions import legacy_qr as qr, legacy_svd as svd, logdet, pinverse  # noqa: E402
from .linalg_decompositions import det, slogdet  # noqa: E402,F401  (dl.det, dl.slogdet as torch has them)
from . import amp, cpu  # noqa: E402  (dl.amp.autocast / GradScaler, dl.cpu.amp)
from .amp import autocast, get_autocast_dtype, is_autocast_available, is_autocast_enabled  # noqa: E402
from . import func  # noqa: E402  (dl.func.vmap / grad / grad_and_value / jacrev / functional_call)
from .func import vmap  # noqa: E402
from . import fft  # noqa: E402  (dl.fft.fft / rfft / fftn / fftfreq / fftshift ...)
from .tensor.printing import get_printoptions, set_printoptions  # noqa: E402  (how tensors print)
from .nn.functional import cosine_similarity, pairwise_distance  # noqa: E402  (torch's top-level aliases of F's)
from . import distributed  # noqa: E402  (dl.distributed: torch.distributed's API over MPI)
from .version import __version__  # noqa: E402  (the installed distribution's version)
from .matmul_precision import get_float32_matmul_precision, set_float32_matmul_precision  # noqa: E402
from . import _dynamo  # noqa: E402  (torch._dynamo's reset / explain / config for ported code)
