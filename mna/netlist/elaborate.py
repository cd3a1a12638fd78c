"""Cards to a `Circuit`: parameters in dependency order, ``.subckt`` expansion, domain inference.

Nothing here evaluates a number that a later ``.step`` or ``.dc param`` could change: element
values stay sympy expressions of the top-level parameters until assembly.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from graphlib import CycleError, TopologicalSorter

from mna.analysis.base import Analysis
from mna.analysis.sweep import Step
from mna.circuit import OPTION_CHOICES, Circuit, Model, Node, Options, OutputName
from mna.diagnostics import check_source_topology
from mna.domains import Domain
from mna.elements import Element
from mna.errors import NetlistError
from mna.expr import parameter, parse_expression
from mna.netlist import collector_paused
from mna.netlist.fields import GROUND, FieldReader, Scope, Value, as_value, expression_start
from mna.netlist.model import Assign, Braced, Call, Card, Netlist, SourceLocation, Word
from mna.netlist.parser import field_text
from mna.units import parse_number

log = logging.getLogger(__name__)

SKIPPED_CARDS = {".meas", ".measure", ".plot", ".width", ".four", ".probe", ".title"}
OPTION_ALIASES = {"itl1": "maxiter", "gear": "gear2", "trapezoidal": "trap"}


@dataclass(frozen=True)
class Subcircuit:
    name: str
    ports: tuple[Word, ...]
    defaults: tuple[Assign, ...]
    body: tuple[Card, ...]
    location: SourceLocation


def elaborate(netlist: Netlist) -> Circuit:
    """Flatten and check a parsed netlist; every error names its line and column."""
    with collector_paused():
        return _Elaborator(netlist).run()


class _Elaborator:
    def __init__(self, netlist: Netlist):
        self.netlist = netlist
        self.subcircuits: dict[str, Subcircuit] = {}
        self.nodes: dict[str, tuple[str, SourceLocation]] = {}
        self.elements: list[Element] = []
        self.element_names: set[str] = set()
        self.domain_cards: list[tuple[str, Domain, SourceLocation]] = []
        self.models: dict[str, Model] = {}
        self.options = Options()
        self.initial: dict[OutputName, Value] = {}
        self.nodeset: dict[OutputName, Value] = {}
        self.saves: list[OutputName] = []
        self.analyses: list[Analysis] = []
        self.steps: list[Step] = []

    def run(self) -> Circuit:
        top = self._split(self.netlist.cards)
        parameters = self._parameters([c for c in top if c.head.key == ".param"])
        scope = self.top_scope = Scope(known=frozenset(parameters))
        for card in top:
            self._card(card, scope, depth=0)
        nodes = self._domains()
        circuit = Circuit(
            title=self.netlist.title,
            path=self.netlist.path,
            nodes=nodes,
            elements=tuple(self.elements),
            parameters=parameters,
            parameter_names=self.parameter_names,
            models=self.models,
            options=self.options,
            initial=self.initial,
            nodeset=self.nodeset,
            analyses=tuple(self.analyses),
            steps=tuple(self.steps),
            saves=tuple(self.saves),
        )
        for element in self.elements:
            element.validate(circuit)
        for output in (*self.saves, *self.initial, *self.nodeset):
            _check_output(circuit, output)
        check_source_topology(circuit)
        return circuit

    # -- structure -----------------------------------------------------------------------------
    def _split(self, cards) -> list[Card]:
        """Take out ``.subckt ... .ends`` blocks (nested ones too); return the rest in order."""
        top: list[Card] = []
        stack: list[tuple[Card, list[Card]]] = []
        for card in cards:
            key = card.head.key
            if key == ".subckt":
                stack.append((card, []))
            elif key == ".ends":
                if not stack:
                    raise NetlistError(".ends without .subckt", card.location)
                self._define(*stack.pop())
            elif stack:
                stack[-1][1].append(card)
            else:
                top.append(card)
        if stack:
            raise NetlistError(".subckt has no .ends", stack[-1][0].location)
        return top

    def _define(self, card: Card, body: list[Card]) -> None:
        words = [f for f in card.fields if isinstance(f, Word) and f.key != "params:"]
        if not words:
            raise NetlistError("usage: .subckt name port ... [params: p=default ...]",
                               card.location)
        name, *ports = words
        if name.key in self.subcircuits:
            raise NetlistError(f"subcircuit '{name.text}' is defined twice", name.location)
        defaults = tuple(f for f in card.fields if isinstance(f, Assign))
        self.subcircuits[name.key] = Subcircuit(name.text, tuple(ports), defaults, tuple(body),
                                                card.location)

    def _parameters(self, cards: list[Card]) -> dict[str, Value]:
        """Top-level ``.param`` values in dependency order; a cycle is an error naming it."""
        parsed = {}
        for card in cards:
            for field in card.fields:
                key, value = _parameter_assignment(field)
                start = expression_start(value)
                parsed[key.key] = (key, parse_expression(value.text, start))
        graph = {}
        for name, (_, expression) in parsed.items():
            for used, location in expression.names.items():
                if used not in parsed:
                    raise NetlistError(f"undefined parameter '{used}'", location)
            graph[name] = set(expression.names)
        try:
            order = list(TopologicalSorter(graph).static_order())
        except CycleError as cycle:
            names = cycle.args[1]
            raise NetlistError(
                "parameter cycle: " + " -> ".join(names), parsed[names[0]][0].location
            ) from None
        self.parameter_names = {name: parsed[name][0].text for name in order}
        return {name: as_value(parsed[name][1].value) for name in order}

    def _card(self, card: Card, scope: Scope, depth: int) -> None:
        key = card.head.key
        if not card.is_dot:
            if key.startswith("x"):
                self._instance(card, scope, depth)
            else:
                self._element(card, scope)
        elif key == ".param":
            pass  # read before the other cards: top level in _parameters, local in _instance
        elif key in (".options", ".option", ".opt"):
            self._options(card)
        elif key == ".model":
            self._model(card)
        elif key == ".ic":
            self._initial(card, scope, self.initial)
        elif key == ".nodeset":
            self._initial(card, scope, self.nodeset)
        elif key in (".save", ".print"):
            self._saves(card, scope)
        elif key == ".domain":
            self._domain(card, scope)
        elif key == ".step":
            self.steps.append(
                Step.from_fields(FieldReader(card, scope, Step.usage, self._note_node)))
        elif key == ".end":
            pass
        elif key in SKIPPED_CARDS:
            log.warning("%s: %s is not used by mna; skipped", card.location, card.head.text)
        elif key in Analysis.registry:
            reader = FieldReader(card, scope, Analysis.registry[key].usage, self._note_node)
            self.analyses.append(Analysis.registry[key].from_fields(reader))
        else:
            raise NetlistError(f"unknown card '{card.head.text}'", card.location)

    def _element(self, card: Card, scope: Scope) -> None:
        cls = Element.class_for(card.head.text)
        if cls is None:
            known = ", ".join(sorted(Element.registry) + ["X"])
            raise NetlistError(f"unknown element type '{card.head.text}' (known prefixes: {known})",
                               card.location)
        element = cls.from_fields(FieldReader(card, scope, cls.usage, self._note_node))
        key = element.name.lower()
        if key in self.element_names:
            raise NetlistError(f"element '{element.name}' is defined twice", card.location)
        self.element_names.add(key)
        self.elements.append(element)

    def _instance(self, card: Card, scope: Scope, depth: int) -> None:
        usage = "Xname node ... subcircuit [params:] [p=value ...]"
        words = [f for f in card.fields if isinstance(f, Word) and f.key != "params:"]
        if not words:
            raise NetlistError(f"missing subcircuit name\n  usage: {usage}", card.location)
        *connections, name = words
        sub = self.subcircuits.get(name.key)
        if sub is None:
            raise NetlistError(f"unknown subcircuit '{name.text}'", name.location)
        if len(connections) != len(sub.ports):
            raise NetlistError(
                f"subcircuit '{sub.name}' has {len(sub.ports)} ports "
                f"({' '.join(p.text for p in sub.ports)}), "
                f"{card.head.text} connects {len(connections)}",
                card.location,
            )
        if depth > 50:
            raise NetlistError(f"subcircuit '{sub.name}' instantiates itself", card.location)
        reader = FieldReader(card, scope, usage, self._note_node)
        node_map = {}
        for port, word in zip(sub.ports, connections):
            node_map[port.key] = scope.node(word)
            if node_map[port.key] != GROUND:
                self._note_node(node_map[port.key], word, scope.prefix)
        inner = Scope(prefix=scope.prefix + card.head.text + ".", nodes=node_map,
                      substitutions=dict(scope.substitutions), known=scope.known)
        overrides = {self._assign_name(a).key: a for a in card.fields if isinstance(a, Assign)}
        declared = {self._assign_name(a).key for a in sub.defaults}
        for key, assign in overrides.items():
            if key not in declared:
                raise NetlistError(f"subcircuit '{sub.name}' has no parameter '{key}'",
                                   assign.location)
        for default in sub.defaults:
            key = self._assign_name(default).key
            if key in overrides:
                value = reader.evaluate(overrides[key].values[0], key)
            else:
                value = FieldReader(card, inner, usage, self._note_node).evaluate(
                    default.values[0], key)
            inner.substitutions[parameter(key)] = value
            inner = dataclasses.replace(inner, known=inner.known | {key})
        for inner_card in sub.body:  # local .param cards first, in order, as SPICE reads them
            if inner_card.head.key == ".param":
                inner = self._local_parameters(inner_card, inner)
        for inner_card in sub.body:
            self._card(inner_card, inner, depth + 1)

    def _local_parameters(self, card: Card, scope: Scope) -> Scope:
        """A ``.param`` card inside a subcircuit: values in the instance's scope."""
        reader = FieldReader(card, scope, ".param name=value ...", self._note_node)
        for field in card.fields:
            key, value = _parameter_assignment(field)
            scope.substitutions[parameter(key.key)] = reader.evaluate(value, key.text)
            scope = dataclasses.replace(scope, known=scope.known | {key.key})
            reader.scope = scope
        return scope

    @staticmethod
    def _assign_name(assign: Assign) -> Word:
        if not isinstance(assign.key, Word):
            raise NetlistError("expected name=value", assign.location)
        return assign.key

    def _note_node(self, key: str, word: Word, prefix: str) -> None:
        """Record node `key` where `word` first names it (its name and place made only
        then: most mentions of a node are not its first)."""
        if key != GROUND and key not in self.nodes:
            self.nodes[key] = (prefix + word.text, word.location)

    # -- dot cards -----------------------------------------------------------------------------
    def _options(self, card: Card) -> None:
        fields = {f.name for f in dataclasses.fields(Options)}
        changes = {}
        for item in card.fields:
            if not isinstance(item, Assign) or not isinstance(item.key, Word):
                log.warning("%s: option '%s' is not used by mna; ignored",
                            item.location, field_text(item))
                continue
            key = OPTION_ALIASES.get(item.key.key, item.key.key)
            if key not in fields:
                log.warning("%s: option '%s' is not used by mna; ignored",
                            item.location, item.key.text)
                continue
            changes[key] = _option_value(key, item)
        self.options = dataclasses.replace(self.options, **changes)

    def _model(self, card: Card) -> None:
        usage = ".model name type(param=value ...)"
        if not card.fields or not isinstance(card.fields[0], Word):
            raise NetlistError(f"usage: {usage}", card.location)
        name, *rest = card.fields
        if len(rest) == 1 and isinstance(rest[0], Call):
            kind, params = rest[0].name, rest[0].args
        elif rest and isinstance(rest[0], Word):
            kind, params = rest[0], tuple(rest[1:])
        else:
            raise NetlistError(f"usage: {usage}", card.location)
        reader = FieldReader(card, self.top_scope, usage, self._note_node)
        values = {}
        for item in params:
            if not isinstance(item, Assign) or not isinstance(item.key, Word):
                raise NetlistError(f"expected param=value in .model, found '{field_text(item)}'",
                                   item.location)
            values[item.key.key] = reader.evaluate(item.values[0], item.key.text)
        if name.key in self.models:
            raise NetlistError(f"model '{name.text}' is defined twice", name.location)
        self.models[name.key] = Model(name.text, kind.key, values, card.location)

    def _initial(self, card: Card, scope: Scope, values: dict[OutputName, Value]) -> None:
        usage = f"{card.head.key} V(node)=value I(element)=value ..."
        reader = FieldReader(card, scope, usage, self._note_node)
        for item in card.fields:
            if not isinstance(item, Assign) or not isinstance(item.key, Call):
                reader.fail("expected V(node)=value or I(element)=value, "
                            f"found '{field_text(item)}'",
                            item.location, usage=True)
            values[_output_name(item.key, scope)] = reader.evaluate(item.values[0], "value")

    def _saves(self, card: Card, scope: Scope) -> None:
        for item in card.fields:
            if isinstance(item, Word) and item.key in ("all", "op", "dc", "ac", "tran"):
                continue
            if not isinstance(item, Call):
                raise NetlistError("expected V(node), V(a,b) or I(element), "
                                   f"found '{field_text(item)}'",
                                   item.location)
            self.saves.append(_output_name(item, scope))

    def _domain(self, card: Card, scope: Scope) -> None:
        words = [f for f in card.fields if isinstance(f, Word)]
        if len(words) < 2 or len(words) != len(card.fields):
            raise NetlistError("usage: .domain KIND node ...", card.location)
        kind, *nodes = words
        try:
            domain = Domain(kind.key)
        except ValueError:
            known = ", ".join(d.value for d in Domain)
            raise NetlistError(f"unknown domain '{kind.text}' (known: {known})",
                               kind.location) from None
        for word in nodes:
            key = scope.node(word)
            if key == GROUND:
                raise NetlistError("the reference node belongs to every domain", word.location)
            self._note_node(key, word, scope.prefix)
            self.domain_cards.append((key, domain, word.location))

    # -- domains -------------------------------------------------------------------------------
    def _domains(self) -> dict[str, Node]:
        """Each node's domain: declared, fixed by a keyword, or carried along two-terminal
        branches; electrical where nothing claims one."""
        hints = [(key, domain, f".domain {domain.value}", "a .domain card", location)
                 for key, domain, location in self.domain_cards]
        hints += [(key, domain, reason, e.name, e.location)
                  for e in self.elements for key, domain, reason in e.domain_hints()]
        domains = dict.fromkeys(self.nodes, Domain.ELECTRICAL)
        if hints:   # without one there is nothing to carry: the branches need no walk
            domains.update(self._carried(hints))
        return {key: Node(key, name, domains[key], location)
                for key, (name, location) in self.nodes.items()}

    def _carried(self, hints) -> dict[str, Domain]:
        """The domain of every node joined by branches to a node that a hint claims; two
        claims on one group is an error naming both."""
        parent = {key: key for key in self.nodes}

        def root(key: str) -> str:
            while parent[key] != key:
                parent[key] = parent[parent[key]]
                key = parent[key]
            return key

        for element in self.elements:
            for group in element.domain_groups():
                keys = [k for k in group if k != GROUND]
                for other in keys[1:]:
                    parent[root(other)] = root(keys[0])
        claims: dict[str, tuple[Domain, str, str, SourceLocation]] = {}
        for key, domain, reason, who, location in hints:
            group = root(key)
            if group in claims and claims[group][0] is not domain:
                other = claims[group]
                raise NetlistError(
                    f"domain conflict at node '{self.nodes[key][0]}': {other[0].value} by "
                    f"{other[1]} on {other[2]}, {domain.value} by {reason} on {who}",
                    location,
                )
            claims.setdefault(group, (domain, reason, who, location))
        return {key: claims[root(key)][0] for key in self.nodes if root(key) in claims}


