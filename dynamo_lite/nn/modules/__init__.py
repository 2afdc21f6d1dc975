"""The layer modules of dl.nn, grouped by kind."""
from .activation import GELU, LogSoftmax, ReLU, Sigmoid, SiLU, Softmax, Tanh
from .container import ModuleDict, ModuleList, Sequential
from .conv import Conv2d
from .dropout import Dropout
from .flatten import Flatten
from .linear import Identity, Linear
from .normalization import LayerNorm
from .pooling import AvgPool2d, MaxPool2d
from .sparse import Embedding

__all__ = [
    "AvgPool2d", "Conv2d", "Dropout", "Embedding", "Flatten", "GELU", "Identity", "LayerNorm",
    "Linear", "LogSoftmax", "MaxPool2d", "ModuleDict", "ModuleList", "ReLU", "Sequential",
    "Sigmoid", "SiLU", "Softmax", "Tanh",
]

# Layers ported for torch model code (normalization, resampling, recurrent, attention ...).
from .attention import MultiheadAttention  # noqa: E402
from .activation import (  # noqa: E402
    ELU, GLU, SELU, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU, LogSigmoid, Mish, ReLU6, Softplus, Softsign,
    Tanhshrink,
)
from .batchnorm import BatchNorm1d, BatchNorm2d, InstanceNorm1d, InstanceNorm2d  # noqa: E402
from .conv import Conv1d, ConvTranspose2d  # noqa: E402
from .dropout import Dropout2d  # noqa: E402
from .flatten import Unflatten  # noqa: E402
from .normalization import GroupNorm, RMSNorm  # noqa: E402
from .param_containers import ParameterDict, ParameterList  # noqa: E402
from .pooling import AdaptiveAvgPool2d, AdaptiveMaxPool2d  # noqa: E402
from .rnn import GRU, LSTM, RNN, RNNBase  # noqa: E402
from .rnn_cells import GRUCell, LSTMCell, RNNCell  # noqa: E402
from .resample import PixelShuffle, PixelUnshuffle, Upsample, ZeroPad2d  # noqa: E402
from .sparse import EmbeddingBag  # noqa: E402
from .transformer import (  # noqa: E402
    Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder, TransformerEncoderLayer,
)

__all__ += [
    "AdaptiveAvgPool2d", "AdaptiveMaxPool2d", "BatchNorm1d", "BatchNorm2d", "Conv1d", "ConvTranspose2d", "Dropout2d",
    "ELU", "EmbeddingBag", "GLU", "GroupNorm", "Hardsigmoid", "Hardswish", "Hardtanh", "InstanceNorm1d",
    "InstanceNorm2d", "LeakyReLU", "LogSigmoid", "Mish", "ParameterDict", "ParameterList", "PixelShuffle",
    "PixelUnshuffle", "ReLU6", "RMSNorm", "SELU", "Softplus", "Softsign", "Tanhshrink", "Unflatten", "Upsample",
    "ZeroPad2d", "RNNBase", "RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell",
    "MultiheadAttention", "Transformer", "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder",
    "TransformerEncoderLayer",
]

from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss  # noqa: E402

__all__ += ["BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "L1Loss", "MSELoss", "NLLLoss"]

from .activation import PReLU  # noqa: E402
from .distance import CosineSimilarity, PairwiseDistance  # noqa: E402
from .loss import HuberLoss, KLDivLoss, SmoothL1Loss  # noqa: E402

__all__ += ["CosineSimilarity", "HuberLoss", "KLDivLoss", "PairwiseDistance", "PReLU", "SmoothL1Loss"]
from .lazy import (  # noqa: E402
    LazyBatchNorm1d, LazyBatchNorm2d, LazyConv1d, LazyConv2d, LazyLinear, LazyModuleMixin, UninitializedBuffer,
    UninitializedParameter,
)

__all__ += ["LazyBatchNorm1d", "LazyBatchNorm2d", "LazyConv1d", "LazyConv2d", "LazyLinear", "LazyModuleMixin",
            "UninitializedBuffer", "UninitializedParameter"]
from .ctc_loss import CTCLoss  # noqa: E402

__all__ += ["CTCLoss"]

from .activation_extra import CELU, Hardshrink, RReLU, Softmax2d, Softmin, Softshrink, Threshold  # noqa: E402
from .dropout_extra import AlphaDropout, Dropout1d, Dropout3d, FeatureAlphaDropout  # noqa: E402
from .margin_loss import (  # noqa: E402
    CosineEmbeddingLoss, GaussianNLLLoss, HingeEmbeddingLoss, MarginRankingLoss, MultiLabelMarginLoss,
    MultiLabelSoftMarginLoss, MultiMarginLoss, PoissonNLLLoss, SoftMarginLoss, TripletMarginLoss,
)

__all__ += ["AlphaDropout", "CELU", "CosineEmbeddingLoss", "Dropout1d", "Dropout3d", "FeatureAlphaDropout",
            "GaussianNLLLoss", "Hardshrink", "HingeEmbeddingLoss", "MarginRankingLoss", "MultiLabelMarginLoss",
            "MultiLabelSoftMarginLoss", "MultiMarginLoss", "PoissonNLLLoss", "RReLU", "Softmax2d", "Softmin",
            "Softshrink", "SoftMarginLoss", "Threshold", "TripletMarginLoss"]

from .channel import Bilinear, ChannelShuffle, Fold, LocalResponseNorm, Unfold  # noqa: E402
from .padding import (  # noqa: E402
    CircularPad1d, CircularPad2d, ConstantPad1d, ConstantPad2d, ReflectionPad1d, ReflectionPad2d, ReplicationPad1d,
    ReplicationPad2d,
)
from .pooling_extra import (  # noqa: E402
    AdaptiveAvgPool1d, AdaptiveMaxPool1d, AvgPool1d, LPPool1d, LPPool2d, MaxPool1d, MaxUnpool1d, MaxUnpool2d,
)
from .shape_extra import BatchNorm3d, ConvTranspose1d, UpsamplingBilinear2d, UpsamplingNearest2d  # noqa: E402

__all__ += ["AdaptiveAvgPool1d", "AdaptiveMaxPool1d", "AvgPool1d", "BatchNorm3d", "Bilinear", "ChannelShuffle",
            "CircularPad1d", "CircularPad2d", "ConstantPad1d", "ConstantPad2d", "ConvTranspose1d", "Fold",
            "LocalResponseNorm", "LPPool1d", "LPPool2d", "MaxPool1d", "MaxUnpool1d", "MaxUnpool2d", "ReflectionPad1d",
            "ReflectionPad2d", "ReplicationPad1d", "ReplicationPad2d", "Unfold", "UpsamplingBilinear2d",
            "UpsamplingNearest2d"]
