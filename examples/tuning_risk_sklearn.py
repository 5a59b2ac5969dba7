"""Which random-forest and SVM hyperparameters can you stop tuning? (Weerts 2018)

Runs the two experiments of Weerts, "Importance of tuning hyperparameters of machine
learning algorithms" (2018) on scikit-learn's four bundled classification datasets:

1. per dataset, random configurations scored by cross-validation give leave-one-out
   default values (Sec. 3.2);
2. per dataset and search seed, a nested cross-validation with random search, once
   tuning everything and once per hyperparameter with that one held at its default
   (Sec. 3.3); the paired risks (1 - accuracy) give the tuning risk and a
   non-inferiority test with a 1 % margin, Holm-corrected (Tables 5 and 6).

The spaces follow the paper's Tables 1 and 2 (``max_features`` starts at 0.05, since 0
is not a valid setting, and the forest has fewer trees so the script fits a laptop).
Four small datasets and a few seeds are far less evidence than the paper's 59 datasets
and 10 seeds, so expect some verdicts to differ from its Table 6.

Run ``python tuning_risk_sklearn.py`` (about 13 minutes on two cores) or
``python tuning_risk_sklearn.py --quick`` (a smoke test of a few seconds).
"""

from __future__ import annotations

import argparse
import sys
import time

from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine
from sklearn.ensemble import RandomForestClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

import hpinsight as hp
from hpinsight.experiments import tuning_risk_experiment

# Table 6 of the paper (computed defaults): True = H0 rejected, fixing is non-inferior
PAPER_NON_INFERIOR = {
    "random forest": {
        "bootstrap": True, "criterion": True, "max_features": False,
        "min_samples_leaf": True, "min_samples_split": True,
    },
    "SVM": {"svc__C": False, "svc__gamma": False, "svc__tol": True, "svc__shrinking": True},
}

LOADERS = {
    "iris": load_iris, "wine": load_wine, "breast_cancer": load_breast_cancer,
    "digits": load_digits,
}


def random_forest(n_estimators: int) -> tuple[RandomForestClassifier, hp.SearchSpace]:
    """The random forest of Table 2."""
    space = hp.SearchSpace([
        hp.Categorical("bootstrap", [True, False]),
        hp.Categorical("criterion", ["gini", "entropy"]),
        hp.Float("max_features", 0.05, 1.0),
        hp.Int("min_samples_leaf", 1, 20),
        hp.Int("min_samples_split", 2, 20),
    ])
    return RandomForestClassifier(n_estimators=n_estimators), space


def svm() -> tuple[object, hp.SearchSpace]:
    """The RBF support vector machine of Table 1, behind a scaler."""
    space = hp.SearchSpace([
        hp.Float("svc__C", 2.0**-5, 2.0**15, log=True),
        hp.Float("svc__gamma", 2.0**-15, 2.0**3, log=True),
        hp.Float("svc__tol", 1e-5, 1e-1, log=True),
        hp.Categorical("svc__shrinking", [True, False]),
    ])
    return make_pipeline(StandardScaler(), SVC(kernel="rbf")), space


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="tiny settings on two datasets: a smoke test of a few seconds")
    parser.add_argument("--seeds", type=int, default=6, help="random-search seeds (paper: 10)")
    parser.add_argument("--iterations", type=int, default=20,
                        help="random-search trials per outer fold (paper: 100)")
    parser.add_argument("--outer-folds", type=int, default=3, help="paper: 10")
    parser.add_argument("--inner-folds", type=int, default=3,
                        help="inner folds, also used for the defaults (paper: 5 and 10)")
    parser.add_argument("--default-configs", type=int, default=50,
                        help="random configurations per dataset for the defaults (paper: 1000)")
    parser.add_argument("--top-n", type=int, default=10,
                        help="best configurations per dataset voting for a default (paper: 10)")
    parser.add_argument("--trees", type=int, default=16,
                        help="trees in the random forest (paper: 500)")
    parser.add_argument("--n-jobs", type=int, default=None,
                        help="parallel runs (-1: all cores; default: all, one with --quick)")
    parser.add_argument("--margin", type=float, default=0.01,
                        help="non-inferiority margin on the relative risk (paper: 0.01)")
    parser.add_argument("--algorithms", nargs="+", choices=["rf", "svm"], default=["rf", "svm"])
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bars")
    args = parser.parse_args(argv)
    if args.quick:
        args.datasets = ["iris", "wine"]
        args.seeds, args.iterations, args.outer_folds, args.inner_folds = 2, 3, 2, 2
        args.default_configs, args.top_n, args.trees = 8, 3, 5
        args.n_jobs = 1 if args.n_jobs is None else args.n_jobs
    else:
        args.datasets = list(LOADERS)
        args.n_jobs = -1 if args.n_jobs is None else args.n_jobs
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    datasets = {name: LOADERS[name](return_X_y=True) for name in args.datasets}
    progress = sys.stderr.isatty() and not args.no_progress
    print(f"datasets: {', '.join(datasets)}; {args.seeds} seeds, {args.iterations} trials, "
          f"{args.outer_folds}x{args.inner_folds} nested CV, defaults from "
          f"{args.default_configs} random configurations per dataset (top {args.top_n})")
    algorithms = {"rf": ("random forest", lambda: random_forest(args.trees)),
                  "svm": ("SVM", svm)}
    agree = total = 0
    for key in args.algorithms:
        title, make = algorithms[key]
        estimator, space = make()
        start = time.perf_counter()
        experiment = tuning_risk_experiment(
            estimator, space, datasets, n_default_configs=args.default_configs,
            default_top_n=args.top_n, default_folds=args.inner_folds, n_iter=args.iterations,
            outer_folds=args.outer_folds, inner_folds=args.inner_folds, seeds=args.seeds,
            n_jobs=args.n_jobs, progress=progress, random_state=0,
        )
        seconds = time.perf_counter() - start
        result = experiment.statistics(margin=args.margin)
        print()
        print(f"== {title}: {len(experiment.records)} runs in {seconds:.1f} s")
        print("leave-one-out defaults:")
        for name, values in experiment.defaults.items():
            shown = ", ".join(f"{p}={_fmt(v)}" for p, v in values.items())
            print(f"  {name:<14} {shown}")
        free = experiment.free
        print(f"risk (1 - accuracy) tuning everything: mean {free.mean():.4f} "
              f"over {free.size} (dataset, seed) pairs")
        print(result.table())
        for row in result.rows:
            paper = PAPER_NON_INFERIOR[title][row.param]
            same = paper == row.non_inferior
            agree += same
            total += 1
            print(f"  {row.param:<20} {_verdict(row.non_inferior):<14} paper: "
                  f"{_verdict(paper):<14} {'agrees' if same else 'differs'}")
    print()
    print(f"{agree} of {total} verdicts agree with the paper's Table 6")
    return 0


def _verdict(non_inferior: bool) -> str:
    return "non-inferior" if non_inferior else "tune it"


def _fmt(value: object) -> str:
    return f"{value:.3g}" if isinstance(value, float) else str(value)


if __name__ == "__main__":
    raise SystemExit(main())
