"""``hpinsight report``: one self-contained HTML page (or JSON) from a study or a SMAC run,
or, given several (``--study A --study B``, ``--all-studies``, ``--smac-run`` more than
once), the importance across them (:func:`hpinsight.importance_across_studies`)."""

from __future__ import annotations

import argparse
import json
import logging
import shlex
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from .._optional import import_optional
from .._reporting._save import SUFFIXES
from ..exceptions import InvalidDataError
from ._model import add_model_arguments, below_minimum, model_from
from ._progress import Progress
from ._storage import objective_argument

__all__ = ["add_parser"]

_logger = logging.getLogger("hpinsight.cli")


def add_parser(sub: Any) -> None:
    """Register the ``report`` subcommand."""
    p = sub.add_parser(
        "report",
        help="write an HTML (or JSON) report of an Optuna study or a SMAC run",
        description="Analyse a finished or running study and write one self-contained HTML "
                    "page (figures embedded, no network needed) or a JSON document.",
    )
    src = p.add_argument_group("what to analyse (one of)")
    src.add_argument("--storage", help="Optuna storage: an RDB URL or a journal file path")
    src.add_argument("--study", action="append", metavar="NAME",
                     help="Optuna study name (with --storage); give it several times for "
                          "the importance across those studies")
    src.add_argument("--all-studies", action="store_true",
                     help="the importance across every study in --storage")
    src.add_argument("--smac-run", type=Path, metavar="PATH", action="append",
                     help="the folder of one SMAC run (<output_directory>/<name>/<seed>, "
                          "holding runhistory.json); for a folder that is not a run the "
                          "command lists the runs below it and exits with status 1. Give "
                          "it several times for the importance across those runs")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="analyse several studies on this Dask scheduler (tcp://host:8786) "
                        "instead of on this machine; the result is the same")
    p.add_argument("--out", default=None, metavar="PATH",
                   help="the file to write, in an existing folder (default: "
                        "hpinsight-report.html, or hpinsight-report.json with --json; an "
                        "existing file is replaced); '-' writes the report to stdout")
    p.add_argument("--json", action="store_true", help="write JSON for machines instead of HTML")
    p.add_argument("--top", type=int, default=None,
                   help="parameters shown in detail (3; one study's report only)")
    p.add_argument("--objective", type=objective_argument, default=None, metavar="OBJECTIVE",
                   help="report one objective of a multi-objective study alone: an index, a "
                        "name as Optuna gives it (values_1, or a metric name) or 'front' for "
                        "reaching the Pareto front (default: one page with a section per "
                        "objective and for the front, and what is safe to fix for all of them)")
    add_model_arguments(p)
    p.add_argument("--seed", type=int, default=0, help="model seed (0)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Build and write the report; the exit status of the command."""
    from .._reporting import report
    from ..exceptions import HPInsightError

    if (args.smac_run is None) == (args.storage is None):
        _logger.error("give either --storage and --study (Optuna) or --smac-run PATH (SMAC).")
        return 2
    if args.smac_run is not None and (args.study or args.all_studies):
        # accepted, --study was silently ignored beside --smac-run
        _logger.error("--study and --all-studies choose studies of an Optuna --storage; a "
                      "SMAC run is given by --smac-run PATH alone (several for the "
                      "importance across them).")
        return 2
    if args.study and len(set(args.study)) < len(args.study):
        _logger.error("--study %s is given twice; give each study once.",
                      next(n for n in args.study if args.study.count(n) > 1))
        return 2
    if args.storage is not None and not args.study and not args.all_studies:
        _logger.error("--storage needs --study NAME (several for the importance across "
                      "them) or --all-studies.")
        return 2
    if args.all_studies and args.study:
        _logger.error("--all-studies takes every study of --storage; give it without --study.")
        return 2
    across = args.all_studies or len(args.study or ()) > 1 or len(args.smac_run or ()) > 1
    if args.scheduler is not None and not across:
        _logger.error("--scheduler analyses several studies on a Dask cluster; give several "
                      "--study (or --all-studies, or several --smac-run).")
        return 2
    if across and args.top is not None:
        # it was accepted, and both pages came out the same
        _logger.error("--top chooses the parameters one study's report shows in detail; the "
                      "report across studies shows every parameter. Leave --top out.")
        return 2
    if args.smac_run is not None and len({p.resolve() for p in args.smac_run}) < len(
            args.smac_run):
        _logger.error("a --smac-run folder is given twice; give each run once.")
        return 2
    args.top = 3 if args.top is None else args.top
    problem = below_minimum(args, top=1, n_trees=1, seed=0)
    if problem is not None:
        _logger.error(problem)
        return 2
    # None: the report goes to stdout (--out -), and nothing else does
    target = None if args.out == "-" else Path(
        args.out or ("hpinsight-report.json" if args.json else "hpinsight-report.html"))
    if target is not None:
        if args.json and target.suffix.lower() != ".json":
            _logger.error("--json writes JSON: give --out a .json path (got %s).", target)
            return 2
        if target.is_dir():
            _logger.error("--out %s is a folder; give a file path, e.g. %s.", target,
                          target / ("report.json" if args.json else "report.html"))
            return 2
        if target.suffix.lower() not in SUFFIXES:  # as Report.save: r.txt got the page
            _logger.error("--out writes a .html page or a .json document, by its suffix; got "
                          "%s. Give a path ending in .html or .json.", target)
            return 2
        if not target.parent.exists():
            _logger.error("the folder of --out (%s) does not exist; create it first "
                          "(mkdir -p %s).", target.parent, shlex.quote(str(target.parent)))
            return 2
    if across:
        return _run_across(args, target, out)
    try:
        history, where = _load(args)
    except _UsageError as exc:  # e.g. a multi-objective study without --objective
        _logger.error("%s", exc)
        return 2
    except Exception as exc:  # a bad URL, a missing study or folder: say which, exit 1
        _logger.error("%s", exc)
        return 1
    if not args.json:
        import_optional("matplotlib", "hpinsight report")
    bar = Progress(logger=_logger)
    try:
        rep = report(history, label=where, top=args.top, surrogate=model_from(args),
                     seed=args.seed, progress=bar)
    except HPInsightError as exc:
        bar.close()
        message = str(exc)  # named once: the report's own errors name the study already
        _logger.error("%s", message if where in message else f"{where}: {message}")
        return 1
    return _write_out(
        lambda as_json: (json.dumps(rep.to_dict(), indent=2, allow_nan=False) if as_json
                         else rep.html()), args, target, out, bar, where)


def _write_out(render: Callable[[bool], str], args: argparse.Namespace, target: Path | None,
               out: TextIO, bar: Progress, where: str) -> int:
    """Write the report ``render(as_json)`` gives to ``target``, or to ``out`` without one
    (JSON with ``--json`` or a ``.json`` target); closes ``bar``; the exit status."""
    from ..exceptions import HPInsightError

    try:
        bar("writing the report" + ("" if target is None else f" to {target.name}"), 1, 1)
        text = render(args.json or (target is not None and target.suffix.lower() == ".json"))
        if target is None:
            out.write(text if text.endswith("\n") else text + "\n")
            out.flush()
            return 0
        target.write_text(text, encoding="utf-8")
    except HPInsightError as exc:
        _logger.error("%s: %s", where, exc)
        return 1
    except OSError as exc:
        _logger.error("cannot write %s: %s", "the report to stdout" if target is None else target,
                      exc)
        return 1
    finally:
        bar.close()
    out.write(f"report: {target.resolve()}\n")
    return 0


class _UsageError(Exception):
    """An option does not fit what was opened (exit status 2)."""


def _load(args: argparse.Namespace) -> tuple[Any, str]:
    if args.smac_run is not None:
        return _smac_history(args.smac_run[0], args.objective)
    optuna = import_optional("optuna", "hpinsight report --storage")
    from ._storage import describe, open_storage

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    storage = None
    try:
        storage = open_storage(optuna, args.storage)
    except Exception as exc:
        raise RuntimeError(f"cannot open study {args.study[0]!r} in "
                           f"{describe(args.storage)}: {exc}") from exc
    return _study_history(optuna, storage, args.study[0], args)


def _smac_history(path: Path, objective: int | str | None, *,
                  several: bool = True) -> tuple[Any, str]:
    """A saved SMAC run's history, or with ``several`` and no ``objective``, a run of
    several objectives as one history per objective (a report of every objective and
    the Pareto front, as for an Optuna study)."""
    from .._history import TrialHistory
    from ..adapters import from_smac
    from ..adapters._smac import objective_histories

    if not path.exists():
        raise FileNotFoundError(f"no SMAC run at {str(path)!r}")
    problem = _smac_run_problem(path)
    if problem:
        raise FileNotFoundError(problem)
    problem = _smac_objective_problem(path, objective)
    if problem:
        raise _UsageError(problem)
    each = objective_histories(TrialHistory, path) if several and objective is None else None
    if each is not None:
        return each, f"SMAC run {path}"
    history = from_smac(path, objective=objective)
    return history, history.label or f"SMAC run {path}"  # with the objective chosen, if any


def _study_history(optuna: Any, storage: Any, name: str,
                   args: argparse.Namespace) -> tuple[Any, str]:
    """One study of an open storage as a history, and the words that say which."""
    from ..adapters import from_optuna
    from ._storage import describe, known_studies, objective_problem

    try:
        study = optuna.load_study(study_name=name, storage=storage)
    except Exception as exc:
        raise RuntimeError(f"cannot open study {name!r} in {describe(args.storage)}: "
                           f"{exc}{known_studies(optuna, storage)}") from exc
    problem = objective_problem(study, args.objective)
    if problem:
        raise _UsageError(problem)
    if args.objective is None and len(study.directions) > 1:  # one page, every objective
        return study, f"study {name!r} ({describe(args.storage)})"
    history = from_optuna(study, objective=args.objective)
    which = f", {history.objective_name}" if len(study.directions) > 1 else ""
    return history, f"study {name!r} ({describe(args.storage)}){which}"


def _load_several(args: argparse.Namespace) -> tuple[dict[str, Any], str, str]:
    """Every study asked for, by name, what they are in words, and which ones
    ``--all-studies`` left out and why (empty when none)."""
    if args.smac_run is not None:
        runs = {str(path): _smac_history(path, args.objective, several=False)[0]
                for path in args.smac_run}
        return runs, f"{len(runs)} SMAC runs", ""
    optuna = import_optional("optuna", "hpinsight report --storage")
    from ._storage import describe, open_storage

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    try:
        storage = open_storage(optuna, args.storage)
        names = (sorted(optuna.get_all_study_names(storage)) if args.all_studies
                 else list(dict.fromkeys(args.study)))
    except Exception as exc:
        raise RuntimeError(f"cannot open {describe(args.storage)}: {exc}") from exc
    if len(names) < 2:
        raise _UsageError(f"{describe(args.storage)} holds {len(names)} "
                          f"stud{'y' if len(names) == 1 else 'ies'}; the importance "
                          "across studies needs two or more (for one, give --study NAME).")
    if not args.all_studies:  # each named on purpose: one that cannot be read is an error
        studies = {name: _study_history(optuna, storage, name, args)[0] for name in names}
        return studies, f"{len(studies)} studies in {describe(args.storage)}", ""
    studies, left_out = _usable_studies(optuna, storage, names, args)
    for name, why in left_out.items():
        _logger.warning("--all-studies leaves out study %r: %s.", name, why)
    if len(studies) < 2:
        raise InvalidDataError(
            f"{describe(args.storage)} holds {len(names)} studies, of which {len(studies)} "
            "can be compared; the importance across studies needs two or more.")
    left = ("left out: " + ", ".join(f"{name!r} ({why})" for name, why in left_out.items())
            if left_out else "")
    return studies, f"{len(studies)} studies in {describe(args.storage)}", left


def _usable_studies(optuna: Any, storage: Any, names: list[str],
                    args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, str]]:
    """For ``--all-studies``: the studies of ``names`` that can be compared, and why each
    other one cannot (no finished trial, or fewer than the comparison needs). A storage
    often holds a study that was created and never run; it should not stop the others'
    comparison, and it is named, not dropped in silence."""
    from .._across import MIN_TRIALS
    from ..adapters import as_history

    studies: dict[str, Any] = {}
    left_out: dict[str, str] = {}
    for name in names:
        try:  # a study of several objectives is compared on reaching its Pareto front
            history = as_history(_study_history(optuna, storage, name, args)[0],
                                 "hpinsight report")
        except InvalidDataError:
            left_out[name] = "no finished trial with parameters"
            continue
        except _UsageError:  # --objective names none of its objectives: it is not compared
            # (stopping the whole comparison told the user to change --objective, which
            # would change what the studies that have it are compared on)
            left_out[name] = f"--objective {args.objective} is none of its objectives"
            continue
        if history.n_trials < MIN_TRIALS:
            left_out[name] = f"{history.n_trials} usable trial(s), at least {MIN_TRIALS} needed"
            continue
        studies[name] = history
    if studies and not set.intersection(*(set(h.space.names) for h in studies.values())):
        # the comparison needs a parameter every study has: keep the studies that share
        # the most common one, and name the others
        counts = Counter(p for h in studies.values() for p in h.space.names)
        common, n = counts.most_common(1)[0]
        if n >= 2:
            for name in [k for k, h in studies.items() if common not in h.space.names]:
                left_out[name] = (f"it has no {common!r}, which the other {n} studies share "
                                  f"(its parameters: {', '.join(studies.pop(name).space.names)})")
    return studies, left_out


