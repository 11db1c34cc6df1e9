"""The joints' global linear systems (J W Kᵀ) x = b solved in linear time when the joints form a
forest, by block elimination in tree order (docs/physics.md#joint-projection).

The system is written as the larger sparse one over bodies and joints together (Baraff,
"Linear-time dynamics using Lagrange multipliers", SIGGRAPH 1996):

    [ W⁻¹  −Kᵀ ] [y]   [0]
    [ J     εE ] [x] = [b],      so y = W Kᵀ x and (J W Kᵀ + εE) x = b,

one node per moving body (a 6 × 6 block W⁻¹: its mass on the velocity block, the inverse of its
rotation response on the spin block) and one per joint (its nb equality rows). When bodies and
joints form a forest, eliminating every node after its children makes no fill-in: a body takes
its child joints' blocks, a joint its child body's, each a 6 × 6 or smaller product, so a chain
of 1 000 links costs 2 000 small eliminations instead of a general sparse factorisation. A
joint to the world (or to a body held still) has only one moving body and a zero diagonal, so it
is eliminated last, as its tree's root; a tree with two such joints, or with a closed loop of
joints, is not a forest through the world, and the caller falls back to its general
solve. y comes out with x: for a Newton step it is each body's move, for a velocity solve its
velocity change.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from physics.constraints.solve import invert_small


@njit(cache=True)
def _find(parent, i):
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


@njit(cache=True)
def _forest(first, second, nblock, inv_mass):
    """(True, order, up) of ``tree_factor``'s factors for these rows: the joints with rows and
    their moving bodies in tree order, parents first; (False, …) when they are not a forest
    through the world."""
    m, n = len(first), len(inv_mass)
    size = m + n                      # nodes: joints 0 … m−1, bodies m … m+n−1
    # the forest: union–find over moving bodies, one grounded joint per tree at most
    parent_set = np.arange(n)
    grounded = np.full(n, -1)         # by set root: its joint to the world or a still body
    degree = np.zeros(n, np.int64)
    for j in range(m):
        if nblock[j] == 0:
            continue
        a, b = first[j], second[j]
        a = a if a >= 0 and inv_mass[a] > 0.0 else -1
        b = b if b >= 0 and inv_mass[b] > 0.0 else -1
        if a < 0 and b < 0:
            continue
        if a >= 0 and b >= 0:
            ra, rb = _find(parent_set, a), _find(parent_set, b)
            if ra == rb:
                return False, parent_set[:0], parent_set[:0]  # a closed loop of joints
            gj = max(grounded[ra], grounded[rb])
            if grounded[ra] >= 0 and grounded[rb] >= 0:
                return False, parent_set[:0], parent_set[:0]  # two joints to the world
            parent_set[ra] = rb
            grounded[rb] = gj
            degree[a] += 1
            degree[b] += 1
        else:
            body = a if a >= 0 else b
            r = _find(parent_set, body)
            if grounded[r] >= 0:
                return False, parent_set[:0], parent_set[:0]
            grounded[r] = j
            degree[body] += 1
    # adjacency of bodies to their joints (CSR)
    start = np.zeros(n + 1, np.int64)
    for i in range(n):
        start[i + 1] = start[i] + degree[i]
    fill = start[:-1].copy()
    links = np.empty(start[n], np.int64)
    for j in range(m):
        if nblock[j] == 0:
            continue
        for side in range(2):
            body = first[j] if side == 0 else second[j]
            if body >= 0 and inv_mass[body] > 0.0:
                links[fill[body]] = j
                fill[body] += 1
    # order: breadth first from each tree's root (its grounded joint, else a body), then
    # eliminated in reverse, children before parents
    up = np.full(size, -2)            # parent node; −1 for a root; −2 not reached
    order = np.empty(size, np.int64)
    count = 0
    for i in range(n):
        if degree[i] == 0 or up[m + i] != -2:
            continue
        root_joint = grounded[_find(parent_set, i)]
        root = root_joint if root_joint >= 0 else m + i
        up[root] = -1
        head = count
        order[count] = root
        count += 1
        while head < count:
            node = order[head]
            head += 1
            if node < m:              # a joint: its moving bodies
                for side in range(2):
                    body = first[node] if side == 0 else second[node]
                    if body >= 0 and inv_mass[body] > 0.0 and up[m + body] == -2:
                        up[m + body] = node
                        order[count] = m + body
                        count += 1
            else:                     # a body: its joints
                body = node - m
                for k in range(start[body], start[body + 1]):
                    j = links[k]
                    if up[j] == -2:
                        up[j] = node
                        order[count] = j
                        count += 1
    return True, order[:count], up


@njit(cache=True)
def tree_factor(first, second, nblock, present, along, inv_mass, response, regular, shape):
    """Factor J W Kᵀ + regular·E over all joints: (True, the factors) for ``tree_resolve``, or
    (False, empty factors) when the joints are not a forest through the world.

    first, second (m,) body rows (< 0: the world); nblock (m,) equality rows of each joint;
    present, along (m, ≥nb, 12) J and K by joint ([lin A, ang A, lin B, ang B]); inv_mass (n,)
    1/kg, zero for a body held still (it then counts as the world); response (n, 3, 3) the spin
    block of W. The factors: order (count,) the nodes parents first, up (size,) each node's
    parent (−1 a root, −2 in no tree), dim (size,), inverse (size, 6, 6) the inverse of each
    node's block with its children in, reach (size, 6, 6) D_a⁻¹ H[a, p], across (size, 6, 6)
    H[p, a]. shape: factors made before; their tree (order, up) serves when they ``fit`` these
    rows (the forest is the same, so is its order), else it is found again."""
    m, n = len(first), len(inv_mass)
    size = m + n
    if fits(shape, first, second, nblock, inv_mass):
        order, up = shape[0], shape[1]
    else:
        found, order, up = _forest(first, second, nblock, inv_mass)
        if not found:
            return _failed()
    count = len(order)
    # blocks: D (size, 6, 6)
    dim = np.zeros(size, np.int64)
    diag = np.empty((size, 6, 6))
    work = np.empty((6, 12))
    for k in range(count):
        node = order[k]
        if node < m:
            nb = nblock[node]
            dim[node] = nb
            for p in range(nb):
                for q in range(nb):
                    diag[node, p, q] = regular if p == q else 0.0
        else:
            body = node - m
            dim[node] = 6
            for p in range(6):
                for q in range(6):
                    diag[node, p, q] = 0.0
            mass = 1.0 / inv_mass[body]
            for p in range(3):
                diag[node, p, p] = mass
            if not invert_small(response[body], 3, diag[node, 3:, 3:], work):
                return _failed()
    inverse = np.empty((size, 6, 6))  # D_a⁻¹ with a's children in
    reach = np.empty((size, 6, 6))    # D_a⁻¹ H[a, p]: how the parent's unknowns reach a's
    across = np.empty((size, 6, 6))   # H[p, a]
    down = np.zeros((6, 6))           # H[a, p]: child row, parent column

    def eliminate(a, p, da, dp):
        """Node a (da unknowns) eliminated into its parent p (dp; p < 0: a root): inverse[a] ←
        D_a⁻¹, reach[a] ← D_a⁻¹ H[a, p], D_p −= H[p, a] D_a⁻¹ H[a, p], from down = H[a, p] and
        across[a] = H[p, a]; False if D_a is singular. An inner function, which sees the
        loop's arrays without being handed them; numba still counts a reference to each of
        them per call, which the unrolled products of the constant sizes outweigh
        (docs/architecture.md#records)."""
        # explicit inverses: in numba a small Gauss–Jordan and products beat an LU's
        # solves column by column (0.88 against 1.17 ms for 1 000 links)
        if not invert_small(diag[a], da, inverse[a], work):
            return False
        if p < 0:
            return True
        for s in range(da):
            for t in range(dp):
                total = 0.0
                for q in range(da):
                    total += inverse[a, s, q] * down[q, t]
                reach[a, s, t] = total
        # D_p −= H[p, a] D_a⁻¹ H[a, p]
        for s in range(dp):
            for t in range(dp):
                total = 0.0
                for q in range(da):
                    total += across[a, s, q] * reach[a, q, t]
                diag[p, s, t] -= total
        return True

    for k in range(count - 1, -1, -1):
        a = order[k]
        p = up[a]
        da, dp = dim[a], dim[p] if p >= 0 else 0
        # the coupling of a and its parent, written here, not in a helper taking arrays (see
        # ``eliminate``): H[joint j, body i] = J_{j,i} (nb × 6), H[body i, joint j] = −K_{j,i}ᵀ
        # (6 × nb); H[a, p] into down, H[p, a] into across[a]
        if p >= 0:
            j, body = (a, p - m) if a < m else (p, a - m)
            side = 0 if first[j] == body else 6
            rows = min(6, present.shape[1])
            if a < m:
                for t in range(rows):
                    for s in range(6):
                        down[t, s] = present[j, t, side + s]
                        across[a, s, t] = -along[j, t, side + s]
            else:
                for t in range(rows):
                    for s in range(6):
                        down[s, t] = -along[j, t, side + s]
                        across[a, t, s] = present[j, t, side + s]
        # the common sizes (a body's 6 unknowns, a ball joint's 3) as constants: the compiler
        # unrolls those small products, the same arithmetic in the same order (2× faster)
        if da == 6 and dp == 3:
            done = eliminate(a, p, 6, 3)
        elif da == 3 and dp == 6:
            done = eliminate(a, p, 3, 6)
        else:
            done = eliminate(a, p, da, dp)
        if not done:
            return _failed()
    return True, (order, up, dim, inverse, reach, across)


@njit(cache=True)
def fits(factors, first, second, nblock, inv_mass):
    """Whether ``tree_factor``'s factors (or no_factors) were made over the forest these rows make:
    nblock (m,) equality rows a joint, first, second (m,) its body rows (< 0: the world),
    inv_mass (n,) 1/kg (0: held still). The same joints in the tree with as many rows, the same
    bodies moving among theirs, and no joint outside it that the rows would take in."""
    up, dim = factors[1], factors[2]
    m = nblock.shape[0]
    if up.shape[0] != m + inv_mass.shape[0]:
        return False
    for j in range(m):
        if up[j] != -2:
            if dim[j] != nblock[j]:
                return False
            for side in range(2):
                body = first[j] if side == 0 else second[j]
                if body >= 0 and (inv_mass[body] > 0.0) != (up[m + body] != -2):
                    return False
        elif nblock[j] > 0 and ((first[j] >= 0 and inv_mass[first[j]] > 0.0)
                                or (second[j] >= 0 and inv_mass[second[j]] > 0.0)):
            return False
    return True


@njit(cache=True)
def _failed():
    empty = np.zeros((0, 6, 6))
    return False, (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64), empty,
                   empty, empty)


