"""The surrogate models whose functional ANOVA is exact: the Gaussian process (``gp``).

The random forest of the paper (``hpinsight._forest``) moves here in a later step.
"""
