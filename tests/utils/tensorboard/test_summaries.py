"""What SummaryWriter logs, read back with TensorBoard's own EventAccumulator: scalars, histograms, images,
text, hparams, PR curves, embeddings, and the errors torch raises for bad values."""
import os
import re
import socket

import numpy as np
import pytest

import dynamo_lite as dl

from .conftest import accumulate, decode_png, require_tensorboard

require_tensorboard()

from dynamo_lite.utils.tensorboard import SummaryWriter  # noqa: E402


def test_scalars_exact_from_numbers_arrays_and_tensors(tmp_path):
    values = [0.125, np.float64(2.5), np.array([3.75]), dl.tensor(-1.5), dl.tensor([[7.0]]), 3, True,
              dl.tensor(0.1, dtype=dl.float64)]
    with SummaryWriter(tmp_path) as writer:
        for step, value in enumerate(values):
            writer.add_scalar("loss/train", value, step, walltime=1000.0 + step)
    events = accumulate(tmp_path).Scalars("loss/train")
    assert [e.step for e in events] == list(range(len(values)))
    assert [e.wall_time for e in events] == [1000.0 + s for s in range(len(values))]
    # simple_value is a float32: each value read back is the float32 nearest the logged one.
    expected = [0.125, 2.5, 3.75, -1.5, 7.0, 3.0, 1.0, float(np.float32(0.1))]
    assert [e.value for e in events] == expected


def test_scalar_of_a_tensor_that_requires_grad(tmp_path):
    w = dl.ones(1, requires_grad=True)
    loss = (w * 3).sum()
    with SummaryWriter(tmp_path) as writer:
        writer.add_scalar("loss", loss, 0)
    assert accumulate(tmp_path).Scalars("loss")[0].value == 3.0


def test_new_style_scalars(tmp_path):
    from tensorboard.util import tensor_util
    with SummaryWriter(tmp_path) as writer:
        writer.add_scalar("a", 0.1, 1, new_style=True)
        writer.add_scalar("b", 0.1, 1, new_style=True, double_precision=True)
    acc = accumulate(tmp_path, plugins=True)
    assert set(acc.PluginTagToContent("scalars")) == {"a", "b"}
    assert tensor_util.make_ndarray(acc.Tensors("a")[0].tensor_proto) == np.float32(0.1)
    assert tensor_util.make_ndarray(acc.Tensors("b")[0].tensor_proto) == 0.1


def test_bad_scalars_raise_what_torch_raises(tmp_path):
    with SummaryWriter(tmp_path) as writer:
        with pytest.raises(AssertionError, match="scalar should be 0D"):
            writer.add_scalar("x", np.ones(3))
        with pytest.raises(NotImplementedError, match="numpy array or dl tensor"):
            writer.add_scalar("x", [1.0])


def test_add_scalars_writes_one_run_per_key(tmp_path):
    with SummaryWriter(tmp_path) as writer:
        for step in range(3):
            writer.add_scalars("loss/compare", {"eager": step * 1.0, "compiled": step * 2.0}, step)
    assert accumulate(tmp_path / "loss_compare_eager").Scalars("loss/compare")[2].value == 2.0
    assert [e.value for e in accumulate(tmp_path / "loss_compare_compiled").Scalars("loss/compare")] == [0, 2, 4]


