"""README.md runs as written: every Python block, and every ``hpinsight`` command line.

The fenced code blocks are read from the Markdown (```` ``` ```` or ``~~~`` fences, also
indented in list items). Every ```` ```python ```` block is executed, statement by
statement, in a fresh namespace with the repository's README as its file name (so a
traceback points at README lines) and a temporary directory as the working directory.
A block is run with nothing but what the README states; where it needs more, an HTML
comment on the line before its fence says so, and the README's prose says the same in
words::

    <!-- test: DIRECTIVE; DIRECTIVE ... -->

* ``name NAME``: later blocks may continue this one;
* ``continues NAME`` (or ``continues previous``): run after that block, in the
  namespace it left (one test runs the whole chain, in order);
* ``setup NAME``: before the block, :data:`SETUPS` ``[NAME]`` puts the names the
  README's prose promises into the namespace (your objective, your SMAC scenario, the
  demo's study file);
* ``skip REASON``: not run; reported as a skip with the reason. Only for what cannot
  run where the tests run (PostgreSQL and Chromium can: see README, Set-up).

An expression statement whose comment is a quoted string, or the value's ``repr`` (it
starts with the value's type name and a parenthesis), must evaluate to what the comment
says: ``verdict  # 'indistinguishable from nothing'``, ``imp  # Importance(lr: ...)``.

Command lines: a ``hpinsight ...`` line of a bash block must parse with the command
line's own parser; an ``hpinsight SUBCOMMAND ...`` code span in the prose must name an
existing subcommand and only options it has.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import io
import logging
import math
import re
import shlex
import sys
import tokenize
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`\s]*)")
_MARKER = re.compile(r"^\s*<!--\s*test:\s*(?P<body>.*?)\s*-->\s*$")


@dataclass
class Block:
    """One fenced code block of the README."""

    lang: str
    code: str
    line: int  # 1-based line of the first code line
    heading: str
    directives: dict[str, str] = field(default_factory=dict)


def _parse_directives(body: str, where: int) -> dict[str, str]:
    found: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in body.split(";"))):
        key, _, value = part.partition(" ")
        key = key.rstrip(":")
        if key not in ("name", "continues", "setup", "skip"):
            raise ValueError(f"README.md:{where}: unknown test directive {part!r}")
        if key != "skip" and not value.strip():
            raise ValueError(f"README.md:{where}: {key!r} needs a value")
        if key == "skip" and not value.strip():
            raise ValueError(f"README.md:{where}: a skip must say why")
        found[key] = value.strip()
    return found


def parse_blocks(text: str) -> list[Block]:
    """The fenced code blocks of ``text``, with the test directives before each."""
    lines = text.splitlines()
    blocks: list[Block] = []
    heading = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        if re.match(r"#{1,6}\s", line):
            heading = line.lstrip("#").strip()
        match = _FENCE.match(line)
        if not match:
            if _MARKER.match(line):
                # a marker must sit right before a fence (blank lines allowed)
                j = i + 1
                while j < len(lines) and not lines[j].strip():
                    j += 1
                if j == len(lines) or not _FENCE.match(lines[j]):
                    raise ValueError(f"README.md:{i + 1}: a test marker not followed by a fence")
            i += 1
            continue
        indent, fence = len(match["indent"]), match["fence"]
        directives: dict[str, str] = {}
        j = i - 1
        while j >= 0 and not lines[j].strip():
            j -= 1
        if j >= 0 and (marker := _MARKER.match(lines[j])):
            directives = _parse_directives(marker["body"], j + 1)
        body: list[str] = []
        i += 1
        while i < len(lines):
            closing = lines[i].strip()
            if closing.startswith(fence[0] * len(fence)) and not closing.strip(fence[0]):
                break
            body.append(lines[i][indent:] if lines[i][:indent].strip() == "" else lines[i])
            i += 1
        else:
            raise ValueError(f"README.md:{i}: unclosed code fence")
        blocks.append(Block(match["info"].lower(), "\n".join(body) + "\n",
                            i - len(body) + 1, heading, directives))
        i += 1
    return blocks


BLOCKS = parse_blocks(README.read_text(encoding="utf-8"))
PYTHON = [b for b in BLOCKS if b.lang in ("python", "py")]


def _chains(blocks: list[Block]) -> list[list[Block]]:
    """Blocks grouped into the chains that run in one namespace, in README order."""
    chains: list[list[Block]] = []
    by_name: dict[str, list[Block]] = {}
    for block in blocks:
        after = block.directives.get("continues")
        if after is None:
            chain = [block]
            chains.append(chain)
        else:
            if after == "previous":
                if not chains:
                    raise ValueError(f"README.md:{block.line}: nothing before to continue")
                chain = next(c for c in chains if c[-1] is blocks[blocks.index(block) - 1])
            elif after in by_name:
                chain = by_name[after]
            else:
                raise ValueError(f"README.md:{block.line}: continues unknown block {after!r}")
            chain.append(block)
        if "name" in block.directives:
            by_name[block.directives["name"]] = chain
    return chains


CHAINS = _chains(PYTHON)


# ---------------------------------------------------------------------------------------
# the set-ups the README's prose states


def _load_example(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"_readme_{name}", ROOT / "examples" / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def setup_demo_study(ns: dict[str, Any], tmp_path: Path) -> None:
    """``hpinsight-demo/study.db`` as ``bash scripts/demo.sh`` leaves it: study "demo",
    150 trials of the demo's objective under ``TPESampler(seed=0)`` (the demo's live
    refits and report do not change the trials, so they are left out here)."""
    import optuna
    import sqlalchemy

    demo = _load_example("demo_optuna_sqlite")
    trials = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=0))
    trials.optimize(demo.objective, n_trials=150)
    (tmp_path / "hpinsight-demo").mkdir()
    storage = optuna.storages.RDBStorage(f"sqlite:///{tmp_path}/hpinsight-demo/study.db")
    # the file's content is what matters; one fsync per trial would cost seconds
    sqlalchemy.event.listen(storage.engine, "connect",
                            lambda conn, _record: conn.execute("PRAGMA synchronous=OFF"))
    storage.engine.dispose()
    optuna.create_study(study_name="demo", storage=storage).add_trials(trials.trials)
    storage.engine.dispose()


def _objective(trial: Any) -> float:
    """The Quickstart's toy loss as an Optuna objective.

    ``momentum`` is suggested in every trial (it acts under SGD only): a define-by-run
    conditional parameter can make ``tree.leaf_for(study.best_params)`` raise, which
    the README's "Partial dependence" section states.
    """
    lr = trial.suggest_float("lr", 1e-5, 1.0, log=True)
    layers = trial.suggest_int("layers", 1, 8)
    optimizer = trial.suggest_categorical("optimizer", ["adam", "sgd"])
    momentum = trial.suggest_float("momentum", 0.0, 0.99)
    error = (math.log10(lr) + 3) ** 2 / 10 + 0.02 * layers
    if optimizer == "sgd":
        error += 0.5 * (0.9 - momentum) ** 2
    return error


def setup_objective(ns: dict[str, Any], tmp_path: Path) -> None:
    """``objective``: an Optuna objective with the Quickstart's four parameters."""
    ns["objective"] = _objective


