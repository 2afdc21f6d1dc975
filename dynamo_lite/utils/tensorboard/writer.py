"""SummaryWriter and FileWriter: torch.utils.tensorboard's API writing TensorBoard event files."""
from __future__ import annotations

import os
import socket
import time
from datetime import datetime

import numpy as np

from tensorboard.compat.proto.config_pb2 import RunMetadata
from tensorboard.compat.proto.event_pb2 import Event, SessionLog, TaggedRunMetadata
from tensorboard.plugins.projector.projector_config_pb2 import ProjectorConfig

from . import summaries
from .convert import to_numpy
from .embedding import write_embedding
from .event_file import EventFileWriter
from .graph_capture import capture
from .graph_def import graph_def
from .images import figure_to_chw


def default_logdir(comment: str = "") -> str:
    """``runs/<Mon><DD>_<HH>-<MM>-<SS>_<host><comment>``, torch's default run directory."""
    return os.path.join("runs", datetime.now().strftime("%b%d_%H-%M-%S") + "_" + socket.gethostname() + comment)


class FileWriter:
    """Writes Event protos, Summaries and graphs of one run directory (one event file).

    Args:
        log_dir: the run's directory (created).
        max_queue, flush_secs, filename_suffix: see ``SummaryWriter``.
    """

    def __init__(self, log_dir: str, max_queue: int = 10, flush_secs: float = 120, filename_suffix: str = ""):
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self) -> str:
        return self.event_writer.get_logdir()

    def add_event(self, event: Event, step: int | None = None, walltime: float | None = None) -> None:
        event.wall_time = time.time() if walltime is None else float(walltime)
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step: int | None = None, walltime: float | None = None) -> None:
        self.add_event(Event(summary=summary), global_step, walltime)

    def add_graph(self, graph_def, walltime: float | None = None) -> None:
        self.add_event(Event(graph_def=graph_def.SerializeToString()), None, walltime)

    def add_run_metadata(self, run_metadata: RunMetadata, tag: str, global_step: int | None = None,
                         walltime: float | None = None) -> None:
        tagged = TaggedRunMetadata(tag=tag, run_metadata=run_metadata.SerializeToString())
        self.add_event(Event(tagged_run_metadata=tagged), global_step, walltime)

    def flush(self) -> None:
        self.event_writer.flush()

    def close(self) -> None:
        self.event_writer.close()


