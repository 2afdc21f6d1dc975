"""add_graph: the graphs dynamo_lite captures, as TensorBoard reads them (ops, shapes, dtypes, module scopes,
parameters, graph breaks with their reasons), without changing the model or its training."""
import numpy as np

import dynamo_lite as dl
import dynamo_lite.nn as nn
import dynamo_lite.nn.functional as F

from .conftest import accumulate, require_tensorboard

require_tensorboard()

from dynamo_lite.utils.tensorboard import SummaryWriter  # noqa: E402


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 8), nn.ReLU())
        self.drop = nn.Dropout(0.5)
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        return F.softmax(self.head(self.drop(self.body(x))), dim=-1)


class Breaking(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 2)

    def forward(self, x):
        h = self.fc1(x).tanh()
        print("between graphs")
        return self.fc2(h)


def logged_graph(tmp_path, model, inputs):
    with SummaryWriter(tmp_path) as writer:
        writer.add_graph(model, inputs)
    acc = accumulate(tmp_path)
    return acc, {node.name: node for node in acc.Graph().node}


def shapes(node) -> list:
    return [[d.size for d in s.dim] for s in node.attr["_output_shapes"].list.shape]


def test_ops_scopes_shapes_and_parameters(tmp_path):
    from tensorboard.compat.proto.types_pb2 import DT_FLOAT
    model = Net()
    acc, nodes = logged_graph(tmp_path, model, dl.randn(5, 4))
    assert "step1" in acc.Tags()["run_metadata"]
    linear0 = nodes["Net/Sequential[body]/Linear[0]/linear"]
    assert linear0.op == "linear" and shapes(linear0) == [[5, 8]] and linear0.attr["dtype"].type == DT_FLOAT
    assert list(linear0.input) == ["input/x", "Net/Sequential[body]/Linear[0]/weight",
                                   "Net/Sequential[body]/Linear[0]/bias"]
    assert nodes["Net/Sequential[body]/ReLU[1]/relu"].input == ["Net/Sequential[body]/Linear[0]/linear"]
    weight = nodes["Net/Linear[head]/weight"]
    assert weight.op == "Parameter" and shapes(weight) == [[3, 8]]
    assert weight.attr["parameter"].s == b"head.weight"
    softmax = [n for n in nodes.values() if n.op == "softmax"]
    assert len(softmax) == 1 and softmax[0].name.startswith("Net/") and shapes(softmax[0]) == [[5, 3]]
    assert softmax[0].attr["args"].s == b"1"  # the captured node holds dim normalized, positionally
    assert nodes["output/output_0"].input == [softmax[0].name]
    assert not [n for n in nodes.values() if n.op == "dropout"]  # eval mode, as torch's add_graph
    assert not [n for n in nodes.values() if n.op == "GraphBreak"]


def test_graph_breaks_are_separate_graphs_with_their_reason(tmp_path, capsys):
    acc, nodes = logged_graph(tmp_path, Breaking(), dl.randn(3, 4))
    ops = {name: node.op for name, node in nodes.items()}
    assert ops["graph_0/Breaking/Linear[fc1]/linear"] == "linear"
    assert ops["graph_1/Breaking/Linear[fc2]/linear"] == "linear"
    (tanh,) = [n for n in ops if n.startswith("graph_0/") and ops[n] == "tanh"]
    brk = nodes["graph_break_0"]
    assert brk.op == "GraphBreak" and b"print()" in brk.attr["reason"].s
    assert brk.attr["location"].s.decode().endswith(f"test_graph.py:{Breaking.forward.__code__.co_firstlineno + 2}")
    assert list(brk.input) == ["^graph_0/output"]
    # The second graph's input is the first graph's tanh, through the break.
    (placeholder,) = [n for n in nodes.values() if n.name.startswith("graph_1/") and n.op == "Placeholder"]
    assert list(placeholder.input) == [tanh, "^graph_break_0"]
    assert nodes["graph_0/x"].input == ["input/x"]
    assert nodes["output/output_0"].input == ["graph_1/Breaking/Linear[fc2]/linear"]
    assert capsys.readouterr().out.count("between graphs") == 2  # one eager run, one captured run


def test_a_function_and_several_inputs(tmp_path):
    def attention(q, k):
        return (q @ k.transpose(-2, -1)).softmax(-1)

    _, nodes = logged_graph(tmp_path, attention, (dl.randn(2, 3), dl.randn(4, 3)))
    assert {"input/q", "input/k"} <= set(nodes)
    ops = [n.op for n in nodes.values()]
    assert "matmul" in ops and "softmax" in ops
    matmul = next(n for n in nodes.values() if n.op == "matmul")
    assert matmul.name.startswith("attention/") and shapes(matmul) == [[2, 4]]


def test_add_graph_leaves_the_model_and_its_training_alone(tmp_path):
    model = Net()
    model.train()
    model.body[1].eval()  # a module of its own mode inside a training model keeps it
    x = dl.randn(5, 4)
    state = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    dl.manual_seed(7)
    expected_next = dl.rand(3).numpy()
    dl.manual_seed(7)
    with SummaryWriter(tmp_path) as writer:
        writer.add_graph(model, x)
    assert [m.training for m in model.modules()] == [True, True, True, False, True, True]
    assert np.array_equal(dl.rand(3).numpy(), expected_next)  # the RNG stream is where it was
    assert all(np.array_equal(v.detach().numpy(), state[k]) for k, v in model.state_dict().items())
    assert not model._forward_hooks and not model.body[0]._forward_pre_hooks
    graphs = dl.stats().graph_count
    model(x)  # an eager call after add_graph runs eagerly: nothing is compiled for it
    assert dl.stats().graph_count == graphs
    model.eval()
    dl.reset()
    compiled = dl.compile(model)
    assert np.allclose(compiled(x).detach().numpy(), model(x).detach().numpy())


def test_batchnorm_statistics_are_not_updated(tmp_path):
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU())
    before = model[1].running_mean.numpy().copy()
    _, nodes = logged_graph(tmp_path, model, dl.randn(2, 3, 8, 8))
    assert np.array_equal(model[1].running_mean.numpy(), before)
    scoped = {n.name.rsplit("/", 1)[0] for n in nodes.values() if n.op not in ("IO Node",)}
    assert {"Sequential/Conv2d[0]", "Sequential/BatchNorm2d[1]", "Sequential/ReLU[2]"} <= scoped
    assert nodes["Sequential/BatchNorm2d[1]/running_mean"].op == "Buffer"

