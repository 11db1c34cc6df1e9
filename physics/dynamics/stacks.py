"""Exact normal impulses for islands whose masses differ widely (a heavy box on a light one).

Gauss–Seidel passes an impulse along a chain of contacts only as fast as the chain's masses
allow: floor → light box (mass m) → heavy box (mass M) converges by a factor M / (M + m) per
sweep, so at 1000 : 1 ten sweeps take 1 % of the heavy box's weight off the light one and the
heavy box falls into it at nearly g. The position pass cannot lift it either: it moves the
light box (the larger inverse mass) down, the walls push it back up, and the overlap deepens
until the light box is squeezed out sideways. Warm starting does not help: the accumulated
impulse grows by those same 1 % a step. A block solve of one manifold's points (Box2D v2.4)
does not either: the slow coupling is between manifolds, along the chain.

For such islands the normal impulses are solved as one linear complementarity problem instead:
with A (m, m) the Delassus matrix of the island's normal rows (the change of each contact's
normal velocity per unit impulse at each contact, both bodies' terms) and b (m,) each
contact's normal velocity with no normal impulse minus its speculative allowance −gap/h,

    λ ≥ 0,   w = A λ + b ≥ 0,   λ·w = 0,

which is the minimum of ½ λᵀ A λ + bᵀ λ (the kinetic energy the impulses leave, up to a
constant) over λ ≥ 0: Lawson & Hanson's active-set method finds it, from the warm start, every
iterate feasible and lower in energy than the one before. The four coplanar points of a face
make A singular: a tiny multiple of its diagonal is added (the load is shared between them by
the least-norm split) and the solve refined against the true A. The solution replaces the warm
start of those normal rows, and the usual sweeps then run from it: friction, restitution and
the clamps are theirs, as everywhere else; they start where Gauss–Seidel would have converged
to (docs/physics.md#heavy-on-light).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from physics.dynamics.islands import island_root
from physics.settings import (
    STACK_MASS_RATIO,
    STACK_MAX_CONTACTS,
    STACK_REFINEMENTS,
    STACK_REGULARIZATION,
    STACK_SOLVE_BUDGET,
    STACK_TOLERANCE,
)


@njit(cache=True, nogil=True)
def stack_islands(contacts, inv_mass) -> tuple[np.ndarray, np.ndarray]:
    """The contacts to solve exactly: chosen (s,) int64, island after island, and starts
    (i + 1,) where each island's begin (the last entry is s).

    An island qualifies when it holds a body–body contact between masses more than
    ``STACK_MASS_RATIO`` apart and has at most ``STACK_MAX_CONTACTS`` contacts; all the
    contacts of its bodies are chosen (walls too). inv_mass (n,) 1/kg, 0 for a body held still
    (asleep), which links nothing, like a wall. Compiled: contacts a ``Contacts`` record."""
    body, other = contacts.body, contacts.other
    if not _any_uneven_pair(body, other, inv_mass, STACK_MASS_RATIO):  # the common case, fast
        return np.zeros(0, dtype=np.int64), np.zeros(1, dtype=np.int64)
    return _islands_kernel(body, other, inv_mass, STACK_MASS_RATIO, STACK_MAX_CONTACTS)


@njit(cache=True, nogil=True)
def _any_uneven_pair(body, other, inv_mass, ratio):
    """Whether some contact (body, other (k,) rows) joins two moving bodies (inv_mass (n,)
    1/kg > 0) whose masses differ by more than ratio."""
    for c in range(body.shape[0]):
        if _uneven(c, body, other, inv_mass, ratio):
            return True
    return False


@njit(cache=True, inline='always')
def _uneven(c, body, other, inv_mass, ratio):
    o = other[c]
    if o < 0:
        return False
    first, second = inv_mass[body[c]], inv_mass[o]
    return first > 0.0 and second > 0.0 and (first > ratio * second or second > ratio * first)


@njit(cache=True, nogil=True)
def _islands_kernel(body, other, inv_mass, ratio, max_contacts):
    """``stack_islands`` past its quick check: union–find over the pairs of moving bodies,
    then the qualifying islands' contacts in a counting sort by island."""
    n, k = inv_mass.shape[0], body.shape[0]
    parent = np.arange(n)
    for c in range(k):
        o = other[c]
        if o >= 0 and inv_mass[body[c]] > 0.0 and inv_mass[o] > 0.0:
            a, b = island_root(parent, body[c]), island_root(parent, o)
            if a != b:
                parent[max(a, b)] = min(a, b)
    # a contact's island is that of its moving body (a wall contact's body always moves)
    island = np.empty(k, dtype=np.int64)
    size = np.zeros(n, dtype=np.int64)
    qualifies = np.zeros(n, dtype=np.bool_)
    for c in range(k):
        q = body[c] if inv_mass[body[c]] > 0.0 else other[c]
        island[c] = island_root(parent, q)
        size[island[c]] += 1
        if _uneven(c, body, other, inv_mass, ratio):
            qualifies[island[c]] = True
    starts = np.zeros(n + 1, dtype=np.int64)  # by island root, then compacted
    for r in range(n):
        starts[r + 1] = starts[r] + (size[r] if qualifies[r] and size[r] <= max_contacts else 0)
    chosen = np.empty(starts[n], dtype=np.int64)
    fill = starts[:n].copy()
    for c in range(k):
        r = island[c]
        if qualifies[r] and size[r] <= max_contacts:
            chosen[fill[r]] = c
            fill[r] += 1
    kept = [0]
    for r in range(n):
        if starts[r + 1] > starts[r]:
            kept.append(starts[r + 1])
    return chosen, np.array(kept, dtype=np.int64)