@njit(cache=True)
def tree_resolve(factors, rhs, x, y):
    """x (m, 6), y (n, 6) ← the solution of (J W Kᵀ + εE) x = rhs (m, ≥nb) and y = W Kᵀ x by
    body, from ``tree_factor``'s factors (zero for joints and bodies in no tree)."""
    order, up, dim, inverse, reach, across = factors
    m, n = x.shape[0], y.shape[0]
    size = m + n
    r = np.zeros((size, 6))           # right-hand sides, the children's parts taken in
    own = np.zeros((size, 6))         # D_a⁻¹ r_a
    for k in range(len(order)):
        a = order[k]
        if a < m:
            for s in range(dim[a]):
                r[a, s] = rhs[a, s]
    z = np.zeros((size, 6))

    # inner functions, which see the loops' arrays (numba still counts a reference to each per
    # call, docs/architecture.md#records), called with the common sizes as constants so that
    # their small products unroll (the same arithmetic in the same order)
    def forward(a, p, da, dp):
        """own_a = D_a⁻¹ r_a, r_p −= H[p, a] own_a."""
        for s in range(da):
            total = 0.0
            for q in range(da):
                total += inverse[a, s, q] * r[a, q]
            own[a, s] = total
        for s in range(dp):
            total = 0.0
            for q in range(da):
                total += across[a, s, q] * own[a, q]
            r[p, s] -= total

    def back(a, p, da, dp):
        """z_a = own_a − D_a⁻¹ H[a, p] z_p."""
        for s in range(da):
            total = own[a, s]
            for t in range(dp):
                total -= reach[a, s, t] * z[p, t]
            z[a, s] = total

    for k in range(len(order) - 1, -1, -1):  # children first
        a = order[k]
        p = up[a]
        da, dp = dim[a], dim[p] if p >= 0 else 0
        if da == 6 and dp == 3:
            forward(a, p, 6, 3)
        elif da == 3 and dp == 6:
            forward(a, p, 3, 6)
        else:
            forward(a, p, da, dp)
    for k in range(len(order)):              # parents first
        a = order[k]
        p = up[a]
        da, dp = dim[a], dim[p] if p >= 0 else 0
        if da == 6 and dp == 3:
            back(a, p, 6, 3)
        elif da == 3 and dp == 6:
            back(a, p, 3, 6)
        else:
            back(a, p, da, dp)
    for j in range(m):
        for s in range(6):
            x[j, s] = z[j, s]
    for i in range(n):
        for s in range(6):
            y[i, s] = z[m + i, s]