def _parameter_assignment(field) -> tuple[Word, Braced]:
    if not isinstance(field, Assign) or not isinstance(field.key, Word) or len(field.values) != 1:
        raise NetlistError("expected name=value in .param", field.location)
    value = field.values[0]
    if isinstance(value, Word):
        value = Braced(value.text, value.location)
    return field.key, value


def _option_value(key: str, item: Assign):
    value = item.values[0]
    if not isinstance(value, Word):
        raise NetlistError(f"option {key} takes a plain value", value.location)
    if key in OPTION_CHOICES:
        choice = OPTION_ALIASES.get(value.key, value.key)
        if choice not in OPTION_CHOICES[key]:
            choices = ", ".join(OPTION_CHOICES[key])
            raise NetlistError(f"option {key} must be one of {choices}", value.location)
        return choice
    current = getattr(Options(), key)
    number = parse_number(value.text)
    if number is None:
        raise NetlistError(f"bad number '{value.text}' for option {key}", value.location)
    return type(current)(number)


def _output_name(call: Call, scope: Scope) -> OutputName:
    kind = call.name.key.upper()
    if kind not in ("V", "I") or not call.args or not all(isinstance(a, Word) for a in call.args):
        raise NetlistError(f"expected V(node), V(a,b) or I(element), found '{field_text(call)}'",
                           call.location)
    if kind == "V" and len(call.args) <= 2:
        return OutputName("V", tuple(scope.node(a) for a in call.args), call.location)
    if kind == "I" and len(call.args) == 1:
        return OutputName("I", (scope.name(call.args[0]).lower(),), call.location)
    raise NetlistError(f"expected V(node), V(a,b) or I(element), found '{field_text(call)}'",
                       call.location)


def _check_output(circuit: Circuit, output: OutputName) -> None:
    if output.kind == "V":
        for key in output.keys:
            if key != GROUND and key not in circuit.nodes:
                raise NetlistError(f"no node '{key}' in the circuit", output.location)
    elif output.keys[0] not in circuit.elements_by_key:
        raise NetlistError(f"no element '{output.keys[0]}' in the circuit", output.location)