class SummaryWriter:
    """Writes entries for TensorBoard to event files in ``log_dir``, asynchronously.

    The same API as ``torch.utils.tensorboard.SummaryWriter``: values may be dl tensors,
    NumPy arrays or Python numbers. Events go through a queue to a writer thread; ``flush()``
    writes what is queued, ``close()`` (or leaving the ``with`` block, or interpreter exit)
    writes everything and closes the files. A writer inherited by a forked process (a
    DataLoader worker) writes to an event file of its own there (NOTE: [event writers and fork]).

    Args:
        log_dir: the run directory; default ``runs/<Mon><DD>_<HH>-<MM>-<SS>_<host><comment>``.
        comment: appended to the default ``log_dir`` (ignored when ``log_dir`` is given).
        purge_step: a restarted run: TensorBoard drops the events this run logged before at
            ``global_step >= purge_step``.
        max_queue: events queued before the writer thread writes them out.
        flush_secs: how often, in seconds, queued events are written out.
        filename_suffix: appended to the event file names.

    Example:
        >>> from dynamo_lite.utils.tensorboard import SummaryWriter
        >>> with SummaryWriter("runs/exp1") as writer:
        ...     for step in range(100):
        ...         writer.add_scalar("loss/train", loss.item(), step)
    """

    def __init__(self, log_dir=None, comment: str = "", purge_step=None, max_queue: int = 10, flush_secs: float = 120,
                 filename_suffix: str = ""):
        self.log_dir = str(log_dir) if log_dir else default_logdir(comment)
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer: FileWriter | None = None
        self.all_writers: dict | None = None
        self._projector_config = ProjectorConfig()
        self._get_file_writer()
        self.default_bins = summaries.tensorflow_bins()

    def _get_file_writer(self) -> FileWriter:
        """The run's FileWriter (a new one, with a new event file, after ``close()``)."""
        if self.file_writer is None or self.all_writers is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                step, self.purge_step = self.purge_step, None
                self.file_writer.add_event(Event(file_version="brain.Event:2"), step)
                self.file_writer.add_event(Event(session_log=SessionLog(status=SessionLog.START)), step)
        return self.file_writer

    def get_logdir(self) -> str:
        """The directory the event files are written to."""
        return self.log_dir

    # -- scalars --------------------------------------------------------------------------
    def add_scalar(self, tag: str, scalar_value, global_step=None, walltime=None, new_style: bool = False,
                   double_precision: bool = False) -> None:
        """Log one number (a Python number, a one-element array or tensor) under ``tag``."""
        summary = summaries.scalar(tag, scalar_value, new_style=new_style, double_precision=double_precision)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_scalars(self, main_tag: str, tag_scalar_dict: dict, global_step=None, walltime=None) -> None:
        """Log several numbers in one chart: each key is a run ``<log_dir>/<main_tag>_<key>`` logging ``main_tag``."""
        walltime = time.time() if walltime is None else walltime
        self._get_file_writer()
        for tag, value in tag_scalar_dict.items():
            run = self.file_writer.get_logdir() + "/" + main_tag.replace("/", "_") + "_" + tag
            writer = self.all_writers.get(run)
            if writer is None:
                writer = self.all_writers[run] = FileWriter(run, self.max_queue, self.flush_secs, self.filename_suffix)
            writer.add_summary(summaries.scalar(main_tag, value), global_step, walltime)

    # -- distributions ----------------------------------------------------------------------
    def add_histogram(self, tag: str, values, global_step=None, bins="tensorflow", walltime=None,
                      max_bins=None) -> None:
        """Log a histogram of ``values``; ``bins`` as ``np.histogram`` takes it, or ``"tensorflow"``."""
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._get_file_writer().add_summary(summaries.histogram(tag, values, bins, max_bins), global_step, walltime)

    def add_histogram_raw(self, tag: str, min, max, num, sum, sum_squares, bucket_limits, bucket_counts,
                          global_step=None, walltime=None) -> None:
        """Log a histogram from its statistics and buckets (right edges and counts)."""
        summary = summaries.histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_pr_curve(self, tag: str, labels, predictions, global_step=None, num_thresholds: int = 127, weights=None,
                     walltime=None) -> None:
        """Log a precision-recall curve of ``predictions`` in [0, 1] against 0/1 ``labels``."""
        summary = summaries.pr_curve(tag, labels, predictions, num_thresholds, weights)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_pr_curve_raw(self, tag: str, true_positive_counts, false_positive_counts, true_negative_counts,
                         false_negative_counts, precision, recall, global_step=None, num_thresholds: int = 127,
                         weights=None, walltime=None) -> None:
        """Log a precision-recall curve from its counts per threshold."""
        data = np.stack([to_numpy(v).astype(np.float64).reshape(-1) for v in (
            true_positive_counts, false_positive_counts, true_negative_counts, false_negative_counts, precision, recall)])
        summary = summaries.pr_curve_raw_summary(tag, data, min(int(num_thresholds), summaries.PR_CURVE_MAX_THRESHOLDS))
        self._get_file_writer().add_summary(summary, global_step, walltime)

    # -- images and text ------------------------------------------------------------------
    def add_image(self, tag: str, img_tensor, global_step=None, walltime=None, dataformats: str = "CHW") -> None:
        """Log an image: float in [0, 1] or uint8, laid out as ``dataformats`` (CHW, HWC, HW, ...)."""
        self._get_file_writer().add_summary(summaries.image(tag, img_tensor, dataformats), global_step, walltime)

    def add_images(self, tag: str, img_tensor, global_step=None, walltime=None, dataformats: str = "NCHW") -> None:
        """Log a batch of images as one grid (up to 8 per row)."""
        self._get_file_writer().add_summary(summaries.image(tag, img_tensor, dataformats), global_step, walltime)

    def add_figure(self, tag: str, figure, global_step=None, close: bool = True, walltime=None) -> None:
        """Log a matplotlib figure (or a list of them, as one grid) rendered to an image."""
        if isinstance(figure, list):
            images = np.stack([figure_to_chw(f, close) for f in figure])
            self.add_images(tag, images, global_step, walltime, dataformats="NCHW")
        else:
            self.add_image(tag, figure_to_chw(figure, close), global_step, walltime, dataformats="CHW")

    def add_audio(self, tag: str, snd_tensor, global_step=None, sample_rate: int = 44100, walltime=None) -> None:
        """Log a mono sound clip: samples in [-1, 1] (clipped), written as 16-bit WAV."""
        self._get_file_writer().add_summary(summaries.audio(tag, snd_tensor, sample_rate), global_step, walltime)

    def add_custom_scalars(self, layout: dict) -> None:
        """Lay out the Custom Scalars dashboard: ``{category: {chart: ["Multiline", [tag regexes]]}}``
        (or ``["Margin", [value, lower, upper]]``)."""
        self._get_file_writer().add_summary(summaries.custom_scalars(layout))

    def add_text(self, tag: str, text_string: str, global_step=None, walltime=None) -> None:
        """Log markdown text (shown by the Text tab under ``<tag>/text_summary``)."""
        self._get_file_writer().add_summary(summaries.text(tag, text_string), global_step, walltime)

    # -- experiments ------------------------------------------------------------------------
    def add_hparams(self, hparam_dict: dict, metric_dict: dict, hparam_domain_discrete=None, run_name=None,
                    global_step=None) -> None:
        """Log one hyperparameter session and its metrics in the run ``<log_dir>/<run_name>``.

        ``run_name`` defaults to the current time. Metric values are logged as scalars there.
        Values may be numbers, strings, bools (logged as bools, where torch logs 0/1) or
        one-element tensors/arrays; ``hparam_domain_discrete`` maps a name to its possible values.
        """
        experiment, start, end = summaries.hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        run = os.path.join(self._get_file_writer().get_logdir(), run_name or str(time.time()))
        with SummaryWriter(log_dir=run) as session:
            for summary in (experiment, start, end):
                session.file_writer.add_summary(summary, global_step)
            for tag, value in metric_dict.items():
                session.add_scalar(tag, value, global_step)

    def add_embedding(self, mat, metadata=None, label_img=None, global_step=None, tag: str = "default",
                      metadata_header=None) -> None:
        """Write an embedding (rows of ``mat``) for the Projector, with optional labels and thumbnails."""
        write_embedding(self._get_file_writer().get_logdir(), self._projector_config, mat, metadata, label_img,
                        global_step, tag, metadata_header)

    def add_graph(self, model, input_to_model=None, verbose: bool = False, use_strict_trace: bool = True) -> None:
        """Log the graphs dynamo_lite captures for ``model(*input_to_model)`` (the Graphs tab).

        The model runs once eagerly (to learn module scopes) and once under ``dl.explain``
        with the eager backend, both in eval mode without grad; graph breaks appear as
        separate graphs joined by ``GraphBreak`` nodes that carry the reason.

        Args:
            model: a ``dl.nn.Module`` or a function.
            input_to_model: a tensor or a tuple/list of the positional arguments.
            verbose: print the GraphDef too.
            use_strict_trace: accepted for torch compatibility (dynamo_lite does not trace by jit).
        """
        if input_to_model is None:
            args = ()
        elif isinstance(input_to_model, (tuple, list)):
            args = tuple(input_to_model)
        else:
            args = (input_to_model,)
        graph, run_metadata = graph_def(capture(model, args))
        if verbose:
            print(graph)
        writer = self._get_file_writer()
        writer.add_graph(graph)
        writer.add_run_metadata(run_metadata, "step1")

    # -- lifetime -----------------------------------------------------------------------------
    def flush(self) -> None:
        """Write every queued event of every run of this writer to disk."""
        for writer in (self.all_writers or {}).values():
            writer.flush()

    def close(self) -> None:
        """Write everything and close the event files (logging again opens new ones)."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self) -> "SummaryWriter":
        return self

    def __exit__(self, exc_type, exc, traceback) -> None:
        self.close()
