"""Building and unpacking tuples, lists, dicts and strings."""
from __future__ import annotations

from ...errors import Unsupported
from ...tracing.variables.base import ConstantVariable
from ...tracing.variables.containers import ListVariable, TupleVariable
from ...tracing.variables.dicts import DictVariable, constant_key
from ...tracing.variables.exceptions import CONVERSIONS, RuntimeValueVariable, format_at_run_time, join_text
from ...tracing.variables.sets import SetMethodVariable, SetVariable
from .registry import handles


@handles("BUILD_TUPLE")
def build_tuple(tx, ins):
    tx.push(TupleVariable(tx.popn(ins.arg)))


@handles("BUILD_LIST")
def build_list(tx, ins):
    tx.push(ListVariable(tx.popn(ins.arg)))


def _key(variable, tx):
    return constant_key(variable, tx)  # a constant, or a key by identity (NOTE: [keys by identity])


@handles("BUILD_MAP")
def build_map(tx, ins):
    items = tx.popn(2 * ins.arg)
    tx.push(DictVariable({_key(k, tx): v for k, v in zip(items[::2], items[1::2])}))


@handles("BUILD_CONST_KEY_MAP")
def build_const_key_map(tx, ins):
    keys = tx.pop().as_python_constant()
    values = tx.popn(ins.arg)
    tx.push(DictVariable(dict(zip(keys, values))))


@handles("BUILD_SET")
def build_set(tx, ins):
    tx.push(SetVariable.of(tx.popn(ins.arg), tx=tx))


@handles("SET_ADD")
def set_add(tx, ins):
    value = tx.pop()
    SetMethodVariable(tx.stack[-ins.arg], "add").call(tx, [value], {})


@handles("SET_UPDATE")
def set_update(tx, ins):
    values = tx.pop()
    SetMethodVariable(tx.stack[-ins.arg], "update").call(tx, [values], {})


@handles("LIST_APPEND")
def list_append(tx, ins):
    value = tx.pop()
    target = tx.stack[-ins.arg]
    tx.output.side_effects.mutation(target)
    target.items.append(value)


@handles("LIST_EXTEND")
def list_extend(tx, ins):
    values = tx.pop().unpack(tx)
    target = tx.stack[-ins.arg]
    tx.output.side_effects.mutation(target)
    target.items.extend(values)


@handles("LIST_TO_TUPLE")
def list_to_tuple(tx, ins):
    tx.push(TupleVariable(tx.pop().unpack(tx)))


@handles("MAP_ADD")
def map_add(tx, ins):
    value = tx.pop()
    key = tx.pop()
    target = tx.stack[-ins.arg]
    tx.output.side_effects.mutation(target)
    target.items[_key(key, tx)] = value


@handles("DICT_UPDATE", "DICT_MERGE")
def dict_update(tx, ins):
    other = tx.pop()
    target = tx.stack[-ins.arg]
    if not isinstance(other, DictVariable):
        raise Unsupported("** unpacking of something that is not a dict")
    if ins.opname == "DICT_MERGE" and set(target.items) & set(other.items):
        raise Unsupported("duplicate keyword argument (raises TypeError in eager)")
    tx.output.side_effects.mutation(target)
    target.items.update(other.items)


@handles("UNPACK_SEQUENCE")
def unpack_sequence(tx, ins):
    items = tx.pop().unpack(tx)
    if len(items) != ins.arg:
        raise Unsupported(f"unpacking {len(items)} values into {ins.arg} names (raises ValueError in eager)")
    for item in reversed(items):
        tx.push(item)


@handles("UNPACK_EX")
def unpack_ex(tx, ins):
    before, after = ins.arg & 0xFF, ins.arg >> 8
    items = tx.pop().unpack(tx)
    if len(items) < before + after:
        raise Unsupported("not enough values to unpack (raises ValueError in eager)")
    middle = ListVariable(items[before:len(items) - after])
    for item in reversed(items[len(items) - after:]):
        tx.push(item)
    tx.push(middle)
    for item in reversed(items[:before]):
        tx.push(item)


def _format(value, spec: str, conversion: int = 0):
    if value.formats_at_run_time():
        return RuntimeValueVariable(format_at_run_time, [value.run_time_operand(), ConstantVariable(spec),
                                                          ConstantVariable(conversion)], str)
    if not value.is_python_constant():
        raise Unsupported("formatting a value that is not a Python constant (e.g. a tensor) into a string")
    return ConstantVariable(format(CONVERSIONS[conversion](value.as_python_constant()), spec))


@handles("FORMAT_VALUE")
def format_value(tx, ins):
    spec = tx.pop().as_python_constant() if ins.arg & 0x04 else ""
    tx.push(_format(tx.pop(), spec, ins.arg & 0x03))


@handles("FORMAT_SIMPLE")
def format_simple(tx, ins):
    tx.push(_format(tx.pop(), ""))


@handles("FORMAT_WITH_SPEC")
def format_with_spec(tx, ins):
    spec = tx.pop().as_python_constant()
    tx.push(_format(tx.pop(), spec))


@handles("CONVERT_VALUE")
def convert_value(tx, ins):
    tx.push(_format(tx.pop(), "", ins.arg))  # (formatting a string with no spec leaves it as it is)


@handles("BUILD_STRING")
def build_string(tx, ins):
    parts = tx.popn(ins.arg)
    if all(p.is_python_constant() for p in parts):
        tx.push(ConstantVariable("".join(p.as_python_constant() for p in parts)))
    else:  # a part formatted when the code runs (exceptions.RuntimeValueVariable)
        tx.push(RuntimeValueVariable(join_text, parts, str))
