"""Summary protos for each kind of logged data: scalars, histograms, images, text, hparams, PR curves.

Each function returns a ``Summary`` (tensorboard.compat.proto.summary_pb2) that TensorBoard's
plugins read: the plugin name and its plugin data in ``metadata`` where the plugin needs them.
"""
from __future__ import annotations

import io
import wave

import numpy as np
from google.protobuf import struct_pb2
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.custom_scalar import layout_pb2
from tensorboard.plugins.hparams import api_pb2 as hparams_api
from tensorboard.plugins.hparams import plugin_data_pb2 as hparams_data
from tensorboard.plugins.pr_curve.plugin_data_pb2 import PrCurvePluginData
from tensorboard.plugins.scalar.plugin_data_pb2 import ScalarPluginData
from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData

from .convert import Tensor, to_numpy, to_scalar
from .images import encode_png, to_hwc, to_uint8

HPARAMS_TAGS = ("_hparams_/experiment", "_hparams_/session_start_info", "_hparams_/session_end_info")
PR_CURVE_MAX_THRESHOLDS = 127


def _plugin_metadata(plugin_name: str, content: bytes = b"") -> SummaryMetadata:
    return SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name=plugin_name, content=content))


def _shape(*sizes: int) -> TensorShapeProto:
    return TensorShapeProto(dim=[TensorShapeProto.Dim(size=s) for s in sizes])


# -- scalars --------------------------------------------------------------------------------
def scalar(tag: str, value, new_style: bool = False, double_precision: bool = False) -> Summary:
    """A scalar: ``simple_value`` (float32), or with ``new_style`` a scalar tensor of the scalars plugin."""
    number = to_scalar(value)
    if not new_style:
        return Summary(value=[Summary.Value(tag=tag, simple_value=number)])
    if double_precision:
        tensor = TensorProto(dtype="DT_DOUBLE", double_val=[number], tensor_shape=TensorShapeProto())
    else:
        tensor = TensorProto(dtype="DT_FLOAT", float_val=[number], tensor_shape=TensorShapeProto())
    metadata = _plugin_metadata("scalars", ScalarPluginData(version=0).SerializeToString())
    return Summary(value=[Summary.Value(tag=tag, tensor=tensor, metadata=metadata)])


# -- histograms -----------------------------------------------------------------------------
def tensorflow_bins() -> list:
    """TensorFlow's default bucket edges: +-1e-12 growing by 10% up to 1e20, and 0."""
    positive, edge = [], 1e-12
    while edge < 1e20:
        positive.append(edge)
        edge *= 1.1
    return [-e for e in reversed(positive)] + [0.0] + positive


def histogram_proto(values: np.ndarray, bins, max_bins: int | None = None) -> HistogramProto:
    """The HistogramProto of ``values``: min, max, count, sum, sum of squares and the buckets.

    ``bins`` is what ``np.histogram`` accepts (a count, edges or a rule name); ``max_bins``
    merges neighbouring buckets until there are at most that many. TensorBoard stores right
    edges only, so the buckets kept run from one empty bucket before the first non-empty one
    (its right edge is the data's left edge) to the last non-empty one.
    """
    values = np.asarray(values, dtype=np.float64).reshape(-1)
    if values.size == 0:
        raise ValueError("The input has no element.")
    counts, limits = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        group = -(-len(counts) // max_bins)
        padded = np.concatenate([counts, np.zeros(-len(counts) % group, counts.dtype)])
        counts = padded.reshape(-1, group).sum(axis=1)
        limits = np.concatenate([limits[:-1:group], limits[-1:]])
    nonzero = np.flatnonzero(counts)
    if nonzero.size == 0:
        raise ValueError("The histogram is empty: no value falls inside the bins")
    first, last = int(nonzero[0]), int(nonzero[-1])
    bucket = np.concatenate([[0], counts[first:last + 1]])
    bucket_limit = limits[first:last + 2]
    return HistogramProto(min=float(values.min()), max=float(values.max()), num=float(values.size),
                          sum=float(values.sum()), sum_squares=float(values.dot(values)),
                          bucket_limit=bucket_limit.tolist(), bucket=bucket.tolist())


def histogram(tag: str, values, bins, max_bins: int | None = None) -> Summary:
    return Summary(value=[Summary.Value(tag=tag, histo=histogram_proto(to_numpy(values), bins, max_bins))])


def histogram_raw(tag: str, min, max, num, sum, sum_squares, bucket_limits, bucket_counts) -> Summary:
    if len(bucket_limits) != len(bucket_counts):
        raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
    histo = HistogramProto(min=min, max=max, num=num, sum=sum, sum_squares=sum_squares,
                           bucket_limit=list(bucket_limits), bucket=list(bucket_counts))
    return Summary(value=[Summary.Value(tag=tag, histo=histo)])


# -- images ---------------------------------------------------------------------------------
def image_proto(hwc: np.ndarray) -> Summary.Image:
    pixels = to_uint8(hwc)
    height, width, channels = pixels.shape
    return Summary.Image(height=height, width=width, colorspace=channels, encoded_image_string=encode_png(pixels))


def image(tag: str, values, dataformats: str) -> Summary:
    """A PNG image of ``values`` (float in [0, 1] or uint8) laid out as ``dataformats``."""
    return Summary(value=[Summary.Value(tag=tag, image=image_proto(to_hwc(to_numpy(values), dataformats)))])


# -- text -----------------------------------------------------------------------------------
def text(tag: str, text_string: str) -> Summary:
    """Markdown text for the text plugin (a one-element string tensor under ``<tag>/text_summary``)."""
    metadata = _plugin_metadata("text", TextPluginData(version=0).SerializeToString())
    tensor = TensorProto(dtype="DT_STRING", string_val=[str(text_string).encode("utf-8")], tensor_shape=_shape(1))
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=metadata, tensor=tensor)])


