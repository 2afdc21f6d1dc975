"""The graph IR: Nodes in a Graph, compiled by GraphModule, run by Interpreter."""
from .graph import Graph
from .graph_module import GraphModule
from .interpreter import Interpreter
from .lint import LintError
from .node import IR_OPS, Node, map_aggregate, map_arg
from .shape_prop import ShapeProp

__all__ = ["Graph", "GraphModule", "IR_OPS", "Interpreter", "LintError", "Node", "ShapeProp", "map_aggregate", "map_arg"]
