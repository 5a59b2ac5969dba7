"""SMAC's random forest predicts on SMAC's own thread during these runs.

SMAC 2.4's forest predicts (``all_trees_pred``, ``predict_marginalized_over_instances_batch``)
with scikit-learn's ``Parallel`` over all cores (``n_jobs=-1``, threads). scikit-learn wraps
each task in ``warnings.catch_warnings()`` and ``warnings.resetwarnings()``, and before
Python 3.14 those edit the one process-wide filter list: worker threads that interleave
there leave it without pytest's filters (warnings stop being errors for the rest of the
test) or empty, and from then on every task of every prediction warns
"`sklearn.utils.parallel.delayed` should be used with `sklearn.utils.parallel.Parallel`":
the tens of thousands of warnings CI printed, which no filter can hold back because the
race deletes the filters too. On joblib's sequential backend SMAC's tasks run one after
the other on SMAC's thread, so its predictions cannot race (they are the same numbers:
each tree predicts alone; only the order of the per-instance sums is fixed now).

``joblib.parallel_config`` is per thread: the refits of hpinsight's callbacks (their own
threads, and processes) keep their settings.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True, scope="module")
def smac_forest_on_one_thread() -> Iterator[None]:
    """joblib's sequential backend for the module (module scope: before ``hpo_run``)."""
    joblib = pytest.importorskip("joblib")
    with joblib.parallel_config(backend="sequential"):
        yield
