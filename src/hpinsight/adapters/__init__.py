"""Data in: optimizer and ConfigSpace objects -> hpinsight search spaces and histories.

Each adapter imports its optimizer lazily and uses public APIs only.
"""
