"""The ``mna`` command: run, check, ss."""

from __future__ import annotations

import argparse
import dataclasses
import errno
import logging
import os
import shutil
import signal
import sys
import tempfile
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

import mna
from mna.circuit import OPTION_CHOICES
from mna.elements import Element
from mna.errors import MnaError, NetlistError, OutputError, SchedulerError
from mna.netlist.fields import FieldReader, Scope
from mna.netlist.parser import parse_text
from mna.netlist.requests import Request, StateSpace
from mna.writers import WRITERS, write_results

log = logging.getLogger("mna")

EXIT_OK, EXIT_NETLIST, EXIT_USAGE, EXIT_ANALYSIS, EXIT_INTERNAL = 0, 1, 2, 3, 4

DESCRIPTION = """\
Modified nodal analysis of electrical, mechanical, fluid and thermal systems written as a
SPICE-like netlist.

  mna run FILE [-o DIR]   perform every analysis of the netlist, print a summary, write files
  mna ss FILE             print the state-space models of its .ss cards
  mna check FILE          read and check the netlist without analysing it

Exit status: 0 done, 1 bad netlist, 2 bad command line or unwritable output, 3 analysis
failed, 4 internal error.
"""


class _Version(argparse.Action):
    """``--version``: the installed package's version, looked up only when asked (reading
    the package metadata imports more than a whole small run needs)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, **kwargs):
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit")

    def __call__(self, parser, namespace, values, option_string=None):
        from importlib import metadata

        try:
            version = metadata.version("mna")
        except metadata.PackageNotFoundError:
            version = "unknown"
        print(f"mna {version}")
        parser.exit()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mna", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action=_Version)
    common = argparse.ArgumentParser(add_help=False)
    verbosity = common.add_mutually_exclusive_group()
    verbosity.add_argument("-q", "--quiet", action="store_true", help="print errors only")
    verbosity.add_argument("-v", "--verbose", action="store_true",
                           help="also log what the solvers did, and show the traceback of an "
                                "internal error")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser("run", parents=[common], help="perform every analysis in the netlist")
    run.add_argument("netlist", type=Path)
    run.add_argument("-o", "--output", type=Path, metavar="DIR",
                     help="write one file per analysis into DIR")
    run.add_argument("--format", choices=sorted(WRITERS),
                     help="format of the result files (default csv; needs -o)")
    run.add_argument("--plot", action="store_true",
                     help="also write a PNG per analysis (.mc: histograms and bands over the "
                          "samples; needs -o)")
    run.add_argument("--method", choices=OPTION_CHOICES["method"],
                     help="integration method (overrides .options method=)")
    run.add_argument("--interp", action="store_true",
                     help="transient tables on the tstep grid (as .options interp)")
    run.add_argument("--workers", type=_count, metavar="N",
                     help="processes running .step and .mc points (default every core; 1: "
                          "no pool; overrides .options workers=)")
    run.add_argument("--scheduler", metavar="ADDRESS", type=_scheduler_address,
                     help="run .step and .mc points on a Dask cluster: tcp://HOST:PORT, or "
                          "'local' for a LocalCluster of --workers processes (dask extra)")

    check = commands.add_parser("check", parents=[common],
                                help="parse and elaborate without analysing")
    check.add_argument("netlist", type=Path)

    ss = commands.add_parser("ss", parents=[common],
                             help="print the state-space models of the .ss cards")
    ss.add_argument("netlist", type=Path)
    ss.add_argument("--symbolic", action="store_true", help="keep .param names as symbols")
    ss.add_argument("--format", choices=("text", "json", "latex"), default="text")
    return parser


def _count(text: str) -> int:
    """A whole number of at least 1, as ``.options workers=`` takes."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return int(text)


