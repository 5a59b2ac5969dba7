"""Where the experiment's jobs run: :mod:`hpinsight._execution`, shared with the
importance across studies (this name is kept for code that imported it from here)."""

from __future__ import annotations

from .._execution import ClusterJobError, FitStore, fingerprint, progress_bar, run_jobs

__all__ = ["ClusterJobError", "FitStore", "fingerprint", "progress_bar", "run_jobs"]
