"""Module version tags: every covered mutation retags the module and all its ancestors."""
import copy
import pickle
from collections import OrderedDict

import pytest

import dynamo_lite as dl
from dynamo_lite import nn
from dynamo_lite.nn.versioning import REBINDS


class Leaf(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(dl.randn(3))
        self.register_buffer("stat", dl.zeros(3))
        self.scale = 2.0

    def forward(self, x):
        return x * self.weight * self.scale


class Tree(nn.Module):
    """root -> blocks (ModuleList) -> Leaf, and root -> heads (ModuleDict) -> Leaf, root -> seq."""

    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Leaf(), Leaf()])
        self.heads = nn.ModuleDict({"a": Leaf()})
        self.seq = nn.Sequential(Leaf(), nn.Dropout(0.5))


def _tag(module):
    return module.__dict__["_version_tag"]


# Each mutation is applied to a fresh tree; the root's tag and the touched module's tag
# must both change (the tag is what guards compare: NOTE: [module version tags]).
MUTATIONS = {
    "setattr parameter": lambda t: (t.blocks[0], setattr(t.blocks[0], "weight", nn.Parameter(dl.randn(3)))),
    "setattr parameter to None": lambda t: (t.blocks[0], setattr(t.blocks[0], "weight", None)),
    "setattr buffer": lambda t: (t.blocks[1], setattr(t.blocks[1], "stat", dl.ones(3))),
    "setattr submodule": lambda t: (t.heads["a"], setattr(t.heads["a"], "inner", Leaf())),
    "setattr plain attribute": lambda t: (t.blocks[0], setattr(t.blocks[0], "scale", 0.5)),
    "new plain attribute": lambda t: (t.seq, setattr(t.seq, "note", "x")),
    "delattr parameter": lambda t: (t.blocks[0], delattr(t.blocks[0], "weight")),
    "delattr buffer": lambda t: (t.blocks[0], delattr(t.blocks[0], "stat")),
    "delattr plain attribute": lambda t: (t.blocks[0], delattr(t.blocks[0], "scale")),
    "delattr submodule": lambda t: (t, delattr(t, "heads")),
    "register_parameter": lambda t: (t.blocks[1], t.blocks[1].register_parameter("extra", nn.Parameter(dl.ones(1)))),
    "register_buffer": lambda t: (t.blocks[1], t.blocks[1].register_buffer("extra", dl.ones(1), persistent=False)),
    "add_module": lambda t: (t.heads, t.heads.add_module("b", Leaf())),
    "register_module": lambda t: (t.heads, t.heads.register_module("b", None)),
    "train(False) on a child": lambda t: (t.seq[1], t.seq[1].train(False)),
    "eval() on the root": lambda t: (t.seq[1], t.eval()),
    "to(float64)": lambda t: (t.blocks[0], t.to(dl.float64)),
    "double()": lambda t: (t.heads["a"], t.double()),
    "half()": lambda t: (t.heads["a"], t.half()),
    "float() on a child": lambda t: (t.blocks[1], t.blocks[1].float()),
    "load_state_dict(assign=True)": lambda t: (t.blocks[0], t.load_state_dict(Tree().state_dict(), assign=True)),
    "ModuleList[i] = m": lambda t: (t.blocks, t.blocks.__setitem__(1, Leaf())),
    "del ModuleList[i]": lambda t: (t.blocks, t.blocks.__delitem__(0)),
    "del ModuleList[slice]": lambda t: (t.blocks, t.blocks.__delitem__(slice(0, 1))),
    "ModuleList.append": lambda t: (t.blocks, t.blocks.append(Leaf())),
    "ModuleList.extend": lambda t: (t.blocks, t.blocks.extend([Leaf()])),
    "ModuleList.insert": lambda t: (t.blocks, t.blocks.insert(0, Leaf())),
    "ModuleList.pop": lambda t: (t.blocks, t.blocks.pop(0)),
    "ModuleList +=": lambda t: (t.blocks, t.blocks.__iadd__(nn.ModuleList([Leaf()]))),
    "Sequential[i] = m": lambda t: (t.seq, t.seq.__setitem__(0, Leaf())),
    "del Sequential[i]": lambda t: (t.seq, t.seq.__delitem__(1)),
    "Sequential.append": lambda t: (t.seq, t.seq.append(nn.ReLU())),
    "ModuleDict[k] = m": lambda t: (t.heads, t.heads.__setitem__("a", Leaf())),
    "del ModuleDict[k]": lambda t: (t.heads, t.heads.__delitem__("a")),
    "ModuleDict.pop": lambda t: (t.heads, t.heads.pop("a")),
    "ModuleDict.clear": lambda t: (t.heads, t.heads.clear()),
    "ModuleDict.update": lambda t: (t.heads, t.heads.update({"c": Leaf()})),
}


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_mutation_retags_the_module_and_the_root(name):
    tree = Tree()
    before = _tag(tree)
    touched, _ = MUTATIONS[name](tree)
    assert _tag(tree) != before, f"{name}: the root's tag did not change"
    # Tags only grow, and a root's is the newest of its subtree: the touched module got a new one.
    assert _tag(touched) > before, f"{name}: the touched module's tag did not change"


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_mutation_does_not_retag_unrelated_trees(name):
    tree, other = Tree(), Tree()
    before = _tag(other)
    MUTATIONS[name](tree)
    assert _tag(other) == before


def test_reads_and_same_object_assignments_keep_the_tag():
    tree = Tree()
    before = _tag(tree)
    list(tree.parameters()), tree.state_dict(), tree.blocks[0].scale, repr(tree)
    tree.train()  # already training: every `training = True` assigns the same object
    tree.blocks[0].scale = tree.blocks[0].scale
    assert _tag(tree) == before


def test_in_place_loading_changes_values_only():
    tree = Tree()
    before, rebinds = _tag(tree), REBINDS.count
    tree.load_state_dict(Tree().state_dict())  # copies into the same tensors: graphs read them at run time
    assert (_tag(tree), REBINDS.count) == (before, rebinds)


def test_parameter_rebinding_is_counted():
    leaf = Leaf()
    before = REBINDS.count
    leaf.weight.data = dl.randn(3, dtype=dl.float64)
    assert REBINDS.count == before + 1
    leaf.to(dl.float32)
    assert REBINDS.count == before + 2
    with dl.no_grad():  # in place on a parameter that requires grad
        leaf.weight.add_(1)  # values only: graphs read them when they run
    assert REBINDS.count == before + 2


def test_shared_child_retags_every_parent():
    shared = Leaf()
    a, b = nn.Sequential(shared), nn.Sequential(OrderedDict(x=shared))
    tags = _tag(a), _tag(b)
    shared.scale = 3.0
    assert _tag(a) != tags[0] and _tag(b) != tags[1]


def test_a_removed_child_may_retag_its_former_parent_but_its_new_one_always():
    child = Leaf()
    old, new = nn.ModuleList([child]), nn.ModuleList()
    del old[0]
    new.append(child)
    before = _tag(new)
    child.scale = 0.25
    assert _tag(new) != before


@pytest.mark.parametrize("clone", [copy.deepcopy, lambda m: pickle.loads(pickle.dumps(m))], ids=["deepcopy", "pickle"])
def test_copies_link_their_own_children(clone):
    tree = clone(Tree())
    before = _tag(tree)
    tree.blocks[1].scale = 7.0
    assert _tag(tree) != before
    original = Tree()
    copied = clone(original)
    before = _tag(original)
    copied.blocks[0].scale = 1.5
    assert _tag(original) == before, "a copy's mutation must not be linked to the original"