def _run_across(args: argparse.Namespace, target: Path | None, out: TextIO) -> int:
    """The importance across several studies, written as HTML or JSON."""
    from .._across import importance_across_studies
    from .._reporting._across import across_document, across_html
    from ..exceptions import HPInsightError

    try:
        studies, where, left = _load_several(args)
    except _UsageError as exc:
        _logger.error("%s", exc)
        return 2
    except Exception as exc:
        _logger.error("%s", exc)
        return 1
    if not args.json:
        import_optional("matplotlib", "hpinsight report")
    if args.objective is not None:  # (the pages of two objectives differed in numbers only)
        where += f", objective {args.objective}"
    title = f"hpinsight: importance across {where}"
    source = f"{where}; {left}" if left else where  # the page and the document name them
    bar = Progress(logger=_logger)
    try:
        result = importance_across_studies(
            studies, surrogate=model_from(args), seed=args.seed, client=args.scheduler,
            progress=lambda desc, done, total: bar(f"{desc}: {done} of {total} done", done,
                                                   total))
    except HPInsightError as exc:
        bar.close()
        _logger.error("%s: %s", where, exc)
        return 1
    except Exception as exc:  # the scheduler cannot be reached, a worker cannot import us
        bar.close()
        _logger.error("the analysis on %s failed: %s", args.scheduler or "this machine", exc)
        return 1
    return _write_out(
        lambda as_json: (json.dumps(across_document(result, title=title, source=source),
                                    indent=2, allow_nan=False) if as_json
                         else across_html(result, title=title, source=source)),
        args, target, out, bar, where)


