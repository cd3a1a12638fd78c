"""Topological reasons for a singular system, found by graph search and reported by name.

Checked at elaboration (always fatal): loops made only of across sources, cut-sets made only
of through sources, and pieces of the circuit with no connection to the reference at all.
Checked before a DC solution: loops of across sources and T-type elements (a T-type element is
a short at DC) and nodes whose every path to the reference runs through A-type elements or
through sources (open at DC).
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from mna.elements.base import OPEN_AT_DC, Edge, Element, Role
from mna.errors import TopologyError
from mna.netlist.fields import GROUND

if TYPE_CHECKING:
    from mna.circuit import Circuit, Node


ROLES = tuple(Role)
CODE = {role: code for code, role in enumerate(ROLES)}   # a role's number: its place there


class Graph:
    """A circuit's graph, made once at elaboration for every topology check: each edge's
    ends as node numbers (the reference is 0), its role and the element it belongs to, as
    arrays; an `Edge` is made again only where a check names it."""

    def __init__(self, nodes: Mapping[str, Node] | Iterable[str], elements: Sequence[Element]):
        self.keys = (GROUND, *nodes)
        self.elements = elements
        number = {key: i for i, key in enumerate(self.keys)}
        ends: list[int] = []
        roles: list[int] = []
        counts: list[int] = []
        for element in elements:
            edges = element.edges()
            counts.append(len(edges))
            for edge in edges:
                ends += (number[edge.a], number[edge.b])
                roles.append(CODE[edge.role])
        self.ends = np.array(ends, dtype=np.int64).reshape(-1, 2)
        self.roles = np.array(roles, dtype=np.int64)
        self.owners = np.repeat(np.arange(len(counts)), counts)
        self.ordinals = np.arange(len(roles)) - np.repeat(np.cumsum(counts) - counts, counts)

    def edges(self, roles: tuple[Role, ...] | None = None) -> list[Edge]:
        """The edges of `roles` (default all), in the elements' order."""
        chosen = range(len(self.roles)) if roles is None else np.flatnonzero(
            np.isin(self.roles, [CODE[role] for role in roles])).tolist()
        return [self.elements[self.owners[k]].edges()[self.ordinals[k]] for k in chosen]

    def components(self, open_roles: tuple[Role, ...]) -> np.ndarray:
        """Each node's component label when the edges of `open_roles` are left out."""
        joined = ~np.isin(self.roles, [CODE[role] for role in open_roles])
        return connected_components(len(self.keys), *self.ends[joined].T)


def connected_components(size: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A label per node (the least node of its component) for the undirected edges a-b.

    Each round hooks the larger root of every edge whose ends have different roots onto the
    smaller one, then halves paths until every node points at its root: a path of n nodes
    is done in two rounds of log(n) halvings.
    """
    parent = np.arange(size)
    while True:
        while not np.array_equal(grand := parent[parent], parent):
            parent = grand
        ra, rb = parent[a], parent[b]
        differ = ra != rb
        if not differ.any():
            return parent
        np.minimum.at(parent, np.maximum(ra[differ], rb[differ]),
                      np.minimum(ra[differ], rb[differ]))


def check_source_topology(circuit: Circuit) -> None:
    """Refuse what no analysis can solve: source loops, source cut-sets, unconnected pieces."""
    _refuse_loops(circuit.graph, (Role.ACROSS_SOURCE,), "loop of across sources")
    _refuse_isolated(circuit, open_roles=(Role.THROUGH_SOURCE,), dc=False)


def check_dc_topology(circuit: Circuit) -> None:
    """Refuse what has no DC solution: A-type open, T-type short."""
    _refuse_loops(circuit.graph, (Role.ACROSS_SOURCE, Role.THROUGH_STORE),
                  "loop of across sources and T-type elements (a short at DC)")
    _refuse_isolated(circuit, open_roles=OPEN_AT_DC, dc=True)


class Forest:
    """Which nodes (or unknowns) the branches so far tie together (a union-find): a branch
    between two that are tied already closes a loop."""

    def __init__(self):
        self.parent: dict = {}

    def root(self, node):
        self.parent.setdefault(node, node)
        while self.parent[node] != node:
            self.parent[node] = self.parent[self.parent[node]]   # path halving
            node = self.parent[node]
        return node

    def tied(self, a, b) -> bool:
        return self.root(a) == self.root(b)

    def join(self, a, b) -> bool:
        """Tie `a` and `b`; False when they were tied already (the branch closes a loop)."""
        a, b = self.root(a), self.root(b)
        self.parent[a] = b
        return a != b


def _refuse_loops(graph: Graph, roles: tuple[Role, ...], what: str) -> None:
    """No loop of edges of `roles`: an edge whose ends are tied already closes one, which
    is then traced to name its elements."""
    forest = Forest()
    adjacency: dict[str, list[tuple[str, Edge]]] = defaultdict(list)
    for edge in graph.edges(roles):
        if not forest.join(edge.a, edge.b):
            path = _path(adjacency, edge.a, edge.b)
            names = ", ".join(e.element.name for e in [*path, edge])
            raise TopologyError(f"{what}: {names} (their across variables are not independent)",
                                edge.element.location)
        adjacency[edge.a].append((edge.b, edge))
        adjacency[edge.b].append((edge.a, edge))


def _path(adjacency, start: str, goal: str) -> list[Edge]:
    """The edges of a path from `start` to `goal`, which the edges join (breadth-first)."""
    if start == goal:
        return []
    came: dict[str, tuple[str, Edge] | None] = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for neighbour, edge in adjacency[node]:
            if neighbour in came:
                continue
            came[neighbour] = (node, edge)
            if neighbour == goal:
                path = []
                while came[neighbour] is not None:
                    neighbour, step = came[neighbour]
                    path.append(step)
                return path[::-1]
            queue.append(neighbour)
    raise ValueError(f"no path from {start} to {goal}")


def _refuse_isolated(circuit: Circuit, open_roles: tuple[Role, ...], dc: bool) -> None:
    """Every piece joined by edges not of `open_roles` must reach the reference; else say
    what cuts it off."""
    graph = circuit.graph
    labels = graph.components(open_roles)
    if (labels == labels[0]).all():
        return
    component = dict(zip(graph.keys, labels.tolist()))
    grounded = component[GROUND]
    cut: dict[int, list[Edge]] = defaultdict(list)
    for edge in graph.edges():
        ends = {component[edge.a], component[edge.b]}
        for label in ends - {grounded}:
            if len(ends) == 2:
                cut[label].append(edge)
    for key, node in circuit.nodes.items():
        label = component[key]
        if label == grounded:
            continue
        members = [circuit.node_name(k) for k in circuit.nodes if component[k] == label]
        names = ", ".join(members)
        crossing = cut[label]
        sources = [e.element.name for e in crossing if e.role is Role.THROUGH_SOURCE]
        stores = [e.element.name for e in crossing if e.role is Role.ACROSS_STORE]
        location = crossing[0].element.location if crossing else node.location
        if sources:
            extra = f" (with A-type {', '.join(stores)})" if stores else ""
            raise TopologyError(
                f"cut-set of through sources{' at DC' if dc else ''}: {', '.join(sources)}{extra} "
                f"alone join node(s) {names} to the rest, so their through variables must balance "
                "and the nodes' across variables are undetermined",
                location,
            )
        if stores:
            raise TopologyError(
                f"node(s) {names} have no DC path to the reference: they are reached only through "
                f"A-type elements {', '.join(stores)} (open at DC); "
                "add a DC path, or use .tran uic",
                location,
            )
        raise TopologyError(f"node(s) {names} have no path to the reference node 0", location)