def setup_smac(ns: dict[str, Any], tmp_path: Path) -> None:
    """``scenario`` (40 trials, named "name", in ``smac3_output/``) and ``train``: the
    space and training function of ``examples/smac_live_importance.py``.

    SMAC 2.4's local search averages its step times with ``np.mean``, of an empty list
    when a search ends before its first step (it depends on timing): NumPy's "Mean of
    empty slice" and its division by zero, SMAC's warnings and not ours, are not errors
    in this block.
    """
    from smac import Scenario

    warnings.filterwarnings("ignore", "Mean of empty slice", RuntimeWarning)
    warnings.filterwarnings("ignore", "invalid value encountered in scalar divide",
                            RuntimeWarning, module="numpy")

    example = _load_example("smac_live_importance")
    ns["scenario"] = Scenario(example.configspace(), deterministic=True, n_trials=40, seed=0,
                              name="name", output_directory=Path("smac3_output"))
    ns["train"] = example.train


SETUPS: dict[str, Callable[[dict[str, Any], Path], None]] = {
    "demo_study": setup_demo_study,
    "objective": setup_objective,
    "smac": setup_smac,
}


# ---------------------------------------------------------------------------------------
# running a block


def _comments(code: str) -> dict[int, str]:
    """Line number (1-based, in the block) -> the comment's text on that line."""
    found = {}
    for tok in tokenize.generate_tokens(io.StringIO(code).readline):
        if tok.type == tokenize.COMMENT:
            found[tok.start[0]] = tok.string[1:].strip()
    return found


