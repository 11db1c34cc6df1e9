import numpy as np

from physics.dynamics.warmstart import ContactCache


def test_stored_impulses_are_found_by_key_and_new_keys_get_zero():
    rng = np.random.default_rng(1)
    # wall keys are ≥ 0, body-pair keys < 0 (collision/walls.py, collision/narrowphase.py);
    # clustered like real ids
    keys = np.concatenate((np.arange(0, 5000, 7), -1 - (np.arange(300) << 21)))
    impulses = rng.normal(size=(len(keys), 3))
    keep = rng.random(len(keys)) < 0.7
    cache = ContactCache.of(keys, impulses, keep)
    assert len(cache.keys) >= 2 * keep.sum() and cache.used.sum() == keep.sum()
    asked = np.concatenate((keys, [1, -2, 10**12]))[::-1]
    found = cache.impulses_of(asked)
    expected = np.zeros((len(asked), 3))
    expected[len(asked) - len(keys):] = np.where(keep[:, None], impulses, 0.0)[::-1]
    assert np.array_equal(found, expected)


def test_an_empty_cache_gives_zeros():
    assert np.array_equal(ContactCache().impulses_of(np.array([0, 5, -3])), np.zeros((3, 3)))
    nothing = ContactCache.of(np.array([4]), np.ones((1, 3)), np.array([False]))
    assert np.array_equal(nothing.impulses_of(np.array([4])), np.zeros((1, 3)))
