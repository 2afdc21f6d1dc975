"""The layer modules of dl.nn, one module per family (the layout of torch.nn.modules)."""
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .activation import (
    CELU, ELU, GELU, GLU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU, LogSigmoid, LogSoftmax,
    Mish, PReLU, ReLU, ReLU6, RReLU, SELU, Sigmoid, SiLU, Softmax, Softmax2d, Softmin, Softplus, Softshrink,
    Softsign, Tanh, Tanhshrink, Threshold,
)
from .linear import Bilinear, Identity, Linear
from .conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
from .pooling import (
    AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveMaxPool1d, AdaptiveMaxPool2d, AvgPool1d, AvgPool2d,
    LPPool1d, LPPool2d, MaxPool1d, MaxPool2d, MaxUnpool1d, MaxUnpool2d,
)
from .padding import (
    CircularPad1d, CircularPad2d, ConstantPad1d, ConstantPad2d, ReflectionPad1d, ReflectionPad2d,
    ReplicationPad1d, ReplicationPad2d, ZeroPad2d,
)
from .dropout import AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout
from .normalization import GroupNorm, LayerNorm, LocalResponseNorm, RMSNorm
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d, InstanceNorm1d, InstanceNorm2d
from .sparse import Embedding, EmbeddingBag
from .flatten import Flatten, Unflatten
from .fold import Fold, Unfold
from .resample import (
    ChannelShuffle, PixelShuffle, PixelUnshuffle, Upsample, UpsamplingBilinear2d, UpsamplingNearest2d,
)
from .distance import CosineSimilarity, PairwiseDistance
from .loss import (
    BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss, CTCLoss, GaussianNLLLoss,
    HingeEmbeddingLoss, HuberLoss, KLDivLoss, L1Loss, MarginRankingLoss, MSELoss, MultiLabelMarginLoss,
    MultiLabelSoftMarginLoss, MultiMarginLoss, NLLLoss, PoissonNLLLoss, SmoothL1Loss, SoftMarginLoss,
    TripletMarginLoss,
)
from .rnn import GRU, LSTM, RNN, RNNBase
from .rnn_cells import GRUCell, LSTMCell, RNNCell
from .attention import MultiheadAttention
from .transformer import (
    Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder, TransformerEncoderLayer,
)
from .lazy import (
    LazyBatchNorm1d, LazyBatchNorm2d, LazyConv1d, LazyConv2d, LazyLinear, LazyModuleMixin,
    UninitializedBuffer, UninitializedParameter,
)

__all__ = [
    "AvgPool2d", "Conv2d", "Dropout", "Embedding", "Flatten", "GELU", "Identity", "LayerNorm", "Linear",
    "LogSoftmax", "MaxPool2d", "ModuleDict", "ModuleList", "ReLU", "Sequential", "Sigmoid", "SiLU",
    "Softmax", "Tanh", "AdaptiveAvgPool2d", "AdaptiveMaxPool2d", "BatchNorm1d", "BatchNorm2d", "Conv1d",
    "ConvTranspose2d", "Dropout2d", "ELU", "EmbeddingBag", "GLU", "GroupNorm", "Hardsigmoid", "Hardswish",
    "Hardtanh", "InstanceNorm1d", "InstanceNorm2d", "LeakyReLU", "LogSigmoid", "Mish", "ParameterDict",
    "ParameterList", "PixelShuffle", "PixelUnshuffle", "ReLU6", "RMSNorm", "SELU", "Softplus", "Softsign",
    "Tanhshrink", "Unflatten", "Upsample", "ZeroPad2d", "RNNBase", "RNN", "LSTM", "GRU", "RNNCell",
    "LSTMCell", "GRUCell", "MultiheadAttention", "Transformer", "TransformerDecoder",
    "TransformerDecoderLayer", "TransformerEncoder", "TransformerEncoderLayer", "BCELoss",
    "BCEWithLogitsLoss", "CrossEntropyLoss", "L1Loss", "MSELoss", "NLLLoss", "CosineSimilarity", "HuberLoss",
    "KLDivLoss", "PairwiseDistance", "PReLU", "SmoothL1Loss", "LazyBatchNorm1d", "LazyBatchNorm2d",
    "LazyConv1d", "LazyConv2d", "LazyLinear", "LazyModuleMixin", "UninitializedBuffer",
    "UninitializedParameter", "CTCLoss", "AlphaDropout", "CELU", "CosineEmbeddingLoss", "Dropout1d",
    "Dropout3d", "FeatureAlphaDropout", "GaussianNLLLoss", "Hardshrink", "HingeEmbeddingLoss",
    "MarginRankingLoss", "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss",
    "PoissonNLLLoss", "RReLU", "Softmax2d", "Softmin", "Softshrink", "SoftMarginLoss", "Threshold",
    "TripletMarginLoss", "AdaptiveAvgPool1d", "AdaptiveMaxPool1d", "AvgPool1d", "BatchNorm3d", "Bilinear",
    "ChannelShuffle", "CircularPad1d", "CircularPad2d", "ConstantPad1d", "ConstantPad2d", "ConvTranspose1d",
    "Fold", "LocalResponseNorm", "LPPool1d", "LPPool2d", "MaxPool1d", "MaxUnpool1d", "MaxUnpool2d",
    "ReflectionPad1d", "ReflectionPad2d", "ReplicationPad1d", "ReplicationPad2d", "Unfold",
    "UpsamplingBilinear2d", "UpsamplingNearest2d",
]