def test_histogram_statistics_and_buckets(tmp_path):
    values = np.arange(10, dtype=np.float64)
    with SummaryWriter(tmp_path) as writer:
        writer.add_histogram("five", values, 0, bins=5)
        writer.add_histogram("merged", dl.from_numpy(values), 0, bins=10, max_bins=3)
        writer.add_histogram("tf", dl.randn(1000), 0)
        writer.add_histogram_raw("raw", 0, 9, 10, 45, 285, [3.0, 9.0], [4, 6], 0)
    acc = accumulate(tmp_path)
    five = acc.Histograms("five")[0].histogram_value
    assert (five.min, five.max, five.num, five.sum, five.sum_squares) == (0, 9, 10, 45, 285)
    # np.histogram(arange(10), 5): edges 0, 1.8, ..., 9, two values each; a leading empty
    # bucket carries the left edge (TensorBoard stores right edges only).
    assert five.bucket == [0, 2, 2, 2, 2, 2]
    assert np.allclose(five.bucket_limit, [0, 1.8, 3.6, 5.4, 7.2, 9])
    merged = acc.Histograms("merged")[0].histogram_value
    assert merged.bucket == [0, 4, 4, 2] and np.allclose(merged.bucket_limit, [0, 3.6, 7.2, 9])
    tf = acc.Histograms("tf")[0].histogram_value
    assert tf.num == 1000 and sum(tf.bucket) == 1000 and tf.bucket[0] == 0
    assert tf.bucket_limit[0] <= tf.min and tf.bucket_limit[-1] >= tf.max
    assert acc.Histograms("raw")[0].histogram_value.bucket == [4, 6]
    with SummaryWriter(tmp_path / "bad") as writer:
        with pytest.raises(ValueError, match="no element"):
            writer.add_histogram("empty", np.zeros(0))
        with pytest.raises(ValueError, match="len\\(bucket_limits\\)"):
            writer.add_histogram_raw("raw", 0, 1, 1, 1, 1, [1.0], [1, 2])


@pytest.mark.parametrize("shape, dataformats, size", [
    ((3, 6, 10), "CHW", (10, 6)), ((6, 10, 3), "HWC", (10, 6)), ((6, 10), "HW", (10, 6)), ((10, 6), "WH", (10, 6)),
    ((1, 6, 10), "CHW", (10, 6)), ((6, 10, 4), "HWC", (10, 6)),
])
def test_image_sizes_and_pixels(tmp_path, shape, dataformats, size):
    rng = np.random.default_rng(0)
    image = rng.random(shape, dtype=np.float32)
    with SummaryWriter(tmp_path) as writer:
        writer.add_image("img", dl.from_numpy(image), 3, dataformats=dataformats)
    event = accumulate(tmp_path).Images("img")[0]
    assert (event.width, event.height, event.step) == (*size, 3)
    pixels = decode_png(event.encoded_image_string)
    hwc = {"CHW": lambda a: a.transpose(1, 2, 0), "HWC": lambda a: a, "HW": lambda a: a[:, :, None],
           "WH": lambda a: a.T[:, :, None]}[dataformats](image)
    if hwc.shape[2] == 1:
        hwc = np.repeat(hwc, 3, axis=2)  # grey becomes RGB, as in torch
    assert pixels.shape == hwc.shape
    assert np.array_equal(pixels, np.clip(hwc * 255, 0, 255).astype(np.uint8))


def test_uint8_images_are_not_rescaled_and_batches_make_a_grid(tmp_path):
    batch = np.arange(10 * 3 * 4 * 5, dtype=np.uint8).reshape(10, 3, 4, 5)
    with SummaryWriter(tmp_path) as writer:
        writer.add_images("grid", batch, 0)
        writer.add_images("nhwc", batch.transpose(0, 2, 3, 1), 0, dataformats="NHWC")
    acc = accumulate(tmp_path)
    grid = acc.Images("grid")[0]
    assert (grid.width, grid.height) == (8 * 5, 2 * 4)  # 8 per row, two rows
    pixels = decode_png(grid.encoded_image_string)
    assert np.array_equal(pixels[4:8, 5:10], batch[9].transpose(1, 2, 0))  # image 9: row 1, column 1
    assert (pixels[4:8, 10:] == 0).all()  # the rest of the last row is blank
    assert acc.Images("nhwc")[0].encoded_image_string == grid.encoded_image_string


