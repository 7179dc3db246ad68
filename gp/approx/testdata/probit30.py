#!/usr/bin/env python3
"""Writes probit30.csv, the problem of TestEPAccuracyImportanceSampling (gp/approx/ep_accuracy_test.go): 30 inputs
uniform on [-3, 3] and labels y ~ Bernoulli(Phi(f)) with f drawn from the test's own prior, a GP with the SE
kernel (variance 1, length-scale 1) plus a 1e-4 nugget: data from the model at unit hyperparameters, the first
draw (seed 100) of the generator.

With --scan it also prints, for the first 8 draws (seeds 100..107), EP's log Z minus an importance-sampling
estimate of the true log marginal likelihood (R&W's sequential EP, Algorithms 3.5-3.6, and a t4 proposal around
EP's posterior with its covariance, 500000 draws): EP's error varies with the draw (0.001 to 0.026 at these
hyperparameters; 0.004 on seed 100).

    /usr/bin/python3 gp/approx/testdata/probit30.py > gp/approx/testdata/probit30.csv
"""
import sys

import numpy as np
from scipy.linalg import cholesky, solve_triangular
from scipy.special import gammaln
from scipy.stats import norm


def problem(seed, n=30, s2=1.0, ell=1.0):
    r = np.random.default_rng(seed)
    x = r.uniform(-3, 3, n)
    K = s2 * np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2 / ell**2) + 1e-4 * np.eye(n)
    f = cholesky(K, lower=True) @ r.standard_normal(n)
    y = (r.uniform(size=n) < norm.cdf(f)).astype(int)
    return x, y, K


def ep(K, y):
    n = len(y)
    nu, tau, Sigma, mu = np.zeros(n), np.zeros(n), K.copy(), np.zeros(n)
    for _ in range(500):
        old = tau.copy()
        for i in range(n):
            tmi, nmi = 1 / Sigma[i, i] - tau[i], mu[i] / Sigma[i, i] - nu[i]
            vi, mi = 1 / tmi, nmi / tmi
            z = y[i] * mi / np.sqrt(1 + vi)
            r = np.exp(norm.logpdf(z) - norm.logcdf(z))
            muh = mi + y[i] * vi * r / np.sqrt(1 + vi)
            s2h = vi - vi**2 * r / (1 + vi) * (z + r)
            dt = 1 / s2h - tmi - tau[i]
            tau[i] += dt
            nu[i] = muh / s2h - nmi
            si = Sigma[:, i].copy()
            Sigma = Sigma - dt / (1 + dt * si[i]) * np.outer(si, si)
            mu = Sigma @ nu
        sW = np.sqrt(tau)
        L = cholesky(np.eye(n) + np.outer(sW, sW) * K, lower=True)
        V = solve_triangular(L, sW[:, None] * K, lower=True)
        Sigma = K - V.T @ V
        mu = Sigma @ nu
        if np.max(np.abs(tau - old)) < 1e-10:
            break
    tn, nn = 1 / np.diag(Sigma) - tau, mu / np.diag(Sigma) - nu
    z = y * nn / tn / np.sqrt(1 + 1 / tn)
    lz = (np.sum(norm.logcdf(z)) + 0.5 * np.sum(np.log(1 + tau / tn)) - np.sum(np.log(np.diag(L)))
          + 0.5 * nu @ (K - V.T @ V - np.diag(1 / (tn + tau))) @ nu
          + 0.5 * (nn / tn) @ np.diag(tn / (tau + tn)) @ (tau * nn / tn - 2 * nu))
    return lz, mu, Sigma


def importance(K, y, mu, Sigma, S=500000, seed=1):
    n, dof = len(y), 4.0
    rng = np.random.default_rng(seed)
    Ls, Lk = cholesky(Sigma, lower=True), cholesky(K, lower=True)
    Z, u = rng.standard_normal((S, n)), rng.chisquare(dof, S)
    c = np.sqrt(dof / u)
    F = mu[None, :] + c[:, None] * (Z @ Ls.T)
    logt = (gammaln((dof + n) / 2) - gammaln(dof / 2) - 0.5 * n * np.log(dof * np.pi) - np.sum(np.log(np.diag(Ls)))
            - 0.5 * (dof + n) * np.log1p((Z**2).sum(1) * c**2 / dof))
    V = solve_triangular(Lk, F.T, lower=True)
    logp = -0.5 * n * np.log(2 * np.pi) - np.sum(np.log(np.diag(Lk))) - 0.5 * (V**2).sum(0)
    lw = norm.logcdf(y[None, :] * F).sum(1) + logp - logt
    m = lw.max()
    w = np.exp(lw - m)
    return m + np.log(w.mean()), w.std() / w.mean() / np.sqrt(S)


if len(sys.argv) > 1 and sys.argv[1] == "--scan":
    for seed in range(100, 108):
        x, y, K = problem(seed)
        lz, mu, Sigma = ep(K, 2.0 * y - 1)
        li, se = importance(K, 2.0 * y - 1, mu, Sigma)
        print(f"seed {seed}: EP {lz:.5f}, importance sampling {li:.5f} ± {se:.5f}, EP's error {lz - li:+.4f}")
    sys.exit(0)

x, y, _ = problem(100)
print("x,y")
for xi, yi in zip(x, y):
    print(f"{xi!r},{yi}")