@njit(cache=True, inline='always')
def _cholesky_solve(lower, rhs):
    """x with L Lᵀ x = rhs, L = lower (p, p) lower triangular."""
    p = rhs.shape[0]
    y = np.empty(p)
    for i in range(p):
        t = rhs[i]
        for j in range(i):
            t -= lower[i, j] * y[j]
        y[i] = t / lower[i, i]
    x = np.empty(p)
    for i in range(p - 1, -1, -1):
        t = y[i]
        for j in range(i + 1, p):
            t -= lower[j, i] * x[j]
        x[i] = t / lower[i, i]
    return x


@njit(cache=True, inline='always')
def _solve_passive(a_matrix, b, passive, z):
    """z (m,): the minimum of ½ zᵀ A z + bᵀ z over the passive contacts (the others 0).

    A's block is singular where a face's points outnumber what they constrain; it is solved
    with ``STACK_REGULARIZATION`` of its diagonal added (the least-norm split) and refined
    against the true block ``STACK_REFINEMENTS`` times, which takes the regularization's error
    out of the velocities. Returns False (z unusable) if the factorization failed or the
    result is not finite."""
    rows = np.flatnonzero(passive)
    z[:] = 0.0
    p = rows.shape[0]
    if p == 0:
        return True
    block, rhs = np.empty((p, p)), np.empty(p)
    for x in range(p):
        for y in range(p):
            block[x, y] = a_matrix[rows[x], rows[y]]
        rhs[x] = -b[rows[x]]
    regularized = block.copy()
    for x in range(p):
        regularized[x, x] *= 1.0 + STACK_REGULARIZATION
    try:
        lower = np.linalg.cholesky(regularized)
    except Exception:  # numba cannot name LinAlgError: any failure gives up
        return False
    solved = _cholesky_solve(lower, rhs)
    for _ in range(STACK_REFINEMENTS):
        solved += _cholesky_solve(lower, rhs - block @ solved)
    for x in range(p):
        if not np.isfinite(solved[x]):
            return False
        z[rows[x]] = solved[x]
    return True


@njit(cache=True, inline='always')
def _lawson_hanson(a_matrix, b, lam, tolerance, budget):
    """Minimise ½ λᵀ A λ + bᵀ λ over λ ≥ 0 (A (m, m) positive semi-definite, b (m,)) by
    Lawson & Hanson's active-set method, from the feasible lam (m,), in place. Its optimum is
    the complementarity problem's solution (w = A λ + b ≥ 0, λ·w = 0), and every iterate stays
    feasible and lowers the objective. The passive set starts as the contacts that pushed in
    the warm start or close now, so a stack at rest needs one solve. Returns whether the
    optimum was reached within the budget (p³ summed over the solves of p rows; the first
    solve is always made)."""
    m = b.shape[0]
    passive = np.empty(m, dtype=np.bool_)
    for x in range(m):
        passive[x] = lam[x] > 0.0 or b[x] < 0.0
    z = np.empty(m)
    work = 0.0
    while True:
        p = float(np.count_nonzero(passive))
        if work > 0.0 and work + p**3 > budget:
            return False
        work += max(p**3, 1.0)
        # inner loop: towards the minimum on the passive set, as far as λ stays ≥ 0
        if not _solve_passive(a_matrix, b, passive, z):
            return False  # lam is still the last feasible iterate
        step, blocking = 1.0, -1
        for x in range(m):
            if passive[x] and z[x] <= 0.0:
                reach = lam[x] / (lam[x] - z[x]) if lam[x] > 0.0 else 0.0
                if reach < step:
                    step, blocking = reach, x
        for x in range(m):
            lam[x] += step * (z[x] - lam[x]) if passive[x] else 0.0
        if blocking >= 0:
            for x in range(m):
                if passive[x] and (lam[x] <= 0.0 or x == blocking):
                    lam[x] = 0.0
                    passive[x] = False
            continue
        # outer loop: the contact that closes fastest joins, until none closes
        closest, worst = -1, -tolerance
        for x in range(m):
            if passive[x]:
                continue
            w = b[x]
            for y in range(m):
                w += a_matrix[x, y] * lam[y]
            if w < worst:
                closest, worst = x, w
        if closest < 0:
            return True
        passive[closest] = True


