"""Exact normal impulses for islands whose masses differ widely (a heavy box on a light one).

Gauss–Seidel passes an impulse along a chain of contacts only as fast as the chain's masses
allow: floor → light box (mass m) → heavy box (mass M) converges by a factor M / (M + m) per
sweep, so at 1000 : 1 ten sweeps take 1 % of the heavy box's weight off the light one, the heavy
box sinks into it, and the position pass, which moves the light box (it has the larger inverse
mass), squeezes it out sideways. Warm starting does not help: the accumulated impulse grows by
those same 1 % a step while the penetration grows faster.

For such islands the normal impulses are solved as one linear complementarity problem instead:
with A (m, m) the Delassus matrix of the island's normal rows (the change of each contact's
normal velocity per unit impulse at each contact, both bodies' terms) and b (m,) each
contact's normal velocity with no normal impulse minus its speculative allowance −gap/h,

    λ ≥ 0,   w = A λ + b ≥ 0,   λ·w = 0,

by active sets (solve the rows of the contacts that push, drop those that would pull, add
those that would close, until none does); the four coplanar points of a face make A singular,
so a tiny multiple of its diagonal is added (the load is shared evenly between them, the
least-norm split). The solution replaces the warm start of those normal rows, and the usual
sweeps then run from it: friction, restitution and the clamps are theirs, as everywhere else;
they start where Gauss–Seidel would have converged to (docs/physics.md §Heavy on light).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from physics.dynamics.islands import island_labels

# Islands with a body–body contact whose masses differ by more than this are solved exactly;
# below it ten sweeps with warm starting hold a stack (tests/physics/test_stacks.py: 10 : 1)
STACK_MASS_RATIO = 5.0
# At most this many contacts are solved at once (the dense solve costs m³ / 3): a larger island
# is left to the sweeps alone
STACK_MAX_CONTACTS = 256
STACK_REGULARIZATION = 1e-12  # relative to A's diagonal: the least-norm split of a singular A
STACK_TOLERANCE = 1e-12      # m/s (plus 1e-9 of the largest |b|): a contact that closes slower is
# taken for apart, and the active-set search stops
STACK_MAX_PIVOTS = 32        # active-set rounds before the sweeps are left to do without


def stack_contacts(contacts, inv_mass) -> np.ndarray:
    """(s,) int64 ascending: the contacts of the islands that hold a body–body contact between
    masses more than ``STACK_MASS_RATIO`` apart, every contact of their bodies (walls too); empty
    when there are none or more than ``STACK_MAX_CONTACTS``. inv_mass (n,) 1/kg, 0 for a body
    held still (asleep), which links nothing, like a wall."""
    body, other = contacts.body, contacts.other
    pair = other >= 0
    if not pair.any():
        return np.zeros(0, dtype=np.int64)
    first, second = inv_mass[body[pair]], inv_mass[other[pair]]
    heavy = ((first > STACK_MASS_RATIO * second) | (second > STACK_MASS_RATIO * first)) & (
        first > 0.0) & (second > 0.0)
    if not heavy.any():
        return np.zeros(0, dtype=np.int64)
    moving = pair & (inv_mass[body] > 0.0) & (inv_mass[np.maximum(other, 0)] > 0.0)
    label = island_labels(len(inv_mass), body[moving], other[moving])      # (n,)
    stacked = np.zeros(len(inv_mass), dtype=bool)
    stacked[label[body[pair][heavy]]] = True
    stacked = stacked[label]                                                # (n,) by body
    chosen = stacked[body] | (pair & stacked[np.maximum(other, 0)] & (other >= 0))
    if chosen.sum() > STACK_MAX_CONTACTS:
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(chosen)


@njit(cache=True, inline='always')
def _normal_response(i, j, body, other, axes, jac, inv_mass, row_arm, row_turn, row_other):
    """A[i, j]: the change of contact i's relative normal velocity per unit normal impulse at
    contact j (j pushes its first body along +n_j and its second along −n_j)."""
    total = 0.0
    for side_j in range(2):
        q = body[j] if side_j == 0 else other[j]
        if q < 0:
            break
        sign_j = 1.0 if side_j == 0 else -1.0
        turn = row_turn + row_other * side_j
        for side_i in range(2):
            p = body[i] if side_i == 0 else other[i]
            if p != q:
                continue
            sign_i = 1.0 if side_i == 0 else -1.0
            arm = row_arm + row_other * side_i
            u = 0.0
            for a in range(3):
                u += inv_mass[q] * axes[j, 0, a] * axes[i, 0, a] + jac[j, turn, a] * jac[i, arm, a]
            total += sign_i * sign_j * u
    return total


@njit(cache=True, nogil=True)
def _stack_kernel(chosen, body, other, sep, axes, jac, impulses, vel, omega, inv_mass, h,
                  row_arm, row_turn, row_other):
    m = chosen.shape[0]
    a_matrix = np.empty((m, m))
    for x in range(m):
        for y in range(m):
            a_matrix[x, y] = _normal_response(chosen[x], chosen[y], body, other, axes, jac,
                                              inv_mass, row_arm, row_turn, row_other)
    # b: each contact's normal velocity with the friction warm start applied and no normal
    # impulse, plus its allowance gap/h (so w = A λ + b ≥ 0 is "closes no faster than allowed")
    v, w_ang = vel.copy(), omega.copy()
    for x in range(m):
        c = chosen[x]
        for j in range(1, 3):
            p = impulses[c, j]
            for a in range(3):
                v[body[c], a] += inv_mass[body[c]] * p * axes[c, j, a]
                w_ang[body[c], a] += p * jac[c, row_turn + j, a]
                if other[c] >= 0:
                    v[other[c], a] -= inv_mass[other[c]] * p * axes[c, j, a]
                    w_ang[other[c], a] -= p * jac[c, row_other + row_turn + j, a]
    b = np.empty(m)
    largest = 0.0
    for x in range(m):
        c, q, o = chosen[x], body[chosen[x]], other[chosen[x]]
        u = max(sep[c], 0.0) / h
        for a in range(3):
            u += v[q, a] * axes[c, 0, a] + w_ang[q, a] * jac[c, row_arm, a]
            if o >= 0:
                u -= v[o, a] * axes[c, 0, a] + w_ang[o, a] * jac[c, row_other + row_arm, a]
        b[x] = u
        largest = max(largest, abs(u))
    tolerance = STACK_TOLERANCE + 1e-9 * largest
    active = np.empty(m, dtype=np.bool_)
    for x in range(m):
        active[x] = b[x] < 0.0 or impulses[chosen[x], 0] > 0.0
    lam = np.zeros(m)
    for _ in range(STACK_MAX_PIVOTS):
        rows = np.flatnonzero(active)
        lam[:] = 0.0
        if rows.shape[0]:
            block = np.empty((rows.shape[0], rows.shape[0]))
            for x in range(rows.shape[0]):
                for y in range(rows.shape[0]):
                    block[x, y] = a_matrix[rows[x], rows[y]]
                block[x, x] *= 1.0 + STACK_REGULARIZATION
            solved = np.linalg.solve(block, -b[rows])
            pulls = False
            for x in range(rows.shape[0]):
                if solved[x] < 0.0:
                    active[rows[x]] = False
                    pulls = True
                lam[rows[x]] = solved[x]
            if pulls:
                continue
        closes = False
        for x in range(m):
            if active[x]:
                continue
            w = b[x]
            for y in rows:
                w += a_matrix[x, y] * lam[y]
            if w < -tolerance:
                active[x] = True
                closes = True
        if not closes:
            for x in range(m):
                impulses[chosen[x], 0] = lam[x]
            return True
    return False


def solve_stacks(chosen, contacts, axes, jac, impulses, vel, omega, inv_mass, h, row_arm,
                 row_turn, row_other) -> bool:
    """Replace the warm-start normal impulses impulses[chosen, 0] (N·s) of the contacts chosen
    (s,) (``stack_contacts``) with the exact solution of their normal problem (see the module
    docstring), from vel, omega (n, 3) before any warm start, axes (k, 3, 3) and the Jacobian
    block jac (k, 12, 3) (rows row_arm, row_turn, row_other as in the solver). Returns whether
    the active-set search converged (if not, impulses are left as they were)."""
    if len(chosen) == 0:
        return True
    return bool(_stack_kernel(chosen, contacts.body, contacts.other, contacts.separation, axes,
                              jac, impulses, vel, omega, inv_mass, float(h), row_arm, row_turn,
                              row_other))
