"""A Gaussian-process surrogate whose functional ANOVA is exact.

Why a second surrogate. Optimizers (TPE, CMA-ES, SMAC) sample densely where
they expect good results, and as they converge they cluster *every* parameter,
also the ones that do nothing. Their values then correlate with the objective
through the sampler, a greedy tree splits on them, and integrating a forest over
the whole space credits them with variance the forest only extrapolated. A
smooth model with one length scale per parameter explains the same data with
the parameters that matter and gives the others length scales far beyond the
space, so their effects vanish.

Model. Columns are rescaled to ``[0, 1]`` by their measure's bounds (see
``_encoding``: log parameters in log space). Each column ``j`` has a kernel factor

* numerical columns: ``k_j(u, u') = exp(-(u - u')^2 / (2 l_j^2))`` (squared exponential);
* categorical columns: ``1`` for equal choices, ``rho_j = exp(-1 / (2 l_j^2))``
  otherwise -- every pair of choices equally similar, so the order of the
  choices plays no role.

A *unit* is a column, or a conditional block of columns (below) with the product of its
members' factors as its factor ``k_u``. The kernel is a product part plus a first-order
additive part (Duvenaud, Nickisch & Rasmussen, 2011, "Additive Gaussian processes", the
orders 1 and D of their Eq. 5, with one length scale per column shared by both):

    ``k(x, x') = s_p prod_u k_u(x_u, x'_u) + (s_a / #A) sum_{u in A} w_u k_u(x_u, x'_u)``,

where ``A`` holds every unit but a categorical column on its own, and each unit of ``A``
has a variance ``s_a w_u / #A`` of its own (the ``w_u`` average 1).

Why both. Optimizers leave most of the space empty, and a product kernel alone
explains a trial far from the others by a bump of its own, in every parameter at once:
far from the data its posterior mean falls back to the prior mean, which shows up as
interactions that are not there and as main effects too small. On five 150-trial TPE
studies of ``4|a| + 2[b > 0.5] + floor(c)^2 + noise``, a function without interactions,
the product kernel alone left 0.41-0.91 of the variance to main effects and ranked the
step in ``b`` third in 3 of them; with the additive part the main effects hold
0.99-1.00 of it, and ``b`` is third in 4. The additive part carries an effect learned
anywhere to everywhere, and the marginal likelihood chooses how much of the signal is
additive (``s_a``) and how much is not (``s_p``). See ``benchmarks/README.md``.

Why a variance per unit. With one variance shared by every unit, a unit can only drop
out through a long length scale, and under noise the marginal likelihood finds a short
one for some of many parameters that do nothing: on 40 parameters of which 4 matter,
TPE, 200 trials, they took 0.31 of the importance at a signal-to-noise ratio of 4 and
0.50 at 1. A unit's own variance goes to its lower bound instead (automatic relevance
determination of the variances), and the same studies give 0.20 and 0.29
(``benchmarks/bench_calibration.py``).

Why take parameters out. A variance per unit still lets the likelihood's optimum hand a
parameter that does nothing a share, wherever its values correlate with the objective
by chance: on 200 TPE trials of 40 parameters (4 that matter) at a signal-to-noise
ratio of 4, the 36 that do nothing kept a median 0.20 of the importance, one of them
0.34. Such a column buys the likelihood little (0.1-2.5 nats in those studies; the
parameters that act cost 3-60 to take out), so after the fit every column whose removal
costs less than the Bayesian information criterion's price of a parameter,
``log(n) / 2`` nats on ``n`` rows, is taken out (its length scale to the bound, its
additive variance to the bound, the variances refit; ``_likelihood.prune_columns``): the
same studies' median fell to 0.00. Being taken out is not evidence of doing nothing, so
the verdict of an effect with such a parameter reads the share the fit gave it before
(``Importance.before_pruning``), and is never "resolved". The shadows' fits and the
refits are not pruned: the null stays that of an unpruned fit, and the spread holds the
fits the trials support.

Why not a categorical alone. In the additive part each choice gets an offset of its
own, learned from the trials that hold it. A sampler that has settled on one choice
tried the others mostly early, in bad trials, and an offset then explains those trials
cheaply: on five TPE studies tuning a random forest, a three-choice parameter that does
nothing got up to 0.51 of the importance with categoricals in the additive part, and
the parameters that do nothing 0.13-0.23 together at 150-200 trials (0.04 without).
A categorical still has its main effect through the product part.

The objective is standardized; a constant mean, the product variance, every additive
unit's variance and a Gaussian noise variance are fit together with the length scales by maximizing the log marginal
likelihood (Rasmussen & Williams, 2006, Eq. 5.8-5.9) with analytic gradients, on at
most ``FIT_ROWS`` rows drawn at random. Relevance must be supported twice, by the
objective and by its ranks (:func:`fit_hyperparameters`).

Estimand and exactness. The posterior mean is
``m(x) = mu + sum_i beta_i (prod_u k_u(x_u, x_iu) + r sum_{u in A} w_u k_u(x_u, x_iu))``
with ``r = s_a / (s_p #A)``. Under the space's product measure (uniform in the encoded
coordinate, uniform over integer values and choices), write ``k_u = z_iu + h_iu`` with
``z_iu = E[k_u(X_u, x_iu)]``; the product expands into the functional ANOVA terms
directly, ``f_U(x_U) = sum_i beta_i prod_{u not in U} z_iu prod_{u in U} h_iu(x_u)``,
and the additive part adds ``r w_u sum_i beta_i h_iu(x_u)`` to the effects within one unit
``u`` of ``A`` only. So the variance of every effect is a quadratic form

    ``V_U = v_U' (C_j1 o C_j2 o ...) v_U``,   ``v_U = beta * (prod_{u not in U} z_u [+ r w_u])``,

with ``C_j[i, l] = E[h_ij h_lj] = W_j[i, l] - z_ij z_lj``, ``o`` the elementwise
product and ``+ r w_u`` for effects within one unit ``u`` of ``A``. ``z`` and ``W`` are one-dimensional
integrals in closed form (error functions) for continuous columns, and finite sums for
discrete ones and choices. Every number is exact for the fitted posterior mean.

Uncertainty. Each of ``n_draws`` *draws* refits the posterior on a bootstrap
resample of the trials (hyperparameters fixed; a row drawn ``c`` times enters
once with noise variance divided by ``c``), with its own imputation of inactive
values where they are imputed (below). Means and stds over draws play the role of the forest's over trees.
Whether an effect is distinguishable from nothing is judged against shadow
columns: the median over three fits beside the model, each with its own shuffle
(:func:`_shadow_null`); an interaction of two parameters also against the share that
comes back when it is taken out of the data and the model fit again (``_removal``: a
product kernel makes interactions up between parameters that act alone, and no shadow,
shuffled, is ever moved together with a good parameter).

Where we deviate, and why:

* Second moments of continuous columns (``C_j``) are sums over composite
  Gauss-Legendre nodes where the length scale allows few of them (``_kernel.root``):
  they agree with the closed form to 5e-12 of its largest entry, are positive
  semi-definite by construction, and let main effects and pairs be computed from
  (nodes x n) factors instead of (n x n) matrices. At 10,000 trials x 30 parameters this
  took the decomposition from 5.9 s and 1.3 GB to 0.6 s and 0.3 GB.
* Integer and stepped parameters with more than ``MAX_EXACT_POINTS`` values (a
  sum over ``10^5`` values would cost more than the rest of the analysis): each
  value whose cell (its share of the measure) is narrower than
  ``_kernel.TAIL_CELL`` (``1 / MAX_EXACT_POINTS`` of the range) is spread uniformly
  over its cell, and those cells are integrated as continuous; the wider cells,
  the first values of a log scale, stay points. Spreading a value over a cell of
  width ``w`` moves an integral of the kernel by about ``w^2 / (24 l^2)`` of it: at
  most 4e-4 at the shortest length scale. An integer of 1 to 3,000 with
  ``log=True`` (where the value 1 holds 13 % of the measure) is decomposed to
  2e-7 of the sum over all its values (``tests/unit/test_gp.py``); integrated
  wholly as continuous, its total variance was 2.7 % high.
* Conditional parameters: an inactive entry is a state of its own in the kernel
  (factor 1 against another inactive entry, 0 against an active one), so trials
  where a parameter is inactive say nothing about its effect where it is active,
  and nothing is imputed. The posterior mean is then a product over *blocks* (a
  conditional parameter with its parents) instead of over columns, each block
  integrated exactly by enumerating its parents' values (``_blocks``; conditions
  missing from the space, as in Optuna's define-by-run studies, are inferred from
  the trials). On five 150-trial TPE studies of a conditional function this took the
  largest error of a main effect from 0.139 to 0.016 (``benchmarks/README.md``).
  Where a parent is continuous or the parents have more than
  ``_blocks.MAX_COMBINATIONS`` joint values, inactive entries are instead filled
  with draws from the parameter's measure, as in ``surrogates.forest``: a new imputation in
  every draw, so no single imputation decides the answer.
* A categorical parameter is measured uniformly over the choices the trials contain,
  not over all of them (a conditional block's parents excepted: they are enumerated over
  all their values). Where no trial has a choice the posterior mean is the prior mean,
  and integrating over it would shrink the effect in proportion to the untried share:
  a 60-choice parameter holding 14 % of the variance came out at 0.08-0.13 when TPE had
  tried 36-38 of its choices, behind a smaller one. Over the choices tried, the variance
  estimates the variance over all of them as far as the trials can tell; the analysis
  cannot know the untried ones either way.
* Large histories: the posterior uses at most ``max_rows`` trials (default
  2,000), the best tenth of them always included and the rest drawn at random;
  see ``benchmarks/README.md`` for the measured effect.
"""

from ._blocks import infer_conditions
from ._decompose import FLAT_REFIT, decompose_gp, refit_fractions
from ._fit import fit_gp
from ._model import FittedGP
from ._removal import regrown_shares

__all__ = ["FLAT_REFIT", "FittedGP", "decompose_gp", "fit_gp", "infer_conditions", "refit_fractions", "regrown_shares"]
