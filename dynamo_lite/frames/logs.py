"""The loggers of the compiler frontend (switched by ``DYNAMO_LITE_LOGS``, see ``dynamo_lite.config``)."""
from __future__ import annotations

import logging

log = logging.getLogger("dynamo_lite")  # warnings and internal errors; always on at WARNING
bytecode_log = logging.getLogger("dynamo_lite.bytecode")  # instrumented / transformed code
graph_log = logging.getLogger("dynamo_lite.graph")  # captured graphs
guards_log = logging.getLogger("dynamo_lite.guards")  # guards of each entry
recompiles_log = logging.getLogger("dynamo_lite.recompiles")  # each recompile, with the failed guard
graph_breaks_log = logging.getLogger("dynamo_lite.graph_breaks")  # graph breaks and eager fallbacks
dynamic_log = logging.getLogger("dynamo_lite.dynamic")  # size symbols made, specialized, loops scanned