# -- audio ----------------------------------------------------------------------------------
def audio(tag: str, values, sample_rate: int) -> Summary:
    """A mono WAV clip (16-bit) of samples in [-1, 1] (clipped), for the audio plugin."""
    samples = to_numpy(values).squeeze()
    if samples.ndim != 1:
        raise AssertionError("input tensor should be 1 dimensional.")
    pcm = (np.clip(samples.astype(np.float64), -1, 1) * np.iinfo(np.int16).max).astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(int(sample_rate))
        out.writeframes(pcm.tobytes())
    clip = Summary.Audio(sample_rate=sample_rate, num_channels=1, length_frames=pcm.shape[0],
                         encoded_audio_string=buffer.getvalue(), content_type="audio/wav")
    return Summary(value=[Summary.Value(tag=tag, audio=clip)])


# -- custom scalar layouts ------------------------------------------------------------------
def custom_scalars(layout: dict) -> Summary:
    """The Custom Scalars dashboard's layout: ``{category: {chart: ["Multiline", [tags]] or
    ["Margin", [value, lower, upper]]}}``."""
    categories = []
    for title, charts in layout.items():
        protos = []
        for name, (kind, tags) in charts.items():
            if kind == "Margin":
                if len(tags) != 3:
                    raise AssertionError("a Margin chart takes three tags: value, lower, upper")
                series = layout_pb2.MarginChartContent.Series(value=tags[0], lower=tags[1], upper=tags[2])
                protos.append(layout_pb2.Chart(title=name, margin=layout_pb2.MarginChartContent(series=[series])))
            else:
                protos.append(layout_pb2.Chart(title=name, multiline=layout_pb2.MultilineChartContent(tag=tags)))
        categories.append(layout_pb2.Category(title=title, chart=protos))
    tensor = TensorProto(dtype="DT_STRING", string_val=[layout_pb2.Layout(category=categories).SerializeToString()],
                         tensor_shape=TensorShapeProto())
    return Summary(value=[Summary.Value(tag="custom_scalars__config__", tensor=tensor,
                                        metadata=_plugin_metadata("custom_scalars"))])


# -- PR curves ------------------------------------------------------------------------------
def pr_curve_data(labels, predictions, num_thresholds: int, weights=None) -> np.ndarray:
    """``6 x num_thresholds``: true/false positives, true/false negatives, precision, recall per threshold.

    Threshold ``i`` is ``i / (num_thresholds - 1)``; a prediction counts as positive at every
    threshold at or below it. Counts are weighted by ``weights`` (default 1).
    """
    labels = to_numpy(labels).reshape(-1).astype(np.float64)
    predictions = to_numpy(predictions).reshape(-1).astype(np.float64)
    weights = 1.0 if weights is None else to_numpy(weights).reshape(-1).astype(np.float64)
    buckets = np.floor(predictions * (num_thresholds - 1)).astype(np.int64)
    buckets = np.clip(buckets, 0, num_thresholds - 1)
    positive = np.bincount(buckets, weights=np.broadcast_to(labels * weights, buckets.shape), minlength=num_thresholds)
    negative = np.bincount(buckets, weights=np.broadcast_to((1.0 - labels) * weights, buckets.shape),
                           minlength=num_thresholds)
    tp = np.cumsum(positive[::-1])[::-1]
    fp = np.cumsum(negative[::-1])[::-1]
    tn = fp[0] - fp
    fn = tp[0] - tp
    precision = tp / np.maximum(1e-7, tp + fp)
    recall = tp / np.maximum(1e-7, tp + fn)
    return np.stack([tp, fp, tn, fn, precision, recall])


