"""Main demo: an Optuna study on a SQLite file, importances while it runs, then a report.

The objective is a synthetic stand-in for a neural-network training run (so the
demo takes seconds): the validation loss depends strongly on the learning rate,
on the optimizer (and on momentum, which exists only for SGD), a little on
dropout, and not at all on two nuisance knobs.

Run it with ``bash scripts/demo.sh`` (or ``python examples/demo_optuna_sqlite.py``).
It writes ``hpinsight-demo/study.db``, the report ``hpinsight-demo/report.html`` (one
self-contained page: open it in a browser) and ``hpinsight-demo/report.json``, and
prints the final ranking.
"""

from __future__ import annotations

import argparse
import logging
import math
import random
import time
from pathlib import Path

import optuna

import hpinsight as hp
from hpinsight.integrations.optuna import ImportanceCallback

log = logging.getLogger("hpinsight.demo")

NOISE = 0.01  # std of the simulated evaluation noise


def objective(trial: optuna.Trial) -> float:
    lr = trial.suggest_float("learning_rate", 1e-5, 1.0, log=True)
    optimizer = trial.suggest_categorical("optimizer", ["adam", "sgd", "rmsprop"])
    momentum = trial.suggest_float("momentum", 0.0, 0.99) if optimizer == "sgd" else None
    dropout = trial.suggest_float("dropout", 0.0, 0.6)
    batch_size = trial.suggest_int("batch_size", 16, 512, log=True)
    trial.suggest_int("data_shuffle_seed", 0, 1000)  # a nuisance knob: no effect at all
    # a bowl in log10(lr) whose optimum depends on the optimizer, plus smaller effects
    best_lr = {"adam": -3.0, "sgd": -1.5, "rmsprop": -3.5}[optimizer]
    loss = 0.3 + 0.08 * (math.log10(lr) - best_lr) ** 2
    loss += {"adam": 0.0, "sgd": 0.05, "rmsprop": 0.1}[optimizer]
    if momentum is not None:
        loss += 0.3 * (0.9 - momentum) ** 2
    loss += 0.4 * (dropout - 0.25) ** 2
    loss += 0.01 * math.log2(batch_size / 64) ** 2
    noise = random.Random(trial.number).gauss(0.0, NOISE)  # evaluation noise, reproducible
    return loss + noise


def summary(report: hp.results.Report) -> str:
    """What the demo prints: one decision per parameter, as the page and the JSON say it."""
    result = report.result
    model = "Gaussian process, leave-one-out" if result.surrogate.kind == "gp" else "forest, out-of-bag"
    pairs = [i for i in result.ranking(order=2) if i.verdict != "indistinguishable from nothing"]
    lines = [f"hpinsight report for {report.source} ({result.n_trials} trials, {model} R² "
             f"{result.fit_r2:.2f})", report.table(),
             # "distinguishable from nothing" was said of effects the lines below call
             # uncertain: not yet told from a shuffled parameter
             f"interactions: {len(pairs)} of {len(result.ranking(order=2))} shown, the others "
             "indistinguishable from nothing" + "".join(f"\n  {i}" for i in pairs)]
    for d in report.decisions:
        lines.append(f"{d.param}: {d.sentence}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("hpinsight-demo"), help="output folder")
    parser.add_argument("--trials", type=int, default=150)
    parser.add_argument("--every", type=int, default=30, help="refit importances every N trials")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    optuna.logging.set_verbosity(optuna.logging.WARNING)

    args.out.mkdir(parents=True, exist_ok=True)
    db = args.out / "study.db"
    db.unlink(missing_ok=True)
    study = optuna.create_study(
        study_name="demo",
        storage=f"sqlite:///{db}",
        sampler=optuna.samplers.TPESampler(seed=args.seed),
    )

    # live importances: refits every N trials off the optimization thread, logged through
    # Optuna's logger and published to the study's user attributes (optuna-dashboard shows them)
    optuna.logging.get_logger("optuna.hpinsight").setLevel(logging.INFO)
    live = ImportanceCallback(every_n_trials=args.every, min_trials=args.every, seed=args.seed)

    started = time.perf_counter()
    study.optimize(objective, n_trials=args.trials, callbacks=[live])
    log.info("study finished in %.1f s", time.perf_counter() - started)
    live.close(wait=True)  # a last refit on every trial, waited for
    log.info("live refits at %s trials; summary in the study's user attribute %r",
             ", ".join(str(s.n_trials) for s in live.history), live.summary_key)

    # one report: the page, the JSON document and the table below all show its numbers
    report = hp.report(study, seed=args.seed)
    page = report.save(args.out / "report.html")
    path = report.save(args.out / "report.json")
    print(summary(report))
    print(f"report: {page.resolve()}  (open it in a browser)\njson:   {path.resolve()}\n"
          f"study:  {db.resolve()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
