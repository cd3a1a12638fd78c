"""The ``mna`` command: ``run``, ``check`` (and the analyses' own subcommands)."""

from __future__ import annotations

import argparse
import dataclasses
import gc
import logging
import sys
from pathlib import Path
from typing import NoReturn

import mna
from mna.circuit import OPTION_CHOICES
from mna.elements import Element
from mna.errors import MnaError, NetlistError
from mna.netlist import collector_paused
from mna.netlist.fields import FieldReader, Scope
from mna.netlist.parser import parse_text
from mna.results import write_results

log = logging.getLogger("mna")

EXIT_OK, EXIT_NETLIST, EXIT_USAGE, EXIT_ANALYSIS = 0, 1, 2, 3


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mna", description=__doc__)
    common = argparse.ArgumentParser(add_help=False)
    verbosity = common.add_mutually_exclusive_group()
    verbosity.add_argument("-q", "--quiet", action="store_true", help="print errors only")
    verbosity.add_argument("-v", "--verbose", action="store_true",
                           help="also log what the solvers did (continuation, step counts)")
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("run", parents=[common], help="perform every analysis in the netlist")
    run.add_argument("netlist", type=Path)
    run.add_argument("-o", "--output", type=Path, metavar="DIR", help="write one file per analysis")
    run.add_argument("--format", choices=("csv", "parquet"), default="csv")
    run.add_argument("--plot", action="store_true", help="also write a PNG per analysis (needs -o)")
    run.add_argument("--method", choices=OPTION_CHOICES["method"],
                     help="integration method (overrides .options method=)")

    check = commands.add_parser("check", parents=[common],
                                help="parse and elaborate without analysing")
    check.add_argument("netlist", type=Path)

    ss = commands.add_parser("ss", parents=[common],
                             help="print the state-space models of the .ss cards")
    ss.add_argument("netlist", type=Path)
    ss.add_argument("--symbolic", action="store_true", help="keep .param names as symbols")
    ss.add_argument("--format", choices=("text", "json", "latex"), default="text")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:  # argparse has printed the usage error (or --help)
        return EXIT_USAGE if stop.code else EXIT_OK
    if args.command == "run" and args.plot and args.output is None:
        parser.print_usage(sys.stderr)
        print("mna run: error: --plot needs -o DIR", file=sys.stderr)
        return EXIT_USAGE
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s: %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.ERROR if args.quiet else logging.INFO if args.verbose else logging.WARNING)
    # the modules and the circuit live as long as the command: kept out of the collector's
    # passes, which would find nothing in them (once the collector resumes, its first pass
    # walks every object made while it paused: ~25 ms after a 20,000-line netlist); not
    # where a caller has frozen objects of its own, which unfreezing would release
    freezes = gc.get_freeze_count() == 0
    try:
        with collector_paused():
            circuit = mna.read(args.netlist)
            if freezes:
                gc.freeze()
        if args.command == "check":
            return _check(circuit)
        if args.command == "ss":
            from mna.analysis.statespace import print_models

            return print_models(circuit, args.symbolic, args.format)
        return _run(circuit, args)
    except NetlistError as error:
        print(error, file=sys.stderr)
        return EXIT_NETLIST
    except MnaError as error:
        print(f"{args.netlist}: error: {error}", file=sys.stderr)
        return EXIT_ANALYSIS
    finally:
        if freezes:
            gc.unfreeze()
        log.removeHandler(handler)
        log.setLevel(logging.NOTSET)


def command() -> NoReturn:
    """The ``mna`` process (its console script and ``python -m mna``): `main`, then exit
    with every object frozen, so that the interpreter's collections at shutdown skip them
    (they walk every module's objects: ~50 ms after scipy is imported)."""
    status = main()
    gc.freeze()
    sys.exit(status)


def _reads_as_an_element(line: str) -> bool:
    """Whether `line`, the title, is an element line that a missing title line pushed there:
    it is one when the element's own reader accepts it ('DC motor driving a load' is not)."""
    try:
        cards = parse_text("\n" + line).cards
        cls = Element.class_for(cards[0].head.text) if len(cards) == 1 else None
        if cls is None:
            return False
        cls.from_fields(FieldReader(cards[0], Scope(), cls.usage, lambda *note: None))
    except NetlistError:
        return False
    return True


def _check(circuit) -> int:
    if _reads_as_an_element(circuit.title):
        log.warning("%s:1: the first line is the title, so '%s' is not read as an element",
                    circuit.path, circuit.title)
    domains = sorted({node.domain.value for node in circuit.nodes.values()})
    print(f"{circuit.path}: {len(circuit.elements)} elements, {len(circuit.nodes)} nodes "
          f"({', '.join(domains) or 'none'}), {len(circuit.analyses)} analyses")
    return EXIT_OK


def _run(circuit, args) -> int:
    if args.method:
        options = dataclasses.replace(circuit.options, method=args.method)
        circuit = dataclasses.replace(circuit, options=options)
    if not circuit.analyses:
        log.warning("%s: the netlist asks for no analysis (.op, .dc, .ac, .tran, .ss)",
                    circuit.path)
    results = mna.run(circuit)
    for result in results:
        print(result.summary())
    if args.output is not None:
        paths = write_results(results, args.output, args.format)
        if args.plot:
            from mna.plots import write_plots

            paths += write_plots(results, args.output)
        for path in paths:
            print(f"wrote {path}")
    return EXIT_OK
