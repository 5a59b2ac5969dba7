#!/usr/bin/env python
"""The calibration benchmark's peer with intervals: Ax's Sobol indices from samples of a
BoTorch Gaussian process's posterior (``ax.utils.sensitivity.sobol_measures.
SobolSensitivityGPSampling``).

Run by ``bench_calibration.py --ax-python PY`` with the interpreter of an environment that
has Ax (it is not one of hpinsight's dependencies; see ``benchmarks/README.md``)::

    python -m venv ax-env && ax-env/bin/pip install ax-platform -e ".[optuna]"
    python benchmarks/bench_calibration.py ... --studies DIR --ax-python ax-env/bin/python

One study per call: ``PY peer_ax_sobol.py FUNCTION STUDY.pkl`` prints one JSON object,
each parameter's first-order index (its main effect's share of variance) as the mean and
standard deviation over the posterior samples, and the seconds it took.

The set-up is Ax's own for a single objective: ``SingleTaskGP`` (BoTorch's defaults:
Matern-5/2 with automatic relevance determination and its dimension-scaled length-scale
prior) on the inputs mapped to the unit cube, the objective standardized, fit by
``fit_gpytorch_mll``. Inputs are the benchmark's coordinates (a log-scaled float on its
log scale, so that the measure is the one the truth is computed under); an integer is
one of Ax's discrete features, drawn uniformly from its values. Sobol indices are
Saltelli's Monte Carlo estimators on a random design of ``MC_SAMPLES`` points per matrix
(fewer for many parameters, see ``JOINT_POINTS``), for each of ``GP_SAMPLES`` joint
posterior samples: the index's mean and spread over the samples are Ax's estimate and
its uncertainty. Every sample is evaluated on the same design, so the design's own
Monte Carlo error (about 0.01-0.02 of the variance at 4,096 points, 0.1-0.15 at 512, on
``interaction``'s function itself) is in the estimate but not in the spread. Ax's
defaults (10,000 design points) would need a joint posterior over 120,000 points for 10
parameters, which does not fit in memory; these sizes keep it within ``JOINT_POINTS``.

Ax's quasi-random design (``input_qmc=True``) is not used: in Ax 1.3.1 it gives
``interaction``'s ``a``, whose first-order index is 0, an index of 0.97 on the function
itself, at 512 and at 4,096 points alike (the random design: 0.16 and -0.01).
"""

from __future__ import annotations

import json
import math
import pickle
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import hpinsight as hp

GP_SAMPLES = 128
#: Design points per Saltelli matrix (a random design, drawn with ``torch.manual_seed(0)``):
#: at most this many, a power of 2, and at most ``JOINT_POINTS`` posterior points in all
#: (``(d + 2)`` matrices).
MC_SAMPLES = 1024
JOINT_POINTS = 12_288


def main(argv: list[str]) -> int:
    import torch
    from ax.utils.sensitivity.sobol_measures import SobolSensitivityGPSampling
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import SingleTaskGP
    from botorch.models.transforms import Normalize, Standardize
    from gpytorch.mlls import ExactMarginalLogLikelihood

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_calibration import FUNCTIONS, _encode

    name, path = argv
    fn = FUNCTIONS[name]
    with open(path, "rb") as fh:
        history = pickle.load(fh)  # written by bench_calibration.py
    torch.manual_seed(0)
    started = time.perf_counter()
    columns, lows, highs, discrete = [], [], [], []
    for k, p in enumerate(fn.params):
        raw = np.array([c[p.name] for c in history.configs], dtype=float)
        columns.append(_encode(p, raw))
        if isinstance(p, hp.Int):
            lows.append(float(p.low))
            highs.append(float(p.high))
            discrete.append(k)
        else:
            lows.append(0.0)
            highs.append(1.0)
    X = torch.tensor(np.column_stack(columns), dtype=torch.float64)
    y = torch.tensor(np.asarray(history.y, dtype=float), dtype=torch.float64)[:, None]
    bounds = torch.tensor([lows, highs], dtype=torch.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = SingleTaskGP(X, y, input_transform=Normalize(X.shape[1], bounds=bounds),
                             outcome_transform=Standardize(1))
        fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
        mc = min(MC_SAMPLES, 2 ** int(math.log2(JOINT_POINTS / (X.shape[1] + 2))))
        sens = SobolSensitivityGPSampling(model, bounds=bounds, num_gp_samples=GP_SAMPLES,
                                          num_mc_samples=mc, input_qmc=False,
                                          discrete_features=discrete or None)
        first = sens.first_order_indices()  # (mean, var, stderr) per parameter
    seconds = time.perf_counter() - started
    effects = {}
    for k, p in enumerate(fn.params):
        mean, var = float(first[k, 0]), float(first[k, 1])
        effects[p.name] = {"mean": mean, "std": math.sqrt(max(var, 0.0))}
    sys.stdout.write(json.dumps({"effects": effects, "seconds": seconds, "mc_samples": mc}) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