def main(argv: list[str] | None = None) -> int:
    """The command with arguments `argv` (default: the process's); returns the exit status."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:  # argparse has printed the usage error (or --help, --version)
        return EXIT_USAGE if stop.code else EXIT_OK
    if args.command == "run" and (problem := _output_problem(args)):
        parser.print_usage(sys.stderr)
        print(f"mna run: error: {problem}", file=sys.stderr)
        return EXIT_USAGE
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s: %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.ERROR if args.quiet else logging.INFO if args.verbose else logging.WARNING)
    try:
        circuit = mna.read(args.netlist)
        if args.command == "check":
            return _check(circuit, args.quiet)
        if args.command == "ss":
            return _print_models(circuit, args.symbolic, args.format)
        return _run(circuit, args)
    except NetlistError as error:
        print(error, file=sys.stderr)
        return EXIT_NETLIST
    except SchedulerError as error:
        print(f"mna run: error: --scheduler: {error}", file=sys.stderr)
        return EXIT_USAGE
    except OutputError as error:
        print(f"mna run: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except MnaError as error:
        print(f"{args.netlist}: error: {error}", file=sys.stderr)
        return EXIT_ANALYSIS
    except ModuleNotFoundError as error:
        if error.name not in ("distributed", "dask"):
            raise
        print(f"mna run: error: --scheduler needs Dask: pip install 'mna[dask]' ({error})",
              file=sys.stderr)
        return EXIT_USAGE
    except (KeyboardInterrupt, BrokenPipeError, SystemExit):
        raise
    except Exception as error:   # a bug: say so in one line, the traceback under -v
        if args.verbose:
            traceback.print_exc()
        print(f"{args.netlist}: internal error (a bug in mna; -v shows the traceback): "
              f"{type(error).__name__}: {error}", file=sys.stderr)
        return EXIT_INTERNAL
    finally:
        log.removeHandler(handler)
        log.setLevel(logging.NOTSET)


def _scheduler_address(text: str) -> str:
    """``local`` or ``PROTOCOL://HOST:PORT``, checked before anything connects."""
    protocol, _, rest = text.partition("://")
    host, _, port = rest.rpartition(":")
    if text != "local" and not (protocol.isidentifier() and host and port.isdigit()):
        raise argparse.ArgumentTypeError(f"{text!r} is neither 'local' nor tcp://HOST:PORT")
    return text


def _output_problem(args) -> str | None:
    """Why the output options cannot work, found before any analysis runs (or None)."""
    if args.output is None:
        if args.plot or args.format:
            return f"{'--plot' if args.plot else '--format'} needs -o DIR"
        return None
    if args.output.exists() and not args.output.is_dir():
        return f"-o {args.output}: not a directory"
    existing = args.output
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        return f"-o {args.output}: cannot create files under {existing}"
    return None


def command() -> NoReturn:
    """The ``mna`` process (its console script and ``python -m mna``): `main`, with a
    termination signal unwinding like Ctrl-C (no temporary file is left), and a closed
    pipe (``mna ss FILE | head``) ending the output quietly."""
    signal.signal(signal.SIGTERM, _terminated)
    try:
        status = main()
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        status = EXIT_OK
    except KeyboardInterrupt:
        status = 128 + signal.SIGINT
    sys.exit(status)


def _terminated(signum, frame) -> NoReturn:
    raise SystemExit(128 + signum)


def _title_is_an_element(circuit) -> bool:
    """Whether the title reads as an element line joined to the circuit: then a missing
    title line has likely pushed an element there ('DC motor, my own' reads as a diode, but
    between nodes the circuit does not have)."""
    try:
        (card,) = parse_text("\n" + circuit.title).cards
        cls = Element.class_for(card.key)
        if cls is None:
            return False
        nodes: list[str] = []
        cls.from_fields(FieldReader(card, Scope(), cls.usage,
                                    lambda key, *rest: nodes.append(key)))
    except (NetlistError, ValueError):
        return False
    return any(node in circuit.nodes for node in nodes)


def _check(circuit, quiet: bool) -> int:
    if _title_is_an_element(circuit):
        log.warning("%s:1: the first line is the title, so '%s' is not read as an element",
                    circuit.path, circuit.title)
    if not quiet:
        domains = sorted({node.domain.value for node in circuit.nodes.values()})
        print(f"{circuit.path}: {len(circuit.elements)} elements, {len(circuit.nodes)} nodes "
              f"({', '.join(domains) or 'none'}), {len(circuit.analyses)} analyses")
    return EXIT_OK


