"""Comparing two worlds bit for bit: every array and number a step reads (the state with its
caches, the model, the joints), found by walking both objects side by side.

Two caches are left out: the model's hull and collision records (rebuilt from its arrays,
and held in numba for the batch) and the joints' tree factors, which a copied world starts
without by design (``FactorCache.__deepcopy__``): they are reused only for the very matrix
they were made from, so they never change a result."""

import dataclasses

import numpy as np

from physics.constraints.projection import FactorCache
from physics.held import StepRecords
from physics.world import World


def leaves(value, path: str = "world"):
    """(path, value) of every array, number, string and None reachable from ``value``."""
    if isinstance(value, np.ndarray):
        yield path, value
    elif isinstance(value, StepRecords):  # held in numba: its fields by name
        yield from leaves(value.values(), path)
    elif isinstance(value, dict):
        for key in sorted(value, key=repr):
            yield from leaves(value[key], f"{path}[{key!r}]")
    elif isinstance(value, (list, tuple)):
        yield path, len(value)
        for k, item in enumerate(value):
            yield from leaves(item, f"{path}[{k}]")
    elif dataclasses.is_dataclass(value) or hasattr(value, "__dict__"):
        for name, item in sorted(vars(value).items()):
            if (name in ("_hulls", "_world_hulls", "_collision", "_batch_records")
                    or isinstance(item, FactorCache)):
                continue
            yield from leaves(item, f"{path}.{name}")
    else:
        yield path, value


def assert_same_world(a: World, b: World) -> None:
    """Every leaf of the two worlds equal, arrays bit for bit (shape, dtype and bytes)."""
    left, right = list(leaves(a)), list(leaves(b))
    assert [p for p, _ in left] == [p for p, _ in right]
    for (path, x), (_, y) in zip(left, right):
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and x.shape == y.shape, path
            assert np.ascontiguousarray(x).tobytes() == np.ascontiguousarray(y).tobytes(), path
        elif isinstance(x, float) and np.isnan(x):
            assert isinstance(y, float) and np.isnan(y), path
        else:
            assert x == y, f"{path}: {x!r} != {y!r}"