def _check_claim(value: Any, claim: str, where: str) -> None:
    if claim[:1] in ("'", '"', "[", "("):  # a string, list or tuple literal: equal to it
        try:
            expected = ast.literal_eval(claim)
        except (ValueError, SyntaxError):
            return
        assert value == expected, f"{where}: the README says {claim}, got {value!r}"
    elif claim.startswith(f"{type(value).__name__}("):
        assert repr(value) == claim, f"{where}: the README says {claim}, got {value!r}"


def run_block(block: Block, ns: dict[str, Any]) -> None:
    """Execute ``block`` in ``ns`` statement by statement, checking stated values."""
    source = "\n" * (block.line - 1) + block.code  # README line numbers in tracebacks
    tree = ast.parse(source, filename=str(README))
    comments = {k + block.line - 1: v for k, v in _comments(block.code).items()}
    for stmt in tree.body:
        where = f"README.md:{stmt.lineno}"
        if isinstance(stmt, ast.Expr):
            value = eval(compile(ast.Expression(stmt.value), str(README), "eval"), ns)
            claim = comments.get(stmt.end_lineno or stmt.lineno)
            if claim:
                _check_claim(value, claim, where)
        else:
            exec(compile(ast.Module([stmt], type_ignores=[]), str(README), "exec"), ns)


@contextlib.contextmanager
def _like_a_script(ns: dict[str, Any]) -> Iterator[None]:
    """Afterwards, undo what a script's exit would: stop live callbacks, close figures,
    and put back the root logger (SMAC's facade configures logging for the process)."""
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    try:
        yield
    finally:
        for value in ns.values():
            if (type(value).__module__.startswith("hpinsight.integrations")
                    and hasattr(value, "close")):
                value.close()
        if "matplotlib.pyplot" in sys.modules:
            sys.modules["matplotlib.pyplot"].close("all")
        root.setLevel(level)
        root.handlers[:] = handlers


def _chain_id(chain: list[Block]) -> str:
    return f"L{chain[0].line}-" + re.sub(r"\W+", "-", chain[0].heading.lower()).strip("-")[:40]