@njit(cache=True)
def row_rates(first, second, nblock, jac, vel, omega, out):
    """out (m, ≥nb) ← J v of each joint's equality rows jac (m, ≥nb, 12), m/s or rad/s."""
    for j in range(len(first)):
        for r in range(nblock[j]):
            total = 0.0
            for side in range(2):
                body = first[j] if side == 0 else second[j]
                if body < 0:
                    continue
                o = 6 * side
                for k in range(3):
                    total += jac[j, r, o + k] * vel[body, k] + jac[j, r, o + 3 + k] * omega[body, k]
            out[j, r] = total


@njit(cache=True)
def body_impulses(first, second, nblock, jac, x, out):
    """out (n, 6) ← Jᵀ x by body: the impulses (linear, angular) of multipliers x (m, ≥nb) on
    rows jac (m, ≥nb, 12); the world takes none."""
    out[:, :] = 0.0
    for j in range(len(first)):
        for side in range(2):
            body = first[j] if side == 0 else second[j]
            if body < 0:
                continue
            for r in range(nblock[j]):
                for k in range(6):
                    out[body, k] += jac[j, r, 6 * side + k] * x[j, r]


@njit(cache=True)
def largest_diagonal(first, second, nblock, present, along, inv_mass, response):
    """The largest diagonal entry of J W Kᵀ (the scale of its regularisation)."""
    best = 0.0
    for j in range(len(first)):
        for r in range(nblock[j]):
            total = 0.0
            for side in range(2):
                body = first[j] if side == 0 else second[j]
                if body < 0:
                    continue
                o = 6 * side
                for k in range(3):
                    total += inv_mass[body] * present[j, r, o + k] * along[j, r, o + k]
                    for q in range(3):
                        total += present[j, r, o + 3 + k] * response[body, k, q] * along[
                            j, r, o + 3 + q]
            best = max(best, total)
    return best
