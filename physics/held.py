"""Records held inside numba between compiled calls (docs/architecture.md#held-records).

A batch of steps (dynamics/batch.py) is one compiled call, and at a step a call most of its
price was numba's, not the step's: numba takes in each array argument (its type recognised,
its buffer wrapped) and hands each array it returns back to Python as a new object. The
model's records and what one step hands the next are some 120 arrays, and only compiled code
reads them between steps. Each is kept in a numba structure (a ``structref``), which crosses
into a kernel as one object and is edited there in place: nothing of it is handed back.
Python reads a field through the proxy (one compiled call each) and replaces a structure
whole; it never edits one.
"""

from __future__ import annotations

from numba import njit
from numba.core import types
from numba.experimental import structref


def _plain_fields(fields):
    """Field types as numba stores them: a literal (a constant a structure was made with)
    stands for its type, so a kernel may store any value of that type."""
    return tuple((name, types.unliteral(kind)) for name, kind in fields)


@structref.register
class ModelRecordsType(types.StructRef):
    """numba's type of a ``ModelRecords``."""

    def preprocess_fields(self, fields):
        return _plain_fields(fields)


@structref.register
class StepRecordsType(types.StructRef):
    """numba's type of a ``StepRecords``."""

    def preprocess_fields(self, fields):
        return _plain_fields(fields)


class ModelRecords(structref.StructRefProxy):
    """A ``Model``'s records as the batch reads them: collision the ``CollisionSet`` and bodies
    the ``BodyModel``, nested plain tuples of the model's own arrays (an edit of one in place
    shows here). Made again whenever the model makes those records again
    (``Model.batch_records``)."""

    def __new__(cls, collision, bodies):
        return _model_records(collision, bodies)


class _Field:
    """One field of a ``StepRecords`` read from Python (all come out: one compiled call)."""

    def __set_name__(self, owner, name):
        self.index = owner.FIELDS.index(name)

    def __get__(self, records, owner=None):
        return self if records is None else _step_fields(records)[self.index]


class StepRecords(structref.StructRefProxy):
    """What one step hands the next besides the bodies' state, which only compiled code reads:
    cache the warm start (``ContactCache``); swept the broad phase's kept pairs
    (``SweptPairs``); manifolds, piece_manifolds the kept manifolds of body and piece pairs
    (``ManifoldCache``); pairs (first, second) (p,) int64 the ids that pressed together, kept
    for sleeping islands; point, normal (k, 3) and acted (k,) bool the last step's contacts.
    A batch stores its end records into the fields; Python makes a new one from ``values``.
    Copied and pickled by value, with the state it belongs to."""

    FIELDS = ("cache", "swept", "manifolds", "piece_manifolds", "pairs", "point", "normal",
              "acted")

    def __new__(cls, cache, swept, manifolds, piece_manifolds, pairs, point, normal, acted):
        return _step_records(cache, swept, manifolds, piece_manifolds, pairs, point, normal,
                             acted)

    def values(self) -> dict:
        """The fields by name, as Python objects (sharing the arrays; one compiled call)."""
        return dict(zip(self.FIELDS, _step_fields(self)))

    def last_contacts(self) -> tuple:
        """(point, normal, acted): the last step's contacts alone, as a snapshot reads them
        (a third of the price of ``values``)."""
        return _contact_fields(self)

    def __reduce__(self):
        return StepRecords, _step_fields(self)

    cache, swept, manifolds, piece_manifolds = _Field(), _Field(), _Field(), _Field()
    pairs, point, normal, acted = _Field(), _Field(), _Field(), _Field()


structref.define_proxy(ModelRecords, ModelRecordsType, ["collision", "bodies"])
structref.define_proxy(StepRecords, StepRecordsType, list(StepRecords.FIELDS))


# numba's own proxy constructor compiles afresh in each process: these are cached


@njit(cache=True)
def _model_records(collision, bodies):
    return ModelRecords(collision, bodies)


@njit(cache=True)
def _step_records(cache, swept, manifolds, piece_manifolds, pairs, point, normal, acted):
    return StepRecords(cache, swept, manifolds, piece_manifolds, pairs, point, normal, acted)


@njit(cache=True)
def _step_fields(records):
    return (records.cache, records.swept, records.manifolds, records.piece_manifolds,
            records.pairs, records.point, records.normal, records.acted)


@njit(cache=True)
def _contact_fields(records):
    return records.point, records.normal, records.acted