@pytest.mark.slow
@pytest.mark.parametrize("chain", CHAINS, ids=[_chain_id(c) for c in CHAINS])
def test_python_block_runs_as_written(chain: list[Block], tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    ns: dict[str, Any] = {"__name__": "__readme__"}
    with _like_a_script(ns):
        for block in chain:
            if "skip" in block.directives:
                pytest.skip(f"README.md:{block.line}: {block.directives['skip']}")
            for name in filter(None, re.split(r"[,\s]+", block.directives.get("setup", ""))):
                if name not in SETUPS:
                    pytest.fail(f"README.md:{block.line}: unknown set-up {name!r}")
                SETUPS[name](ns, tmp_path)
            run_block(block, ns)


def test_readme_has_its_python_blocks() -> None:
    # a broken fence parser would make every test above vanish silently
    assert len(PYTHON) >= 6, [b.line for b in PYTHON]
    assert all(b.code.strip() for b in PYTHON)
    assert sum(len(c) for c in CHAINS) == len(PYTHON)


# ---------------------------------------------------------------------------------------
# command lines


def _parser() -> Any:
    from hpinsight.cli import _parser as make

    return make()


def _subcommands(parser: Any) -> dict[str, Any]:
    import argparse

    (action,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _command_lines() -> Iterator[tuple[int, list[str]]]:
    for block in BLOCKS:
        if block.lang not in ("bash", "sh", "shell", "console"):
            continue
        for k, line in enumerate(block.code.splitlines()):
            words = shlex.split(line, comments=True)
            if words[:1] == ["hpinsight"]:
                yield block.line + k, words[1:]


COMMAND_LINES = list(_command_lines())


@pytest.mark.parametrize(("line", "argv"), COMMAND_LINES,
                         ids=[f"L{n}-{a[0]}" for n, a in COMMAND_LINES])
def test_command_line_parses(line: int, argv: list[str],
                             capsys: pytest.CaptureFixture[str]) -> None:
    try:
        args = _parser().parse_args(argv)
    except SystemExit:
        pytest.fail(f"README.md:{line}: `hpinsight {shlex.join(argv)}` does not parse:\n"
                    f"{capsys.readouterr().err}")
    assert args.command == argv[0]


def _inline_commands() -> Iterator[tuple[int, list[str]]]:
    fenced: set[int] = set()
    for block in BLOCKS:
        fenced.update(range(block.line - 1, block.line + block.code.count("\n") + 1))
    for n, line in enumerate(README.read_text(encoding="utf-8").splitlines(), start=1):
        if n in fenced:
            continue
        for span in re.findall(r"`(hpinsight [^`]+)`", line):
            yield n, shlex.split(span)[1:]


INLINE = list(_inline_commands())


def test_inline_command_lines_use_existing_options() -> None:
    assert len(COMMAND_LINES) >= 3, COMMAND_LINES
    assert len(INLINE) >= 3, INLINE
    parser = _parser()
    commands = _subcommands(parser)
    wrong = []
    for line, argv in INLINE:
        sub = commands.get(argv[0])
        if sub is None:
            wrong.append(f"README.md:{line}: no subcommand {argv[0]!r}")
            continue
        known = set(sub._option_string_actions) | set(parser._option_string_actions)
        for word in argv[1:]:
            option = word.split("=", 1)[0]
            if option.startswith("-") and option != "-" and option not in known:
                wrong.append(f"README.md:{line}: `hpinsight {argv[0]}` has no option {option}")
    assert not wrong, "\n".join(wrong)


# ---------------------------------------------------------------------------------------
# the JSON report's keys


def test_json_report_keys_are_the_ones_listed() -> None:
    import hpinsight as hp
    from hpinsight._reporting._build import SCHEMA

    text = README.read_text(encoding="utf-8")
    section = text.split("### The JSON report", 1)[1].split("\n#", 1)[0]
    listed = re.findall(r"^\| `(\w+)` \|", section, flags=re.MULTILINE)
    space = hp.SearchSpace([hp.Float("x", 0, 1), hp.Float("z", 0, 1)])
    configs = space.sample(20, seed=0)
    history = hp.TrialHistory(space, configs, [(c["x"] - 0.3) ** 2 for c in configs])
    document = hp.report(history, top=1, surrogate=hp.Forest(n_trees=4), subspace=False).to_dict()
    assert listed == list(document)
    assert document["schema"] == SCHEMA
    assert f'`"{SCHEMA}"`' in section


def test_the_printed_demo_output_is_what_the_demo_prints(tmp_path: Path) -> None:
    """The README's block after ``<!-- demo output -->`` is the demo's own summary of its
    study (the paths it prints after it are left out), so it cannot go stale."""
    import optuna

    import hpinsight as hp

    text = README.read_text(encoding="utf-8")
    block = text.split("<!-- demo output -->\n```text\n", 1)[1].split("\n```", 1)[0]
    setup_demo_study({}, tmp_path)
    demo = _load_example("demo_optuna_sqlite")
    study = optuna.load_study(study_name="demo",
                              storage=f"sqlite:///{tmp_path}/hpinsight-demo/study.db")
    assert demo.summary(hp.report(study, seed=0)).rstrip("\n") == block


def test_the_demo_page_says_why_an_uncertain_effect_is_too_small_to_count(tmp_path: Path) -> None:
    """Under a model that keeps every parameter (the default takes it out of the analysis
    among the best, whose refits mostly find no signal), the demo's ``data_shuffle_seed``
    rests on an uncertain effect among the best trials that is too small in objective
    units to matter (the rules' ``NEGLIGIBLE_SD``): its details say so with the number,
    so the rule the page prints is the one applied."""
    import html

    import optuna

    import hpinsight as hp
    from hpinsight._decision_result import NEGLIGIBLE_SD

    setup_demo_study({}, tmp_path)
    study = optuna.load_study(study_name="demo",
                              storage=f"sqlite:///{tmp_path}/hpinsight-demo/study.db")
    rep = hp.report(study, seed=0, surrogate=hp.GP(prune=False))
    d = rep.decisions["data_shuffle_seed"]
    assert (d.state, d.verdict) == ("not_yet_safe", "uncertain")
    assert d.effect_sd <= NEGLIGIBLE_SD * rep.decisions.margin
    page = html.unescape(rep.html())
    row = page.split('<tr data-param="data_shuffle_seed"', 1)[1].split("</tr>", 1)[0]
    assert ("is uncertain, but its standard deviation over the space, "
            f"{d.effect_sd:.3g}, is at most {NEGLIGIBLE_SD:g} of the margin: too small to "
            "matter") in row
    for name in ("learning_rate", "optimizer"):  # effects that count say nothing of the kind
        other = page.split(f'<tr data-param="{name}"', 1)[1].split("</tr>", 1)[0]
        assert "too small to matter" not in other
    # and the sentence agrees with the table's "uncertain": not "no effect is
    # distinguishable from nothing", but an effect too small to matter
    assert d.negligible
    assert d.sentence.startswith("Keep tuning for now: its effects are too small to matter")
    assert "distinguishable from nothing" not in d.sentence


def test_a_parameter_not_yet_resolved_rests_on_its_own_effect_before_an_interaction(
        tmp_path: Path) -> None:
    """The demo's ``dropout`` (a small real effect) is uncertain, and so is the
    ``learning_rate x dropout`` interaction its objective does not have, which the model
    gives a slightly larger share: the decision, its sentence and the page's answer box
    cite dropout's own effect, not the interaction."""
    import html

    import optuna

    import hpinsight as hp

    setup_demo_study({}, tmp_path)
    study = optuna.load_study(study_name="demo",
                              storage=f"sqlite:///{tmp_path}/hpinsight-demo/study.db")
    rep = hp.report(study, seed=0)
    own, pair = rep.result.importance("dropout"), rep.result.importance("learning_rate", "dropout")
    assert own.verdict == pair.verdict == "uncertain"  # the situation the rule is for
    assert pair.mean > own.mean
    d = rep.decisions["dropout"]
    assert (d.state, d.evidence, d.evidence_share) == ("unresolved", "dropout", own.mean)
    assert "interaction" not in d.sentence
    box = html.unescape(rep.html()).split("Not resolved yet:", 1)[1].split("\n", 1)[0]
    assert "dropout (" in box
    assert "with learning_rate" not in box.split("dropout (", 1)[1].split(")", 1)[0]