def pr_curve(tag: str, labels, predictions, num_thresholds: int = PR_CURVE_MAX_THRESHOLDS, weights=None) -> Summary:
    num_thresholds = min(int(num_thresholds), PR_CURVE_MAX_THRESHOLDS)
    if num_thresholds < 2:
        raise ValueError(f"num_thresholds must be at least 2, got {num_thresholds}")
    data = pr_curve_data(labels, predictions, num_thresholds, weights)
    return pr_curve_raw_summary(tag, data, num_thresholds)


def pr_curve_raw_summary(tag: str, data: np.ndarray, num_thresholds: int) -> Summary:
    data = np.asarray(data, dtype=np.float32)
    tensor = TensorProto(dtype="DT_FLOAT", float_val=data.reshape(-1).tolist(), tensor_shape=_shape(*data.shape))
    content = PrCurvePluginData(version=0, num_thresholds=num_thresholds).SerializeToString()
    return Summary(value=[Summary.Value(tag=tag, metadata=_plugin_metadata("pr_curves", content), tensor=tensor)])


# -- hparams --------------------------------------------------------------------------------
_HPARAM_KINDS = (  # checked in order: bool before int (bool is an int)
    (bool, "bool_value", hparams_api.DATA_TYPE_BOOL),
    ((int, float), "number_value", hparams_api.DATA_TYPE_FLOAT64),
    (str, "string_value", hparams_api.DATA_TYPE_STRING),
)


def _hparam_value(name: str, value):
    """``(google.protobuf.Value, DataType)`` of one hyperparameter (a one-element tensor is a number)."""
    for kinds, field, data_type in _HPARAM_KINDS:
        if isinstance(value, kinds):
            number = float(value) if field == "number_value" else value
            return struct_pb2.Value(**{field: number}), data_type
    if isinstance(value, (np.generic, np.ndarray, Tensor)):
        array = to_numpy(value)
        if array.size == 1 and array.dtype.kind in "biuf":
            return struct_pb2.Value(number_value=float(array.reshape(()))), hparams_api.DATA_TYPE_FLOAT64
    raise ValueError(f"value of hparam {name!r} should be one of int, float, str, bool, or a one-element tensor, "
                     f"got {type(value).__name__}")


def _hparams_summary(tag: str, plugin_data) -> Summary:
    metadata = _plugin_metadata("hparams", plugin_data.SerializeToString())
    null = TensorProto(dtype="DT_FLOAT", tensor_shape=_shape(0))  # the data provider indexes tensors
    return Summary(value=[Summary.Value(tag=tag, metadata=metadata, tensor=null)])


def hparams(hparam_dict: dict, metric_dict: dict, hparam_domain_discrete: dict | None = None) -> tuple:
    """The three summaries of one hparams session: experiment, session start (the values), session end.

    Raises:
        TypeError: the dicts are not dicts, or a discrete domain is not a list of values of
            the hyperparameter's type.
        ValueError: a hyperparameter of another type.
    """
    if not isinstance(hparam_dict, dict) or not isinstance(metric_dict, dict):
        raise TypeError("hparam_dict and metric_dict should be dictionary.")
    domains = hparam_domain_discrete or {}
    if not isinstance(domains, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing else")
    for name, domain in domains.items():
        if name not in hparam_dict or not isinstance(domain, list) or not all(
                isinstance(d, type(hparam_dict[name])) for d in domain):
            raise TypeError(f"parameter: hparam_domain_discrete[{name}] should be a list of same type as "
                            f"hparam_dict[{name}].")
    start = hparams_data.SessionStartInfo()
    infos = []
    for name, value in hparam_dict.items():
        if value is None:
            continue
        proto, data_type = _hparam_value(name, value)
        start.hparams[name].CopyFrom(proto)
        info = hparams_api.HParamInfo(name=name, type=data_type)
        if name in domains:
            for value in domains[name]:
                info.domain_discrete.values.add().CopyFrom(_hparam_value(name, value)[0])
        infos.append(info)
    metrics = [hparams_api.MetricInfo(name=hparams_api.MetricName(tag=tag)) for tag in metric_dict]
    experiment = hparams_api.Experiment(hparam_infos=infos, metric_infos=metrics)
    end = hparams_data.SessionEndInfo(status=hparams_api.STATUS_SUCCESS)
    return (_hparams_summary(HPARAMS_TAGS[0], hparams_data.HParamsPluginData(version=0, experiment=experiment)),
            _hparams_summary(HPARAMS_TAGS[1], hparams_data.HParamsPluginData(version=0, session_start_info=start)),
            _hparams_summary(HPARAMS_TAGS[2], hparams_data.HParamsPluginData(version=0, session_end_info=end)))
