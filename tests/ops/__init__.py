"""Tests of the op registry and the ops built on it (a package, so module names stay unique)."""
