"""Elimination orders for factors that are solved many times (a transient's steps).

A triangular solve is a chain of dependent divisions and updates: along a ladder of
sections (a transmission line, a heated rod, a chain of masses) KLU's minimum-degree order
eliminates from one end, so each unknown waits for the one before it and a solve is bound by
latency, not by work. Nested dissection eliminates the two halves before the middle, and the
halves' halves before them, so the chain is only logarithmically long. It fills in more
(a ladder: 1.5 times as many entries; a 30 x 30 grid: 1.2 times minimum degree's), so it
is a choice for factors that many solves will use, timed against KLU's own
(`mna.linalg.factor`).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph


def nested_dissection(pattern: sp.spmatrix, leaf: int = 2) -> np.ndarray:
    """A symmetric elimination order for the pattern of ``pattern + pattern.T``: the k-th
    pivot is unknown ``order[k]``.

    Every part of the graph larger than `leaf` nodes is cut, all parts in one sweep, by a
    level of a breadth-first search from a far node (two searches: any node to the farthest
    one, then from there): the inner level that leaves the larger side and itself smallest.
    Parts are eliminated before the cuts that made them; a part with no inner level (a
    clique) stays whole, and so does what is left after `MAX_SWEEPS`.

    >>> ladder = sp.diags([[2.0] * 7, [-1.0] * 6, [-1.0] * 6], [0, 1, -1])
    >>> nested_dissection(ladder, leaf=1)
    array([0, 2, 4, 6, 1, 5, 3])
    """
    coo = sp.coo_matrix(pattern)
    off = coo.row != coo.col
    size = pattern.shape[0]
    whole = sp.csr_matrix((np.ones(2 * off.sum()), (np.concatenate([coo.row[off], coo.col[off]]),
                                                    np.concatenate([coo.col[off], coo.row[off]]))),
                          (size, size))
    whole.sort_indices()
    rows = np.repeat(np.arange(size), np.diff(whole.indptr))   # each entry's row, in order
    cols = whole.indices
    cut_at = np.full(size, -1)          # the sweep in which a node became part of a cut
    active = np.ones(size, bool)        # in a part still to be cut
    sweep = 0
    while active.any() and sweep < MAX_SWEEPS:
        keep = active[rows] & active[cols]
        # the graph of the active nodes: the whole graph's entries kept, already in order
        indptr = np.concatenate([[0], np.cumsum(np.bincount(rows[keep], minlength=size))])
        graph = sp.csr_matrix((np.ones(indptr[-1]), cols[keep], indptr), (size, size))
        _, label = csgraph.connected_components(graph, directed=False)
        sizes = np.bincount(label, weights=active)
        active &= sizes[label] > leaf
        nodes = np.flatnonzero(active)
        if not len(nodes):
            break
        _, first = np.unique(label[nodes], return_index=True)
        far = _farthest(graph, nodes, label, nodes[first])
        distance = csgraph.dijkstra(graph, indices=far, min_only=True, unweighted=True)[nodes]
        cut, whole = _cuts(label[nodes], distance.astype(int))
        active[nodes[whole]] = False
        cut_at[nodes[cut]] = sweep
        active[nodes[cut]] = False
        sweep += 1
    rank = np.where(cut_at < 0, sweep, cut_at)     # uncut nodes first, then the deepest cuts
    return np.argsort(-rank, kind="stable")


MAX_SWEEPS = 64   # a balanced dissection of a million unknowns takes ~20


def _cuts(part: np.ndarray, level: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Masks over the nodes (their `part` labels and breadth-first `level`s): the nodes of
    each part's cut level, and those of parts that have no inner level to cut."""
    parts = part.max() + 1
    depth = np.zeros(parts, int)
    np.maximum.at(depth, part, level)
    offset = np.r_[0, np.cumsum(depth + 1)]              # each part's run of levels
    slot = offset[part] + level
    count = np.bincount(slot, minlength=offset[-1])
    owner = np.repeat(np.arange(parts), depth + 1)
    within = np.arange(offset[-1]) - offset[owner]        # each slot's level
    before = np.cumsum(count) - count - np.r_[0, np.cumsum(count)][offset[owner]]
    after = np.bincount(part, minlength=parts)[owner] - before - count
    cost = np.where((within >= 1) & (within < depth[owner]),
                    np.maximum(before, after) + count, np.iinfo(int).max)
    best = np.lexsort((cost, owner))
    chosen = best[np.r_[True, np.diff(owner[best]) != 0]]  # the cheapest slot of each part
    cuttable = depth >= 2
    return np.isin(slot, chosen[cuttable[owner[chosen]]]), ~cuttable[part]


def _farthest(graph: sp.csr_matrix, nodes: np.ndarray, label: np.ndarray,
              starts: np.ndarray) -> np.ndarray:
    """For each part (one start node each), a node of it farthest from its start."""
    distance = csgraph.dijkstra(graph, indices=starts, min_only=True, unweighted=True)[nodes]
    order = np.lexsort((distance, label[nodes]))
    last = np.r_[np.diff(label[nodes][order]) != 0, True]
    return nodes[order][last]
