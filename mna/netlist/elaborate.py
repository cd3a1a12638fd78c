"""Cards to a `Circuit`: parameters in dependency order, ``.subckt`` expansion, conditional
blocks, domain inference.

Nothing here evaluates a number that a later ``.step`` or ``.dc param`` could change: element
values stay expressions of the top-level parameters until assembly. A ``.if`` condition is
the exception: it picks cards, so it is decided with the parameters' nominal values, and
one that reads a parameter that ``.step``, ``.dc`` or ``.mc`` varies is refused.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from graphlib import CycleError, TopologicalSorter

from mna.circuit import OPTION_CHOICES, Circuit, Model, Node, Options
from mna.diagnostics import Graph, check_source_topology
from mna.domains import Domain
from mna.elements import Element
from mna.errors import NetlistError
from mna.expr import CONSTANTS, Expression, RandomCalls, UserFunction, Value, parse_expression
from mna.netlist.fields import (
    GROUND,
    TEMPERATURE,
    FieldReader,
    OutputName,
    Scope,
    assignment,
    names_output,
    output_name,
    read_output,
)
from mna.netlist.model import Assign, Braced, Call, Card, Netlist, SourceLocation, field_text
from mna.netlist.requests import (
    STEP_USAGE,
    DcSweep,
    Fourier,
    Measure,
    MonteCarlo,
    Request,
    Sweep,
    check_count,
    check_distinct,
    read_step,
)
from mna.units import read_number

log = logging.getLogger(__name__)

# what LTspice's libraries write into device models for their parts browser, read by no
# simulator (ngspice ignores them with a warning): ratings, the manufacturer, a diode's type
_TRANSISTOR_DATASHEET = frozenset({"vceo", "icrating", "mfg"})
_FET_DATASHEET = frozenset({"vds", "ron", "qg", "mfg"})
DATASHEET_VALUES = {"d": frozenset({"iave", "vpk", "mfg", "type", "ipk", "diss"}),
                    "npn": _TRANSISTOR_DATASHEET, "pnp": _TRANSISTOR_DATASHEET,
                    "njf": _FET_DATASHEET, "pjf": _FET_DATASHEET,
                    "nmos": _FET_DATASHEET, "pmos": _FET_DATASHEET}
# other simulators' parameters that ngspice 39's models lack, and ignore with a warning:
# PSpice's low-current breakdown and temperature coefficients of a diode, LTspice's ideal
# diode (RON ROFF VFWD VREV EPSILON REVEPSILON) and soft recovery (VP), PSpice's gate-junction
# emission, recombination, impact ionisation and grading of a JFET, a transistor's
# breakdown ratings
_JFET_EXTENSIONS = frozenset({"n", "isr", "nr", "alpha", "vk", "m", "mj"})
_BREAKDOWN_RATINGS = frozenset({"bvbe", "bvcbo", "ibvbe"})
IGNORED_BY_NGSPICE = {
    "d": frozenset({"ibvl", "nbvl", "tikf", "tbv1", "tbv2", "ron", "roff", "vfwd", "vrev",
                    "epsilon", "revepsilon", "vp"}),
    "njf": _JFET_EXTENSIONS, "pjf": _JFET_EXTENSIONS,
    "npn": _BREAKDOWN_RATINGS, "pnp": _BREAKDOWN_RATINGS}

SKIPPED_CARDS = {".plot", ".width", ".probe", ".title"}
# what ngspice reads and mna does not: refused by name, never skipped unseen
UNSUPPORTED_CARDS = {".sp": "S-parameter analysis",
                     ".sens": "sensitivity analysis", ".pss": "periodic steady state",
                     ".disto": "distortion analysis", ".hb": "harmonic balance"}
UNSUPPORTED_ELEMENTS = {"A": "XSPICE code-model devices", "T": "lossless transmission lines",
                        "O": "lossy transmission lines", "U": "RC lines",
                        "Y": "transmission lines", "P": "coupled lines", "N": "OSDI devices",
                        "Z": "MESFETs"}
OPTION_ALIASES = {"itl1": "maxiter", "itl4": "tranmaxiter", "gear": "gear2",
                  "trapezoidal": "trap"}
BLOCKS = (".if", ".elseif", ".else", ".endif")
# names a parameter may not take, and what they are
RESERVED = {"time": "the simulation time", TEMPERATURE: "the circuit's temperature"}
MAX_NESTING = 50                 # levels of subcircuit instances
MAX_ELEMENTS = 2_000_000         # of a netlist, subcircuits expanded (some 4 GB and 30 s to read)
READ_FIRST = (".global", ".func", ".param")   # at the top level, before the other cards


@dataclass(frozen=True)
class Subcircuit:
    """A ``.subckt`` definition; `local` holds those defined inside it, which only its
    body (and theirs) can instantiate, as in ngspice."""

    name: str
    ports: tuple[str, ...]
    defaults: tuple[Assign, ...]
    body: tuple[Card, ...]
    location: SourceLocation
    local: Mapping[str, Subcircuit] = field(default_factory=dict)


def _instance_words(card: Card) -> list[tuple[int, str]]:
    """An X line's words and their places: its connections, then the subcircuit's name."""
    return [(i, f) for i, f in enumerate(card.fields)
            if isinstance(f, str) and f.lower() != "params:"]


def elaborate(netlist: Netlist) -> Circuit:
    """Flatten and check a parsed netlist; every error names its line and column."""
    return _Elaborator(netlist).run()


class _Elaborator:
    def __init__(self, netlist: Netlist):
        self.netlist = netlist
        self.subcircuits: dict[str, Subcircuit] = {}
        self._made: dict[int, float] = {}   # `_elements_made` by definition (its id)
        self.expanding: list[Mapping[str, Subcircuit]] = []   # the local definitions in reach
        self.nodes: dict[str, Node] = {}   # electrical until `_domains` places them
        self.elements: list[Element] = []
        self.elements_by_key: dict[str, Element] = {}
        self.domain_cards: list[tuple[str, Domain, SourceLocation]] = []
        self.models: dict[str, Model] = {}
        self.options = Options()
        self.initial: dict[OutputName, Value] = {}
        self.nodeset: dict[OutputName, Value] = {}
        self.saves: list[OutputName] = []
        self.save_all = False   # a .save all (ngspice's: the default outputs too)
        self.analyses: list[Request] = []
        self.steps: list[Sweep] = []
        self.measures: list[Measure] = []
        self.fouriers: list[Fourier] = []
        self.montecarlo: MonteCarlo | None = None
        self.random = RandomCalls()

    def run(self) -> Circuit:
        top, first = self._split(self.netlist.cards)
        globals_ = frozenset(word.lower() for card in first[".global"]
                             for word in card.fields if isinstance(word, str))
        functions = self._functions(first[".func"], {})
        parameters = self._parameters(first[".param"], functions)
        self.nominal: dict[str, float] | None = None   # evaluated for the first .if
        # what reads parameters at their nominal values (a .if's condition, an instance's
        # m=): each expression, where it is, what it is and why it must stay
        self.nominal_reads: list[tuple[Expression, SourceLocation, str, str]] = []
        self.parameters = parameters
        scope = self.top_scope = Scope(known=frozenset(self.parameter_names) | {TEMPERATURE},
                                       functions=functions, globals=globals_,
                                       random=self.random, model_kinds=_model_kinds(
                                           self.netlist.cards))
        self._cards(top, scope, depth=0)
        nodes = self._domains()
        elements = tuple(self.elements)
        circuit = Circuit(
            title=self.netlist.title,
            path=self.netlist.path,
            nodes=nodes,
            elements=elements,
            graph=Graph(nodes, elements),
            # the temperature first: it is known once every card is read, and parameters
            # may read it
            parameters={TEMPERATURE: self.options.temp, **parameters,
                        **self.random.parameters},
            parameter_names=self.parameter_names,
            models=self.models,
            options=self.options,
            initial=self.initial,
            nodeset=self.nodeset,
            analyses=tuple(self.analyses),
            steps=tuple(self.steps),
            montecarlo=self.montecarlo,
            measures=tuple(self.measures),
            fouriers=tuple(self.fouriers),
            saves=_distinct(self.saves),
            save_all=self.save_all,
            elements_by_key=self.elements_by_key,
        )
        for element in self.elements:
            element.validate(circuit)
        self._check_measure_expressions()
        measured = [o for m in (*self.measures, *self.fouriers) for o in m.outputs]
        for output in (*self.saves, *self.initial, *self.nodeset, *measured):
            circuit.check_output(output)
        for output in (*self.initial, *self.nodeset):
            if output.kind == "I" and circuit.elements_by_key[output.keys[0]
                                                              ].terminal_currents():
                raise NetlistError(f"{circuit.label(output)} is a device's current: an initial "
                                   "value is an across variable's or a stored through "
                                   "variable's (an inductor's)", output.location)
        for step in self.steps:
            step.check(circuit)
        check_distinct(self.steps)
        if self.steps:
            check_count(math.prod(step.count for step in self.steps), ".step", circuit,
                        self.steps[0].location, per_point=False)
        if self.montecarlo is not None:   # every step point runs every sample
            check_count(circuit.repeats * self.montecarlo.count, ".mc" if not self.steps
                        else ".mc at every .step point", circuit, self.montecarlo.location,
                        per_point=False)
        for request in self.analyses:   # each of its points at every .step point
            request.check(circuit)
        self._check_nominal_reads(circuit)
        check_source_topology(circuit)
        return circuit

    # -- structure -----------------------------------------------------------------------------
    def _split(self, cards) -> tuple[list[Card], dict[str, list[Card]]]:
        """Take out ``.subckt ... .ends`` blocks (nested ones too); return the rest in order,
        and of those, by key, the cards read before all others (`READ_FIRST`)."""
        top: list[Card] = []
        first: dict[str, list[Card]] = {key: [] for key in READ_FIRST}
        # the definitions open: their card, body and the definitions inside them
        stack: list[tuple[Card, list[Card], dict[str, Subcircuit]]] = []
        for card in cards:
            key = card.key
            if key == ".subckt":
                stack.append((card, [], {}))
            elif key == ".ends":
                if not stack:
                    raise NetlistError(".ends without .subckt", card.location)
                self._define(*stack.pop(), stack[-1][2] if stack else self.subcircuits)
            elif stack:
                stack[-1][1].append(card)
            else:
                top.append(card)
                if key in first:
                    first[key].append(card)
        if stack:
            raise NetlistError(".subckt has no .ends", stack[-1][0].location)
        return top, first

    def _define(self, card: Card, body: list[Card], local: dict[str, Subcircuit],
                scope: dict[str, Subcircuit]) -> None:
        """Define the subcircuit of `card` in `scope` (the top level's, or the definitions
        of the subcircuit around it)."""
        words = [f for f in card.fields if isinstance(f, str) and f.lower() != "params:"]
        if not words:
            raise NetlistError("usage: .subckt name port ... [params: p=default ...]",
                               card.location)
        name, *ports = words
        keys = [port.lower() for port in ports]
        for index, key in enumerate(keys):
            if key in keys[:index]:
                raise NetlistError(f"port '{ports[index]}' is listed twice",
                                   card.place(card.fields.index(ports[index], index + 1)))
        if name.lower() in scope:
            raise NetlistError(f"subcircuit '{name}' is defined twice", card.place(0))
        scope[name.lower()] = Subcircuit(name, tuple(ports), card.options, tuple(body),
                                         card.location, local)

    def _functions(self, cards: list[Card], functions: dict[str, UserFunction]
                   ) -> dict[str, UserFunction]:
        """``.func name(a, b) = {expr}`` (or without '='), each usable in the later ones."""
        usage = ".func name(a, b) = {expr}"
        functions = dict(functions)
        for card in cards:
            items = [*card.fields, *card.options]
            if len(items) == 1 and isinstance(items[0], Assign) and isinstance(items[0].key, Call):
                head, body = items[0].key, items[0].values[0]
            elif len(items) == 2 and isinstance(items[0], Call) and isinstance(items[1], Braced):
                head, body = items
            else:
                raise NetlistError(f"usage: {usage}", card.location)
            if not isinstance(body, Braced) or not all(isinstance(a, str) for a in head.args):
                raise NetlistError(f"usage: {usage}", card.location)
            arguments = [a.lower() for a in head.args]
            if len(set(arguments)) < len(arguments):
                raise NetlistError(f".func {head.name}: an argument is named twice",
                                   card.location)
            expression = parse_expression(body.text, body.location, time=True, probes=True,
                                          functions=functions)
            functions[head.name.lower()] = UserFunction(
                head.name.lower(), tuple(a.lower() for a in head.args), expression)
        return functions

    def _parameters(self, cards: list[Card], functions) -> dict[str, Value]:
        """Top-level ``.param`` values in dependency order, with the parameters of their
        random calls; a cycle is an error naming it."""
        parsed: dict[str, tuple[Assign, Expression]] = {}
        for card in cards:
            for item in card.options:
                if item.name.lower() in RESERVED:
                    raise NetlistError(f"'{item.name}' is reserved "
                                       f"({RESERVED[item.name.lower()]})", item.location)
                value = _braced(assignment(item, item.location))
                parsed[item.name.lower()] = (item, parse_expression(
                    value.text, value.location, functions=functions))
            if card.fields:
                raise NetlistError("expected name=value in .param", card.place(0))
        expressions = {name: self.random.hoist(expression)
                       for name, (_, expression) in parsed.items()}
        expressions.update(self.random.parameters)
        graph = {}
        for name, expression in expressions.items():
            used = set()
            for key, location in expression.names.items():
                if key in expressions:
                    used.add(key)
                elif key not in CONSTANTS and key != TEMPERATURE:
                    raise NetlistError(f"undefined parameter '{key}'", location)
            graph[name] = used
        try:
            order = list(TopologicalSorter(graph).static_order())
        except CycleError as cycle:
            names = cycle.args[1]
            raise NetlistError("parameter cycle: " + " -> ".join(names),
                               parsed[names[0]][0].location) from None
        self.parameter_names = {name: parsed[name][0].name for name in order if name in parsed}
        return {name: _folded(expressions[name]) for name in order}

    def _cards(self, cards, scope: Scope, depth: int) -> None:
        """Every card of `cards` in `scope`, the blocks of ``.if`` decided."""
        taking = [True]       # per nested .if: whether its current branch is read
        decided = [True]      # per nested .if: whether a branch has been taken
        otherwise = [False]   # per nested .if: whether its .else has come
        reading = True        # whether every enclosing branch is read
        for card in cards:
            key = card.key
            if key in BLOCKS:
                self._block(card, key, scope, taking, decided, otherwise)
                reading = all(taking)
            elif reading:
                self._card(card, scope, depth)
        if len(taking) > 1:
            raise NetlistError(".if has no .endif", cards[-1].location if cards else None)

    def _block(self, card: Card, key: str, scope: Scope, taking: list[bool],
               decided: list[bool], otherwise: list[bool]) -> None:
        if key == ".if":
            outer = all(taking)
            value = outer and self._condition(card, scope)
            taking.append(value)
            decided.append(value or not outer)
            otherwise.append(False)
        elif len(taking) == 1:
            raise NetlistError(f"{key} without .if", card.location)
        elif key in (".elseif", ".else") and otherwise[-1]:
            raise NetlistError(f"{key} after the .else of its .if", card.location)
        elif key == ".elseif":
            value = not decided[-1] and self._condition(card, scope)
            taking[-1] = value
            decided[-1] = decided[-1] or value
        elif key == ".else":
            taking[-1] = not decided[-1]
            decided[-1] = otherwise[-1] = True
        else:
            taking.pop()
            decided.pop()
            otherwise.pop()

    def _condition(self, card: Card, scope: Scope) -> bool:
        (braced,) = card.fields
        expression = scope.value(scope.expression(braced, condition=True))
        if not isinstance(expression, Expression):
            return expression != 0
        return self._at_nominal(expression, card.location, "the condition",
                                "a .if picks cards once, at the nominal values (write the "
                                "choice into the values, e.g. {if(p > 1, a, b)})") != 0

    def _at_nominal(self, expression: Expression, location: SourceLocation, what: str,
                    why: str) -> float:
        """`expression` at the parameters' nominal values, for what the netlist decides once
        (`what`, `why`: the error where `.step`, `.dc` or `.mc` varies one it reads)."""
        self.nominal_reads.append((expression, location, what, why))
        if self.nominal is None:
            self.nominal = _nominal(self.parameters)
        for name, call in self.random.parameters.items():   # calls in instances met so far
            if name not in self.nominal:
                self.nominal[name] = call.evaluate(self.nominal)
        return expression.evaluate(self.nominal)

    def _check_measure_expressions(self) -> None:
        """A ``.meas`` measures an analysis the netlist has (``.four`` a ``.tran``), and its
        values (``PARAM='expr'``, ``VAL=``, ``AT=`` ...) read parameters and the measurements
        before it."""
        analyses = {request.card[1:] for request in self.analyses}
        for measure in self.measures:
            if measure.expression is None and measure.analysis not in analyses:
                raise NetlistError(f".meas {measure.name}: the netlist has no "
                                   f".{measure.analysis} analysis to measure", measure.location)
        for fourier in self.fouriers:
            if "tran" not in analyses:
                raise NetlistError(".four: the netlist has no .tran analysis to measure",
                                   fourier.location)
        known = {*self.parameter_names, TEMPERATURE}
        for measure in self.measures:
            names = [item for value in measure.values() if isinstance(value, Expression)
                     for item in value.names.items()]
            for name, location in names:
                if name not in known and name not in CONSTANTS:
                    raise NetlistError(f"'{name}' is neither a parameter nor a measurement "
                                       "before this one", location)
            known.add(measure.name.lower())

    def _check_nominal_reads(self, circuit: Circuit) -> None:
        """A ``.if`` is decided once, and an instance's copies made once, at the nominal
        values: refuse one that reads (through other parameters too) a parameter that a
        ``.step``, a ``.dc`` or ``.mc`` varies."""
        varied = {step.name: ".step varies it" for step in circuit.steps if step.is_parameter}
        for analysis in circuit.analyses:
            if isinstance(analysis, DcSweep):
                varied.update((TEMPERATURE if sweep.kind == "temperature" else sweep.name,
                               ".dc varies it") for sweep in analysis.sweeps
                              if sweep.kind in ("parameter", "temperature"))
        if circuit.montecarlo is not None:
            varied.update((name, ".mc draws it") for name in self.random.parameters)
        for expression, location, subject, why in self.nominal_reads:
            read, pending = set(), list(expression.names)
            while pending:
                name = pending.pop()
                if name in read:
                    continue
                read.add(name)
                if name in varied:
                    what = ("a random function" if name in self.random.parameters
                            else f"'{self.parameter_names.get(name, name)}'")
                    raise NetlistError(f"{subject} reads {what}, and {varied[name]}: {why}",
                                       location)
                value = circuit.parameters.get(name)
                if isinstance(value, Expression):
                    pending.extend(value.names)

    def _card(self, card: Card, scope: Scope, depth: int) -> None:
        key = card.key
        if not card.is_dot:
            if key.startswith("x"):
                self._instance(card, scope, depth)
            else:
                self._element(card, scope)
        elif key in (".param", ".func", ".global", ".end"):
            pass  # read before the other cards: top level in run, local in _instance
        elif key in (".options", ".option", ".opt"):
            self._options(card)
        elif key == ".model":
            self._model(card, scope)
        elif key == ".ic":
            self._initial(card, scope, self.initial)
        elif key == ".nodeset":
            self._initial(card, scope, self.nodeset)
        elif key in (".save", ".print"):
            self._saves(card, scope)
        elif key == ".domain":
            self._domain(card, scope)
        elif key in (".meas", ".measure"):
            self.measures.append(Measure.from_fields(self._reader(card, scope, Measure.usage)))
        elif key == ".four":
            self.fouriers.append(Fourier.from_fields(self._reader(card, scope, Fourier.usage)))
        elif key == ".step":
            self.steps.append(read_step(self._reader(card, scope, STEP_USAGE)))
        elif key == ".mc":
            if self.montecarlo is not None:
                raise NetlistError(f".mc is already asked for on line "
                                   f"{self.montecarlo.location.line}", card.location)
            self.montecarlo = MonteCarlo.from_fields(self._reader(card, scope,
                                                                  MonteCarlo.usage))
        elif key == ".temp":
            self._temperature(card)
        elif key in SKIPPED_CARDS:
            log.warning("%s: %s is not used by mna; skipped", card.location, card.head)
        elif key in UNSUPPORTED_CARDS:
            raise NetlistError(f"{card.head}: {UNSUPPORTED_CARDS[key]} is not supported by mna",
                               card.location)
        elif key in Request.registry:
            request = Request.registry[key]
            self.analyses.append(request.from_fields(self._reader(card, scope, request.usage)))
        else:
            raise NetlistError(f"unknown card '{card.head}'", card.location)

    def _reader(self, card: Card, scope: Scope, usage: str) -> FieldReader:
        return FieldReader(card, scope, usage, self._note_node)

    def _element(self, card: Card, scope: Scope) -> None:
        cls = Element.class_for(card.key)
        if cls is None and card.head[:1].upper() in UNSUPPORTED_ELEMENTS:
            raise NetlistError(f"{card.head}: {UNSUPPORTED_ELEMENTS[card.head[:1].upper()]} "
                               "are not supported by mna", card.location)
        if cls is None:
            known = ", ".join(sorted(prefix.upper() for prefix in Element.registry) + ["X"])
            raise NetlistError(f"unknown element type '{card.head}' (known prefixes: {known})",
                               card.location)
        if len(self.elements) >= MAX_ELEMENTS:
            raise NetlistError(f"more than {MAX_ELEMENTS} elements (subcircuits that each "
                               "instantiate the next twice, over and over?)", card.location)
        element = self._plain(cls, card, scope) or cls.from_fields(
            self._reader(card, scope, cls.usage))
        if scope.copies != 1.0:
            copy = element.copied(scope.copies)
            if copy is None:
                raise NetlistError(f"{element.name} cannot stand in an instance with m= "
                                   "(ngspice leaves it single, which is no copies in parallel)",
                                   card.location)
            element = copy
        key = element.name.lower()
        if key in self.elements_by_key:
            raise NetlistError(f"element '{element.name}' is defined twice", card.location)
        self.elements_by_key[key] = element
        self.elements.append(element)

    def _plain(self, cls: type[Element], card: Card, scope: Scope) -> Element | None:
        """The element of a card ``name n+ n- word`` of words only, where its class reads
        such a line itself (`Element.from_plain`); None for any other card."""
        fields = card.fields
        if card.places is not None or card.options or len(fields) != 3 or scope.copies != 1.0:
            return None
        nodes = (scope.node(fields[0]), scope.node(fields[1]))
        element = cls.from_plain(scope.name(card.head), card.location, nodes, fields[2], scope)
        if element is not None:
            for index, key in enumerate(nodes):
                if key != GROUND:
                    self._note_node(key, scope.prefix + fields[index], card, index)
        return element

    def _instance(self, card: Card, scope: Scope, depth: int) -> None:
        usage = "Xname node ... subcircuit [params:] [p=value ...] [m=copies]"
        words = _instance_words(card)
        if not words:
            raise NetlistError(f"missing subcircuit name\n  usage: {usage}", card.location)
        *connections, (name_index, name) = words
        sub = self._subcircuit(name, reversed(self.expanding))
        if sub is None:
            raise NetlistError(f"unknown subcircuit '{name}'", card.place(name_index))
        if len(connections) != len(sub.ports):
            raise NetlistError(
                f"subcircuit '{sub.name}' has {len(sub.ports)} ports ({' '.join(sub.ports)}), "
                f"{card.head} connects {len(connections)}",
                card.location,
            )
        if depth > MAX_NESTING:
            raise NetlistError(f"subcircuits nested more than {MAX_NESTING} levels deep at "
                               f"'{sub.name}' (one that instantiates itself?)", card.location)
        if depth == 0 and len(self.elements) + (size := self._elements_made(sub)) > MAX_ELEMENTS:
            raise NetlistError(f"{card.head} would make some {size:.4g} elements, more than "
                               f"{MAX_ELEMENTS} (subcircuits that each instantiate the next "
                               "twice, over and over?)", card.location)
        reader = self._reader(card, scope, usage)
        node_map = {}
        for port, (index, word) in zip(sub.ports, connections):
            key = node_map[port.lower()] = scope.node(word)
            if key != GROUND:
                self._note_node(key, scope.prefix + word, card, index)
        overrides = {assign.name.lower(): assign for assign in card.options}
        # an instance may set a parameter of the defaults, or one the body's .param sets
        # (that .param is then its default, as in ngspice)
        local = {a.name.lower() for c in sub.body if c.key == ".param" for a in c.options}
        declared = {assignment(a, a.location).name.lower() for a in sub.defaults} | local
        copies = scope.copies
        if "m" in overrides and "m" not in declared:   # ngspice's multiplier
            assign = overrides.pop("m")
            copies *= self._instance_copies(reader, assign)
            if not 0 < copies < math.inf:
                reader.fail(f"the m= of this instance and of those around it multiply to "
                            f"{copies:g}", assign.places[0])
        for key, assign in overrides.items():
            if key not in declared:
                raise NetlistError(f"subcircuit '{sub.name}' has no parameter '{key}'",
                                   assign.location)
        prefix = scope.prefix + card.head + "."
        local_models = {c.fields[0].lower(): (prefix + c.fields[0]).lower() for c in sub.body
                        if c.key == ".model" and c.fields and isinstance(c.fields[0], str)}
        inner = Scope(prefix=prefix, nodes=node_map,
                      substitutions=dict(scope.substitutions), known=scope.known,
                      functions=scope.functions, globals=scope.globals, random=scope.random,
                      model_kinds=scope.model_kinds, models={**scope.models, **local_models},
                      copies=copies)
        for default in sub.defaults:
            key = default.name.lower()
            if key in overrides:
                value = reader.evaluate(overrides[key].values[0], key, overrides[key].places[0])
            else:
                value = FieldReader(card, inner, usage, self._note_node).evaluate(
                    default.values[0], key, default.places[0])
            inner = _with_parameter(inner, key, value)
        for key in local & overrides.keys():
            inner = _with_parameter(inner, key, reader.evaluate(
                overrides[key].values[0], key, overrides[key].places[0]))
        body = [c for c in sub.body]
        inner = dataclasses.replace(inner, functions=self._functions(
            [c for c in body if c.key == ".func"], inner.functions))
        for inner_card in body:  # local .param cards first, in order, as SPICE reads them
            if inner_card.key == ".param":
                inner = self._local_parameters(inner_card, inner, set(overrides))
        self.expanding.append(sub.local)
        self._cards(body, inner, depth + 1)
        self.expanding.pop()

    def _instance_copies(self, reader: FieldReader, assign: Assign) -> float:
        """The ``m=`` of an instance whose subcircuit has no parameter m: ngspice's
        multiplier, a positive number (at the parameters' nominal values)."""
        if len(assign.values) != 1:
            reader.fail("m= takes one value", assign.location)
        value = reader.evaluate(assign.values[0], "multiplier m", assign.places[0])
        if isinstance(value, Expression):
            value = self._at_nominal(value, assign.places[0], "the instance's m=",
                                     "an instance's copies are made once, at the nominal "
                                     "values")
        if not (value > 0 and math.isfinite(value)):
            reader.fail(f"an instance's m= must be positive, got {value:g}", assign.places[0])
        return value

    def _elements_made(self, sub: Subcircuit, outer: tuple[Subcircuit, ...] = ()) -> float:
        """About how many elements an instance of `sub` makes (within the subcircuits
        `outer`), before any is made: its element cards (every branch of a .if) and its
        instances' recursively, each definition counted once; an instance of one of `outer`,
        of an unknown name or beyond `MAX_NESTING` counts none (the instance, or the
        nesting limit, refuses it)."""
        if (made := self._made.get(id(sub))) is not None:
            return made
        if len(outer) > MAX_NESTING:
            return 0.0
        inside = (*outer, sub)
        total = 0.0
        for card in sub.body:
            if card.key.startswith("."):
                continue
            if card.key[0] != "x":
                total += 1
                continue
            words = _instance_words(card)
            found = words and self._subcircuit(words[-1][1],
                                               (within.local for within in reversed(inside)))
            if found and all(found is not within for within in inside):
                total += self._elements_made(found, inside)
        self._made[id(sub)] = total
        return total

    def _subcircuit(self, name: str, local: Iterable[Mapping[str, Subcircuit]]
                    ) -> Subcircuit | None:
        """The subcircuit `name` names: from the `local` definitions of the subcircuits
        around, innermost first, then the netlist's own."""
        return next((found for definitions in (*local, self.subcircuits)
                     if (found := definitions.get(name.lower())) is not None), None)

    def _local_parameters(self, card: Card, scope: Scope, given: set[str]) -> Scope:
        """A ``.param`` card inside a subcircuit: values in the instance's scope, but for
        those the instance `given`."""
        for item in card.options:
            if item.name.lower() in given:
                continue
            value = _braced(assignment(item, item.location))
            scope = _with_parameter(scope, item.name.lower(), scope.value(scope.expression(value)))
        if card.fields:
            raise NetlistError("expected name=value in .param", card.place(0))
        return scope

    def _note_node(self, key: str, name: str, card: Card, index: int) -> None:
        """Record node `key` where it is first named."""
        if key not in self.nodes:
            self.nodes[key] = Node(key, name, Domain.ELECTRICAL, *card.lazy_place(index))

    # -- dot cards -----------------------------------------------------------------------------
    def _options(self, card: Card) -> None:
        fields = {f.name: f for f in dataclasses.fields(Options)}
        changes = {}
        for index, item in enumerate(card.fields):
            key = OPTION_ALIASES.get(item.lower(), item.lower()) if isinstance(item, str) else ""
            if key in fields and fields[key].type == "bool":
                changes[key] = True     # a flag, as ngspice writes some
            elif key in fields:
                raise NetlistError(f"option '{item}' needs a value: {item}=value",
                                   card.place(index))
            else:
                log.warning("%s: option '%s' is not used by mna; ignored", card.place(index),
                            field_text(item))
        for item in card.options:
            key = OPTION_ALIASES.get(item.name.lower(), item.name.lower())
            if key not in fields or isinstance(item.key, Call):
                log.warning("%s: option '%s' is not used by mna; ignored", item.location,
                            item.name)
                continue
            changes[key] = _option_value(key, item, fields[key].type)
        self.options = dataclasses.replace(self.options, **changes)

    def _temperature(self, card: Card) -> None:
        """``.temp T`` (°C): the circuit's temperature."""
        reader = self._reader(card, self.top_scope, ".temp T")
        value = reader.value("temperature")
        reader.done()
        if not isinstance(value, float) or value <= -273.15:
            reader.fail("the temperature must be a number above -273.15 °C", card.place(0))
        self.options = dataclasses.replace(self.options, temp=value)

    def _model(self, card: Card, scope: Scope) -> None:
        """A ``.model``; inside a subcircuit instance it is that instance's own (its key
        prefixed by the instance's name), its values read there."""
        usage = ".model name type(param=value ...)"
        if not card.fields or not isinstance(card.fields[0], str):
            raise NetlistError(f"usage: {usage}", card.location)
        name, *rest = card.fields
        if len(rest) == 1 and isinstance(rest[0], Call):
            kind, params, places = rest[0].name, rest[0].args, rest[0].places
        elif rest and isinstance(rest[0], str):
            kind, params = rest[0], (*rest[1:], *card.options)
            places = (*(card.place(i) for i in range(2, len(card.fields))),
                      *(a.location for a in card.options))
        else:
            raise NetlistError(f"usage: {usage}", card.location)
        reader = self._reader(card, scope, usage)
        values = {}
        datasheet = DATASHEET_VALUES.get(kind.lower(), frozenset())
        foreign = IGNORED_BY_NGSPICE.get(kind.lower(), frozenset())
        unused, ignored = [], []
        for item, place in zip(params, places):
            if not isinstance(item, Assign) or not isinstance(item.key, str):
                raise NetlistError(f"expected param=value in .model, found '{field_text(item)}'",
                                   place)
            key = item.name.lower()
            if key in datasheet or key in foreign:
                (unused if key in datasheet else ignored).append(field_text(item))
                continue
            values[key] = reader.evaluate(item.values[0], item.name, item.places[0])
        if unused:
            log.info("%s: model %s: %s: datasheet values of LTspice's libraries, not "
                     "parameters of the model; not used", card.location, name, " ".join(unused))
        if ignored:
            log.warning("%s: model %s: %s: other simulators' parameters, which ngspice 39 "
                        "ignores too; not used (the results are ngspice's)", card.location, name,
                        " ".join(ignored))
        key = scope.models.get(name.lower(), name.lower())
        if key in self.models:
            raise NetlistError(f"model '{name}' is defined twice", card.place(0))
        self.models[key] = Model(name, kind.lower(), values, card.location)

    def _initial(self, card: Card, scope: Scope, values: dict[OutputName, Value]) -> None:
        usage = f"{card.key} V(node)=value I(element)=value ..."
        reader = self._reader(card, scope, usage)
        if card.fields:
            reader.fail("expected V(node)=value or I(element)=value, "
                        f"found '{field_text(card.fields[0])}'", card.place(0), usage=True)
        for item in card.options:
            if not isinstance(item.key, Call):
                reader.fail(f"expected V(node)=value or I(element)=value, found "
                            f"'{field_text(item)}'", item.location, usage=True)
            values[output_name(item.key, scope)] = reader.evaluate(item.values[0], "value",
                                                                   item.places[0])

    def _saves(self, card: Card, scope: Scope) -> None:
        if card.fields and isinstance(card.fields[0], str) and card.fields[0].lower() == "pz":
            return   # ngspice's .print pz all: the .pz result holds every pole and zero
        for index, item in enumerate(card.fields):
            if isinstance(item, str) and item.lower() in ("all", "op", "dc", "ac", "tran"):
                self.save_all = self.save_all or item.lower() == "all"
                continue
            if isinstance(item, Braced):
                reader = self._reader(card, scope, f"{card.key} V(node) I(element) {{expr}} ...")
                expression = reader.behavioural(item)
                if expression.uses_time:
                    raise NetlistError("an output expression reads probes, not time",
                                       card.place(index))
                self.saves.append(OutputName("E", (), card.place(index), expression))
                continue
            if not names_output(item):
                raise NetlistError("expected V(node), V(a,b), I(element), @device[current] or "
                                   f"an expression of them, found '{field_text(item)}'",
                                   card.place(index))
            self.saves.append(read_output(item, scope, card.place(index), parts=True))

    def _domain(self, card: Card, scope: Scope) -> None:
        words = [f for f in card.fields if isinstance(f, str)]
        if len(words) < 2 or len(words) != len(card.fields) or card.options:
            raise NetlistError("usage: .domain KIND node ...", card.location)
        try:
            domain = Domain(words[0].lower())
        except ValueError:
            known = ", ".join(d.value for d in Domain)
            raise NetlistError(f"unknown domain '{words[0]}' (known: {known})",
                               card.place(0)) from None
        for index, word in enumerate(words[1:], start=1):
            key = scope.node(word)
            if key == GROUND:
                raise NetlistError("the reference node belongs to every domain",
                                   card.place(index))
            self._note_node(key, scope.prefix + word, card, index)
            self.domain_cards.append((key, domain, card.place(index)))

    # -- domains -------------------------------------------------------------------------------
    def _domains(self) -> dict[str, Node]:
        """Each node's domain: declared, fixed by a keyword, or carried along two-terminal
        branches; electrical where nothing claims one."""
        hints = [(key, domain, f".domain {domain.value}", "a .domain card", location)
                 for key, domain, location in self.domain_cards]
        hints += [(key, domain, reason, e.name, e.location)
                  for e in self.elements for key, domain, reason in e.domain_hints()]
        if hints:   # without one there is nothing to carry: the branches need no walk
            for key, domain in self._carried(hints).items():
                self.nodes[key] = self.nodes[key]._replace(domain=domain)
        return self.nodes

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
                    f"domain conflict at node '{self.nodes[key].name}': {other[0].value} by "
                    f"{other[1]} on {other[2]}, {domain.value} by {reason} on {who}",
                    location,
                )
            claims.setdefault(group, (domain, reason, who, location))
        return {key: claims[root(key)][0] for key in self.nodes if root(key) in claims}


