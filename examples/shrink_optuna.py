"""Stop tuning what does not matter: an Optuna study that shrinks its own search space.

Ten hyperparameters: ``lr`` and ``depth`` matter, ``dropout`` a little (0.1 % of the
variance), six knobs barely and the tokenizer not at all. The first 60 trials are random
(TPE's start-up phase, here as long as the wait before deciding: importances judged on
unbiased trials are more reliable than on TPE's concentrated ones). Then the live
callback asks ``suggest_subspace`` for one decision per parameter: a parameter is fixed
only when no effect of it is distinguishable from nothing *and* fixing it is safely cheap
(tuning risk on the surrogate, within 5 % of the spread of the trials near the best). The
study's ``ShrinkingSampler`` holds those at the best trial's values
while TPE searches the rest, and narrows each parameter that matters to the range of the
best quarter of the trials (one trial in ten still samples the fixed ones over their
whole range and the narrowed ones beyond theirs, so a check every ``shrink-after``
trials can release one that turns out to matter, or widen a range). The decision is taken
in the callback when trial 60 finishes, so trial 61 is already sampled under it; with it,
a sentence per parameter is stored in the study and printed here. ``dropout`` holds only 0.1 % of the variance, but its effect is
resolved, so it stays tuned: fixing it at a poor value would cost more than the remaining
gap to the optimum.

    python examples/shrink_optuna.py [--trials 110] [--shrink-after 60]
"""

from __future__ import annotations

import argparse
import math

import optuna

from hpinsight.integrations.optuna import (
    DECISIONS_KEY,
    ImportanceCallback,
    ShrinkingSampler,
    read_ranges,
    read_restriction,
)


def objective(t: optuna.Trial) -> float:
    lr = t.suggest_float("lr", 1e-4, 1.0, log=True)
    depth = t.suggest_int("depth", 1, 20)
    dropout = t.suggest_float("dropout", 0.0, 0.8)
    nuisance = [t.suggest_float(f"knob{i}", 0.0, 1.0) for i in range(6)]
    t.suggest_categorical("tokenizer", ["bpe", "wordpiece", "unigram"])
    return ((math.log10(lr) + 2) ** 2 + 0.05 * (depth - 7) ** 2 + (dropout - 0.2) ** 2
            + 1e-3 * sum(nuisance))


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trials", type=int, default=110)
    p.add_argument("--shrink-after", type=int, default=60)
    args = p.parse_args(argv)
    optuna.logging.set_verbosity(optuna.logging.WARNING)

    callback = ImportanceCallback(every_n_trials=10, min_trials=20, shrink_to="auto",
                                  shrink_after=args.shrink_after, seed=0)
    # random search until the decision (unbiased trials to judge importance on), TPE after
    tpe = optuna.samplers.TPESampler(seed=0, n_startup_trials=args.shrink_after)
    study = optuna.create_study(sampler=ShrinkingSampler(tpe))
    study.optimize(objective, n_trials=args.trials, callbacks=[callback])
    callback.close(120)

    decision = study.user_attrs[DECISIONS_KEY][0]
    fixed = read_restriction(study)
    print(f"decision after trial {decision['after_trial']}: {decision['action']}")
    print(f"fixed: {', '.join(f'{k}={v!r}' for k, v in fixed.items()) or 'nothing'}")
    sub = callback.subspace
    assert sub is not None
    print(f"kept: {', '.join(sub.keep)}")
    narrowed = read_ranges(study)
    print("narrowed: " + ("; ".join(f"{k} to [{lo:.4g}, {hi:.4g}]" for k, (lo, hi) in narrowed.items())
                          or "nothing"))
    for line in sub.explain().splitlines():
        print(f"  {line}")
    print(f"best value after {len(study.trials)} trials: {study.best_value:.4f}")


if __name__ == "__main__":
    main()
