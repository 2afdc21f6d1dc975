"""Lists, tuples, dicts and sets: TorchDynamo's test_functions.py container cases (``make_test``,
expected_frame_count 1) are one graph each, including collections built in the frame."""
from __future__ import annotations

import collections
import itertools

import dynamo_lite as dl

from tests.parity.harness import Case, cases_of, tensors

Pair = collections.namedtuple("Pair", ["left", "right"])
_TABLE = {"a": 1.0, "b": 2.0}


def p_list_append(x):
    out = []
    for i in range(3):
        out.append(x * i)
    return out


def p_list_comprehension(x):
    return [x + i for i in range(3)]


def p_dict_literal(x):
    d = {"a": x, "b": x * 2}
    return d["a"] + d["b"]


def p_dict_items_loop(x):
    total = x
    for key, value in {"p": 1.0, "q": 2.0}.items():
        total = total + value * len(key)
    return total


def p_dict_comprehension(x):
    return {f"k{i}": x * i for i in range(3)}


def p_tuple_unpack(x):
    a, b = x.chunk(2)
    return b, a


def p_star_unpack(x):
    first, *rest = x.unbind(0)
    return first + sum(rest)


def p_list_slicing(x):
    parts = [x, x * 2, x * 3, x * 4]
    return parts[1:3], parts[::-1][0]


def p_list_pop_insert(x):
    parts = [x, x + 1, x + 2]
    last = parts.pop()
    parts.insert(0, last)
    return parts


def p_dict_get_default(x):
    d = {"scale": 3}
    return x * d.get("scale", 1) + d.get("bias", 0)


def p_set_of_constants(x):
    seen = {1, 2, 3}
    return x * len(seen | {4})


def p_in_constant_list(x):
    return x + 1 if x.dim() in [1, 2] else x


def p_namedtuple_global(x):
    p = Pair(x, x * 2)
    return p.left + p.right, p


def p_namedtuple_field_access(x):
    p = Pair(left=x, right=3)
    return p._replace(right=4).right * p.left


def p_ordered_dict(x):
    d = collections.OrderedDict()
    d["z"] = x
    d["a"] = x + 1
    return list(d.values())


def p_dict_update_keys(x):
    d = {"a": x}
    d.update(b=x * 2)
    return [k for k in d], d


def p_global_dict_read(x):
    return x * _TABLE["b"]


def p_list_of_tensors_stack(x):
    return dl.stack([x, x * 2, x * 3]).sum(0)


def p_list_extend_mul(x):
    parts = [x] * 2
    parts.extend([x + 1])
    return dl.cat(parts)


def p_tuple_concat(x):
    shape = x.shape + (1,)
    return x.reshape(shape)


def p_mutate_list_argument(x, items):
    items.append(x * 2)
    return len(items)


def p_deque(x):
    q = collections.deque([x, x + 1])
    q.appendleft(x * 3)
    return q.pop() + q.popleft()


def p_defaultdict(x):
    d = collections.defaultdict(list)
    d["a"].append(x)
    d["a"].append(x * 2)
    return sum(d["a"])


def p_counter(x):
    counts = collections.Counter("aab")
    return x * counts["a"]


def p_itertools_product(x):
    out = x
    for i, j in itertools.product(range(2), range(2)):
        out = out + i * j
    return out


def p_itertools_chain(x):
    return sum(itertools.chain([x], [x * 2]))


def p_dict_fromkeys(x):
    d = dict.fromkeys(["a", "b"], 2)
    return x * d["a"]


def p_sorted_dict_keys(x):
    d = {"b": 2, "a": 1}
    return [x * d[k] for k in sorted(d)]


def p_zip_dict(x):
    d = dict(zip(["a", "b"], [x, x * 2]))
    return d["b"]


def p_enumerate_dict_values(x):
    out = x
    for i, v in enumerate({"a": 2, "b": 3}.values()):
        out = out + i * v
    return out


def p_nested_containers(x):
    tree = {"layer": [(x, 1), (x * 2, 2)]}
    return sum(t * k for t, k in tree["layer"])


def p_list_index_count(x):
    items = [3, 1, 3]
    return x * items.index(1) + items.count(3)


CASES = (cases_of({k: v for k, v in globals().items() if k != "p_mutate_list_argument"}, tensors((4, 4)))
         + [Case("mutate_list_argument", p_mutate_list_argument, lambda call: (tensors((4,))(call)[0], [1]))])