def _braced(assign: Assign) -> Braced:
    """A ``.param`` value as an expression (a bare word is one too)."""
    value = assign.values[0]
    return value if isinstance(value, Braced) else Braced(field_text(value), assign.places[0])


def _folded(expression: Expression) -> Value:
    """A constant expression as its number."""
    return expression.evaluate({}) if expression.is_constant else expression


def _nominal(parameters: dict[str, Value]) -> dict[str, float]:
    """The parameters' values, each from those before it."""
    values: dict[str, float] = {}
    for name, value in parameters.items():
        try:
            values[name] = value.evaluate(values) if isinstance(value, Expression) else value
        except NetlistError as error:
            raise NetlistError(f"parameter {name}: {error.message}", error.location) from None
    return values


def _with_parameter(scope: Scope, key: str, value: Value) -> Scope:
    return dataclasses.replace(scope, substitutions={**scope.substitutions, key: value},
                               known=scope.known | {key})


def _option_value(key: str, item: Assign, kind: str):
    value = item.values[0]
    if not isinstance(value, str):
        raise NetlistError(f"option {key} takes a plain value", item.places[0])
    if key in OPTION_CHOICES:
        choice = OPTION_ALIASES.get(value.lower(), value.lower())
        if choice not in OPTION_CHOICES[key]:
            choices = ", ".join(OPTION_CHOICES[key])
            raise NetlistError(f"option {key} must be one of {choices}", item.places[0])
        return choice
    number = read_number(value, item.places[0], f"option {key}")
    if key in ("temp", "tnom"):
        if number <= -273.15:
            raise NetlistError(f"option {key} must lie above -273.15 °C", item.places[0])
        return number
    if kind == "int":
        if number != int(number) or number < 1:
            raise NetlistError(f"option {key} takes a positive whole number", item.places[0])
        return int(number)
    if kind == "bool":
        return number != 0
    if not number > 0:
        raise NetlistError(f"option {key} must be positive", item.places[0])
    return number


def _model_kinds(cards) -> dict[str, str]:
    """The type of each ``.model`` card's model, by name (read again, and checked, in
    order)."""
    kinds = {}
    for card in cards:
        if card.key == ".model" and len(card.fields) > 1 and isinstance(card.fields[0], str):
            kind = card.fields[1]
            kind = kind.name if isinstance(kind, Call) else kind
            if isinstance(kind, str):
                kinds[card.fields[0].lower()] = kind.lower()
    return kinds


def _distinct(outputs: list[OutputName]) -> tuple[OutputName, ...]:
    """Each requested output once, where first written: ``.print`` cards of several
    analyses may name the same output (one column is what makes it the same)."""
    first: dict[tuple, OutputName] = {}
    for output in outputs:
        text = output.expression.text if output.expression is not None else None
        first.setdefault((output.kind, output.keys, output.part, text), output)
    return tuple(first.values())
