"""The surrogate models whose functional ANOVA is exact: the Gaussian process (``gp``) and
the random forest of the paper (``forest``).
"""