@njit(cache=True, nogil=True)
def _stack_kernel(chosen, starts, body, other, sep, axes, jac, impulses, vel, omega, inv_mass,
                  h, row_arm, row_turn, row_other, budget):
    # the friction warm start acts before the normal impulses: b includes it
    v, w_ang = vel.copy(), omega.copy()
    for c in chosen:
        for j in range(1, 3):
            p = impulses[c, j]
            for a in range(3):
                v[body[c], a] += inv_mass[body[c]] * p * axes[c, j, a]
                w_ang[body[c], a] += p * jac[c, row_turn + j, a]
                if other[c] >= 0:
                    v[other[c], a] -= inv_mass[other[c]] * p * axes[c, j, a]
                    w_ang[other[c], a] -= p * jac[c, row_other + row_turn + j, a]
    converged = True
    for island in range(starts.shape[0] - 1):
        contacts = chosen[starts[island]:starts[island + 1]]
        m = contacts.shape[0]
        a_matrix = np.empty((m, m))
        # A[x, y]: the change of contact x's relative normal velocity per unit normal impulse
        # at contact y (y pushes its first body along +n_y and its second along −n_y), written
        # out here: from an inlined helper, numba counted a reference of each array it was given
        # per entry (docs/architecture.md#records)
        for x in range(m):
            i = contacts[x]
            for y in range(m):
                j = contacts[y]
                total = 0.0
                for side_j in range(2):
                    q = body[j] if side_j == 0 else other[j]
                    if q < 0:
                        break
                    sign_j = 1.0 if side_j == 0 else -1.0
                    turn = row_turn + row_other * side_j
                    for side_i in range(2):
                        r = body[i] if side_i == 0 else other[i]
                        if r != q:
                            continue
                        sign_i = 1.0 if side_i == 0 else -1.0
                        arm = row_arm + row_other * side_i
                        u = 0.0
                        for a in range(3):
                            u += (inv_mass[q] * axes[j, 0, a] * axes[i, 0, a]
                                  + jac[j, turn, a] * jac[i, arm, a])
                        total += sign_i * sign_j * u
                a_matrix[x, y] = total
        # b: the normal velocity with no normal impulse plus the allowance gap/h, so that
        # w = A λ + b ≥ 0 reads "closes no faster than the gap allows"
        b, lam = np.empty(m), np.empty(m)
        largest = 0.0
        for x in range(m):
            c, q, o = contacts[x], body[contacts[x]], other[contacts[x]]
            u = max(sep[c], 0.0) / h
            for a in range(3):
                u += v[q, a] * axes[c, 0, a] + w_ang[q, a] * jac[c, row_arm, a]
                if o >= 0:
                    u -= v[o, a] * axes[c, 0, a] + w_ang[o, a] * jac[c, row_other + row_arm, a]
            b[x] = u
            largest = max(largest, abs(u))
            lam[x] = max(impulses[c, 0], 0.0)
        tolerance = STACK_TOLERANCE + 1e-9 * largest
        converged &= _lawson_hanson(a_matrix, b, lam, tolerance, budget)
        for x in range(m):
            impulses[contacts[x], 0] = lam[x]
    return converged


@njit(cache=True, nogil=True)
def solve_stacks(contacts, inv_mass, axes, jac, slot, impulses, vel, omega, h, row_arm,
                 row_turn, row_other) -> bool:
    """Replace the warm-start normal impulses (impulses (k, 3), N·s, column 0) of the islands
    of very unequal masses (``stack_islands``) with the solution of their normal problem (see
    the module docstring), from vel, omega (n, 3) before any warm start, axes (k, 3, 3) and the
    Jacobian block jac (k, 12, 3) (rows row_arm, row_turn, row_other as the solver lays them
    out; contact c's at row slot[c] (k,)); inv_mass (n,) 1/kg. Returns whether every island's
    search reached the optimum (where it did not, the impulses are a feasible point with less
    kinetic energy than before)."""
    chosen, starts = stack_islands(contacts, inv_mass)
    if len(chosen) == 0:
        return True
    # by contact, as the kernel reads them (rare: only islands of very unequal masses)
    return _stack_kernel(chosen, starts, contacts.body, contacts.other, contacts.separation,
                         axes[slot], jac[slot], impulses, vel, omega, inv_mass, h, row_arm,
                         row_turn, row_other, STACK_SOLVE_BUDGET)