def _smac_objective_problem(path: Path, objective: int | str | None) -> str | None:
    """What is wrong with ``--objective`` for the SMAC run at ``path``, in the command
    line's words (its objectives are those its ``scenario.json`` names); None when it fits
    or the scenario does not say."""
    if objective is None or not (path / "scenario.json").is_file():
        return None
    from ..adapters._smac import listed_objectives

    names = listed_objectives(json.loads((path / "scenario.json").read_text()).get("objectives")) or []
    if len(names) < 2:
        return (f"--objective {objective!r}: SMAC run {path} has one objective; leave "
                "--objective out." if objective not in (0, *names) else None)
    if objective == "front" or objective in names or (
            isinstance(objective, int) and 0 <= objective < len(names)):
        return None
    return (f"--objective {objective!r} names no objective of SMAC run {path}; use one of "
            f"{', '.join(names)} or front, or an index 0 to {len(names) - 1}.")


#: Runs listed when --smac-run names a folder holding several.
_MAX_LISTED = 10


def _smac_run_problem(path: Path) -> str | None:
    """Why ``path`` is not the folder of one SMAC run; None when it is one.

    A run folder holds ``runhistory.json`` (as ``find_run_folder`` of the SMAC adapter
    recognises one). ``hp.adapters.from_smac`` also accepts a parent holding exactly one
    run and walks down to it; the command line reads only the folder it is given, so that
    a report never bears the name of a folder whose run was not the one meant.
    """
    if path.is_dir() and (path / "runhistory.json").is_file():
        return None
    head = (f"{path} is not a SMAC run folder (a run folder, <output_directory>/<name>/"
            "<seed>, holds runhistory.json, configspace.json and scenario.json)")
    if not path.is_dir():
        parent_is_run = (path.parent / "runhistory.json").is_file()
        return head + (f"; pass the folder that holds it: --smac-run "
                       f"{shlex.quote(str(path.parent))}" if parent_is_run else "")
    runs = sorted(p.parent for p in path.glob("**/runhistory.json"))
    if not runs:
        return head + ", and there is no run below it either."
    listed = "".join(f"\n  {shlex.quote(str(run))}" for run in runs[:_MAX_LISTED])
    more = (f"\n  and {len(runs) - _MAX_LISTED} more" if len(runs) > _MAX_LISTED else "")
    return (f"{head}. It holds {len(runs)} run{'s' if len(runs) > 1 else ''} below it; "
            f"pass one of them to --smac-run:{listed}{more}")