def test_bad_image_layouts_raise(tmp_path):
    with SummaryWriter(tmp_path) as writer:
        with pytest.raises(AssertionError, match="size of input tensor and input format are different"):
            writer.add_image("img", np.zeros((3, 4, 5, 6)), dataformats="CHW")
        with pytest.raises(AssertionError, match="same dimension shorthand twice"):
            writer.add_image("img", np.zeros((3, 4, 5)), dataformats="CHH")


def test_figure(tmp_path):
    matplotlib = pytest.importorskip("matplotlib", reason="matplotlib is not installed (add_figure needs it)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    figure = plt.figure(figsize=(2, 1), dpi=50)
    figure.gca().plot([0, 1], [1, 0])
    figures = [plt.figure(figsize=(1, 1), dpi=40) for _ in range(3)]
    with SummaryWriter(tmp_path) as writer:
        writer.add_figure("fig", figure, 0)
        writer.add_figure("figs", figures, 0, close=False)
    acc = accumulate(tmp_path)
    image = acc.Images("fig")[0]
    assert (image.width, image.height) == (100, 50)
    assert not plt.fignum_exists(figure.number)  # closed, as close=True asks
    assert (acc.Images("figs")[0].width, acc.Images("figs")[0].height) == (120, 40)
    assert all(plt.fignum_exists(f.number) for f in figures)
    pixels = decode_png(image.encoded_image_string)
    assert (pixels != 255).any() and (pixels == 255).any()  # a line on white
    plt.close("all")


def test_text(tmp_path):
    with SummaryWriter(tmp_path) as writer:
        writer.add_text("notes", "**loss** went down: ünïcode", 4)
    acc = accumulate(tmp_path, plugins=True)
    assert "notes/text_summary" in acc.PluginTagToContent("text")
    event = acc.Tensors("notes/text_summary")[0]
    assert event.step == 4 and event.tensor_proto.string_val == ["**loss** went down: ünïcode".encode()]


def test_hparams(tmp_path):
    from tensorboard.plugins.hparams import api_pb2, plugin_data_pb2
    with SummaryWriter(tmp_path) as writer:
        writer.add_hparams({"lr": 0.01, "batch": 32, "optimizer": "adamw", "amsgrad": False, "decay": dl.tensor(0.5)},
                           {"hparam/accuracy": 0.75, "hparam/loss": dl.tensor(0.25)},
                           hparam_domain_discrete={"optimizer": ["adamw", "sgd"]}, run_name="trial")
    acc = accumulate(tmp_path / "trial", plugins=True)
    content = acc.PluginTagToContent("hparams")
    assert set(content) == {"_hparams_/experiment", "_hparams_/session_start_info", "_hparams_/session_end_info"}
    experiment = plugin_data_pb2.HParamsPluginData.FromString(content["_hparams_/experiment"]).experiment
    infos = {i.name: i for i in experiment.hparam_infos}
    assert infos["lr"].type == api_pb2.DATA_TYPE_FLOAT64 and infos["optimizer"].type == api_pb2.DATA_TYPE_STRING
    assert infos["amsgrad"].type == api_pb2.DATA_TYPE_BOOL
    assert [v.string_value for v in infos["optimizer"].domain_discrete.values] == ["adamw", "sgd"]
    assert [m.name.tag for m in experiment.metric_infos] == ["hparam/accuracy", "hparam/loss"]
    start = plugin_data_pb2.HParamsPluginData.FromString(content["_hparams_/session_start_info"]).session_start_info
    assert start.hparams["lr"].number_value == 0.01 and start.hparams["batch"].number_value == 32
    assert start.hparams["optimizer"].string_value == "adamw" and start.hparams["amsgrad"].bool_value is False
    assert start.hparams["decay"].number_value == 0.5
    end = plugin_data_pb2.HParamsPluginData.FromString(content["_hparams_/session_end_info"]).session_end_info
    assert end.status == api_pb2.STATUS_SUCCESS
    scalars = accumulate(tmp_path / "trial")
    assert scalars.Scalars("hparam/accuracy")[0].value == 0.75 and scalars.Scalars("hparam/loss")[0].value == 0.25


def test_bad_hparams_raise(tmp_path):
    with SummaryWriter(tmp_path) as writer:
        with pytest.raises(TypeError, match="should be dictionary"):
            writer.add_hparams([("lr", 1)], {})
        with pytest.raises(TypeError, match="same type"):
            writer.add_hparams({"lr": 0.1}, {}, hparam_domain_discrete={"lr": ["a"]})
        with pytest.raises(ValueError, match="should be one of int, float, str, bool"):
            writer.add_hparams({"lr": [0.1]}, {})


def test_pr_curve_counts_by_threshold(tmp_path):
    from tensorboard.util import tensor_util
    labels = dl.tensor([1, 0, 1, 1])
    predictions = np.array([0.9, 0.8, 0.3, 0.1])
    with SummaryWriter(tmp_path) as writer:
        writer.add_pr_curve("pr", labels, predictions, 2, num_thresholds=3)
    acc = accumulate(tmp_path, plugins=True)
    assert "pr" in acc.PluginTagToContent("pr_curves")
    data = tensor_util.make_ndarray(acc.Tensors("pr")[0].tensor_proto)
    # Worked by hand from the definition: thresholds 0, 0.5, 1; a prediction >= threshold is positive.
    # t=0: all positive (TP 3, FP 1); t=0.5: 0.9 and 0.8 (TP 1, FP 1, FN 2); t=1: none (TN 1, FN 3).
    expected = [[3, 1, 0], [1, 1, 0], [0, 0, 1], [0, 2, 3], [0.75, 0.5, 0], [1, 1 / 3, 0]]
    assert data.shape == (6, 3) and np.allclose(data, expected)


def test_embedding_files_for_the_projector(tmp_path):
    from google.protobuf import text_format
    from tensorboard.plugins.projector.projector_config_pb2 import ProjectorConfig
    mat = np.arange(12, dtype=np.float32).reshape(4, 3)
    images = np.ones((4, 3, 2, 2), dtype=np.float32)
    with SummaryWriter(tmp_path) as writer:
        writer.add_embedding(dl.from_numpy(mat), metadata=["a", "b", "c", "d"], label_img=images, global_step=7,
                             tag="words")
        writer.add_embedding(mat, metadata=[[1, "x"], [2, "y"], [3, "z"], [4, "w"]], metadata_header=["n", "s"])
    config = text_format.Parse((tmp_path / "projector_config.pbtxt").read_text(), ProjectorConfig())
    assert [e.tensor_name for e in config.embeddings] == ["words:00007", "default:00000"]
    first = config.embeddings[0]
    assert first.tensor_path == "00007/words/tensors.tsv" and first.metadata_path == "00007/words/metadata.tsv"
    assert first.sprite.image_path == "00007/words/sprite.png" and list(first.sprite.single_image_dim) == [2, 2]
    rows = [[float(x) for x in line.split("\t")] for line in (tmp_path / first.tensor_path).read_text().splitlines()]
    assert rows == mat.tolist()
    assert (tmp_path / first.metadata_path).read_text() == "a\nb\nc\nd\n"
    assert (tmp_path / "00000/default/metadata.tsv").read_text() == "n\ts\n1\tx\n2\ty\n3\tz\n4\tw\n"
    sprite = decode_png((tmp_path / first.sprite.image_path).read_bytes())
    assert sprite.shape == (4, 4, 3) and (sprite == 255).all()  # 2x2 grid of 2x2 white images
    with SummaryWriter(tmp_path / "bad") as writer:
        with pytest.raises(AssertionError, match="#labels should equal"):
            writer.add_embedding(mat, metadata=["a"])
        with pytest.raises(AssertionError, match="mat should be 2D"):
            writer.add_embedding(np.zeros(3))


def test_default_logdir_comment_and_suffix(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    writer = SummaryWriter(comment="_lr0.1", filename_suffix=".v2")
    writer.close()
    folder = writer.get_logdir()
    host = re.escape(socket.gethostname())
    assert re.fullmatch(rf"runs/[A-Z][a-z]{{2}}\d{{2}}_\d{{2}}-\d{{2}}-\d{{2}}_{host}_lr0\.1", folder)
    names = os.listdir(folder)
    assert len(names) == 1 and re.fullmatch(rf"events\.out\.tfevents\.\d{{10}}\.{host}\.{os.getpid()}\.\d+\.v2",
                                           names[0])


def test_purge_step_drops_the_orphaned_steps(tmp_path):
    with SummaryWriter(tmp_path) as first:
        for step in range(10):
            first.add_scalar("loss", float(step), step)
    with SummaryWriter(tmp_path, purge_step=5) as restarted:
        for step in range(5, 8):
            restarted.add_scalar("loss", 100.0 + step, step)
    events = accumulate(tmp_path).Scalars("loss")
    assert [(e.step, e.value) for e in events] == [(s, float(s)) for s in range(5)] + [(s, 100.0 + s) for s in
                                                                                       range(5, 8)]


def test_logging_after_close_opens_a_new_event_file(tmp_path):
    writer = SummaryWriter(tmp_path)
    writer.add_scalar("x", 1.0, 0)
    writer.close()
    writer.close()  # twice is fine
    writer.add_scalar("x", 2.0, 1)
    writer.close()
    assert len(os.listdir(tmp_path)) == 2
    assert [e.value for e in accumulate(tmp_path).Scalars("x")] == [1.0, 2.0]



def test_audio_is_a_16_bit_wav(tmp_path):
    import io
    import wave
    samples = np.sin(np.linspace(0, 20, 800)) * 1.5  # beyond [-1, 1]: clipped
    with SummaryWriter(tmp_path) as writer:
        writer.add_audio("tone", dl.from_numpy(samples[None, :]), 2, sample_rate=8000)
    clip = accumulate(tmp_path).Audio("tone")[0]
    assert (clip.step, clip.sample_rate, clip.length_frames, clip.content_type) == (2, 8000, 800, "audio/wav")
    with wave.open(io.BytesIO(clip.encoded_audio_string)) as wav:
        assert (wav.getnchannels(), wav.getsampwidth(), wav.getframerate()) == (1, 2, 8000)
        pcm = np.frombuffer(wav.readframes(800), "<i2")
    assert np.array_equal(pcm, (np.clip(samples, -1, 1) * 32767).astype(np.int16))
    with SummaryWriter(tmp_path / "bad") as writer:
        with pytest.raises(AssertionError, match="1 dimensional"):
            writer.add_audio("stereo", np.zeros((2, 10)))


def test_custom_scalars_layout(tmp_path):
    from tensorboard.plugins.custom_scalar import layout_pb2
    layout = {"Losses": {"loss": ["Multiline", ["loss/train", "loss/val"]]},
              "Bands": {"acc": ["Margin", ["acc", "acc_low", "acc_high"]]}}
    with SummaryWriter(tmp_path) as writer:
        writer.add_custom_scalars(layout)
    acc = accumulate(tmp_path, plugins=True)
    assert "custom_scalars__config__" in acc.PluginTagToContent("custom_scalars")
    proto = layout_pb2.Layout.FromString(acc.Tensors("custom_scalars__config__")[0].tensor_proto.string_val[0])
    assert [c.title for c in proto.category] == ["Losses", "Bands"]
    assert list(proto.category[0].chart[0].multiline.tag) == ["loss/train", "loss/val"]
    series = proto.category[1].chart[0].margin.series[0]
    assert (series.value, series.lower, series.upper) == ("acc", "acc_low", "acc_high")