def _print_models(circuit, symbolic: bool, fmt: str) -> int:
    """Every ``.ss`` card's model (all sources to the default outputs when the netlist has
    none), as text, JSON or LaTeX."""
    cards = [a for a in circuit.analyses if isinstance(a, StateSpace)]
    if not cards:
        log.warning("%s: no .ss card: the model from every source to the default outputs",
                    circuit.path)
        cards = [StateSpace()]
    models = [mna.perform(dataclasses.replace(card, symbolic=card.symbolic or symbolic),
                          circuit) for card in cards]
    if fmt == "json":
        texts = [m.to_json() for m in models]
        print(texts[0] if len(texts) == 1 else "[\n" + ",\n".join(texts) + "\n]")
    else:
        print("\n".join(m.to_latex() if fmt == "latex" else m.to_text() for m in models))
    return EXIT_OK


def _run(circuit, args) -> int:
    if args.method or args.interp:
        options = dataclasses.replace(circuit.options, method=args.method or
                                      circuit.options.method,
                                      interp=args.interp or circuit.options.interp)
        circuit = dataclasses.replace(circuit, options=options)
    if not circuit.analyses:
        log.warning("%s: the netlist asks for no analysis (%s)", circuit.path,
                    ", ".join(Request.registry))
    if circuit.montecarlo is not None:
        return _run_samples(circuit, args)
    results = mna.run(circuit, args.workers, args.scheduler)
    if not args.quiet:
        for result in results:
            print(result.summary())
    if args.output is not None:
        with _staged(args.output) as staging:
            paths = write_results(results, staging, args.format or "csv")
            if args.plot:
                from mna.plots import write_plots  # matplotlib: only when asked

                paths += write_plots(results, staging)
        if not args.quiet:
            for path in paths:
                print(f"wrote {args.output / path.name}")
    return EXIT_OK


@contextmanager
def _staged(output: Path | None) -> Iterator[Path | None]:
    """A folder inside `output` for the run's files, which are moved into `output` once all
    are written, and removed otherwise: a failed run leaves none of its files (nor the
    folders it made for `output`)."""
    if output is None:
        yield None
        return
    missing = [folder for folder in (output, *output.parents) if not folder.exists()]
    made = missing[-1] if missing else None   # the outermost folder this run makes
    output.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".mna-", suffix=".part", dir=output))
    written = False
    try:
        yield staging
        names = sorted(path.name for path in staging.iterdir())
        for name in names:
            if (output / name).is_dir():
                raise OSError(errno.EISDIR, "a folder of that name is in the way",
                              str(output / name))
        for name in names:
            os.replace(staging / name, output / name)
        written = True
    except OSError as error:
        if error.filename is None:   # not a file's: a pool's or a connection's
            raise
        raise OutputError(f"cannot write {Path(error.filename).name} into {output}: "
                          f"{error.strerror}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if made is not None and not written:
            shutil.rmtree(made, ignore_errors=True)


def _run_samples(circuit, args) -> int:
    """``.mc``: the tables streamed into -o DIR as the samples arrive (memory stays bounded),
    the statistics of every output printed and written to ``mc_summary.csv``; a failing
    sample is left out and counted (`MnaError`, exit status 3, only if every one failed)."""
    from mna.analysis.sweep import Plan, run_points
    from mna.tables import STREAMED, RunTables

    if args.format not in (None, *STREAMED):
        print(f"mna run: error: --format {args.format} cannot stream a .mc run; use "
              f"{' or '.join(STREAMED)}", file=sys.stderr)
        return EXIT_USAGE
    plan = Plan.of(circuit)
    with _staged(args.output) as staging:
        tables = RunTables(plan, staging, args.format or "csv")
        try:
            run_points(plan, tables, args.workers, args.scheduler, tables.failures)
        except BaseException:
            tables.close(keep=False)
            raise
        paths = tables.close()
        if args.plot:
            from mna.plots import write_mc_plots  # matplotlib: only when asked

            paths += write_mc_plots(tables, staging)
    if not args.quiet:
        print(tables.summary())
        for path in paths:
            print(f"wrote {args.output / path.name}")
    return EXIT_OK
