"""Plug-ins used during optimization (Optuna, SMAC); each imports its optimizer lazily."""
