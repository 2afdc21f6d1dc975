"""TensorBoard's own server reads what SummaryWriter wrote: scalar tags and values, and the graph, over HTTP."""
import json
import math

import dynamo_lite as dl
import dynamo_lite.nn as nn

from .conftest import require_tensorboard

require_tensorboard()

from dynamo_lite.utils.tensorboard import SummaryWriter  # noqa: E402


def test_server_lists_the_scalar_tags_and_serves_values_and_graph(tmp_path, tensorboard_server):
    logdir = tmp_path / "logs"
    with SummaryWriter(logdir / "eager") as writer:
        for step in range(20):
            writer.add_scalar("loss/train", math.exp(-step / 5), step)
        writer.add_scalar("lr", 0.01, 0)
        writer.add_graph(nn.Sequential(nn.Linear(4, 8), nn.Tanh()), dl.randn(2, 4))
    server = tensorboard_server(logdir)
    body = server.wait_for("/data/plugin/scalars/tags", lambda b: b"eager" in b)
    tags = json.loads(body)
    assert set(tags) == {"eager"} and set(tags["eager"]) == {"loss/train", "lr"}
    values = json.loads(server.get("/data/plugin/scalars/scalars?run=eager&tag=loss/train"))
    assert [step for _, step, _ in values] == list(range(20))
    assert all(abs(v - math.exp(-s / 5)) < 1e-6 for _, s, v in values)
    graph = server.get("/data/plugin/graphs/graph?run=eager&conceptual=false").decode()
    assert 'name: "Sequential/Linear[0]/linear"' in graph and 'op: "tanh"' in graph
