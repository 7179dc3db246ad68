#!/usr/bin/env python3
"""Time GPyTorch's exact GP by conjugate gradients: the peer of gpzoo's examples/exactgp.

What it measures: --iters evaluations (default 3) of the negative log marginal likelihood of an exact GP and its
gradient, ``loss = -mll(model(X), y); loss.backward()`` with gpytorch.mlls.ExactMarginalLogLikelihood in train mode,
on the first --n (default 10,000) training rows of kin40k's fold 0 (uci-regression-evans; training rows are those
whose fold-0 test mask is 0, taken in file order), inputs and target standardised by those rows' mean and
population standard deviation. The model is ZeroMean + ScaleKernel(RBFKernel(ard_num_dims=8)) with every
length-scale 1, output scale 1 and Gaussian noise variance 0.1 (the raw parameters are set so that the constrained
values are exactly these), all in float64. Cholesky is switched off (gpytorch.settings.max_cholesky_size(0)), so the
loss is GPyTorch's mBCG estimate: a CG solve of the targets and the probe vectors, stochastic Lanczos quadrature for
the log-determinant and the gradient from the same solves, with GPyTorch's defaults left as they are (CG tolerance 1,
at most 1000 CG iterations, pivoted-Cholesky preconditioner of rank 15, 10 probe vectors, 20 Lanczos steps; the
script prints them). torch is seeded once (--seed); each evaluation draws fresh probes. Each evaluation's time
covers the forward pass (the kernel matrix is recomputed: a new lazily evaluated kernel tensor each call), the
mBCG solve and the backward pass. GPyTorch's mll is already divided by N, so the loss value is -log p(y)/N.

Per evaluation it prints, in the form of gpzoo's example,
    evaluation i: X.XXXs, −log p(y)/N = …, … CG iterations …
then ``median X.XXXs per evaluation`` (the median of all evaluations, as gpzoo's example takes it) and the median of
the evaluations after the first (the first one builds caches and warms up). The CG iteration counts are read by
wrapping linear_operator.utils.linear_cg and counting its matrix products (one product is the initial residual);
the computation itself is unchanged.

Install the peer (Debian bookworm; no PyPI needed):
    apt-get install -y python3-torch python3-scipy python3-sklearn python3-typeguard   # torch 1.13.1
    # gpytorch v1.10 (d23099674f67f04f40467964c37fc02f2e2a8dda) and linear_operator v0.4.0
    # (5191ee1bab55114fc211cc4d828aebe72edd43c9), from their GitHub repositories:
    mkdir -p /work/peers/src && cd /work/peers/src
    git -C gpytorch-repo archive v1.10 gpytorch | tar -x            # (or git --git-dir=<bare dir> archive ...)
    git -C linear_operator-repo archive v0.4.0 linear_operator | tar -x
    # version metadata that setuptools_scm would write at install time (otherwise __version__ is "Unknown"):
    echo '__version__ = version = "1.10"' > gpytorch/version.py
    echo '__version__ = version = "0.4.0"' > linear_operator/version.py

Run (Debian's Python, which has Debian's torch; OpenBLAS is torch's BLAS here):
    OMP_NUM_THREADS=2 PYTHONPATH=/work/peers/src /usr/bin/python3 scripts/gpytorch_exact_eval.py --n 10000 --iters 3
    OMP_NUM_THREADS=2 PYTHONPATH=/work/peers/src /usr/bin/python3 scripts/gpytorch_exact_eval.py --n 20000 --iters 3

The gpzoo counterpart (same rows, same hyperparameters, GPyTorch's rank 15 and CG settings by default):
    cd /work/main && go build -o /work/bin/exactgp ./examples/exactgp
    GOMAXPROCS=2 /work/bin/exactgp --data /work/shared/data --n 10000 --iters 3
    (or: go run ./examples/exactgp --data /work/shared/data --n 10000 --iters 3)
"""

import argparse
import math
import os
import statistics
import sys
import time

import numpy as np
import torch


def load_kin40k(data_dir, n):
    root = os.path.join(data_dir, "uci-regression-evans", "kin40k")
    data = np.loadtxt(os.path.join(root, "data.csv.gz"), delimiter=",", dtype=np.float64, ndmin=2)
    mask = np.loadtxt(os.path.join(root, "test_mask.csv.gz"), delimiter=",", dtype=np.int64, ndmin=2)
    if mask.shape[0] != data.shape[0]:
        sys.exit(f"error: {mask.shape[0]} mask rows for {data.shape[0]} data rows")
    train = np.flatnonzero(mask[:, 0] == 0)  # fold 0: training rows are those with mask 0, in file order
    if n > len(train):
        sys.exit(f"error: kin40k fold 0 has {len(train)} training rows, asked for {n}")
    rows = data[train[:n]]
    x, y = rows[:, :-1], rows[:, -1]
    xm, xs = x.mean(axis=0), x.std(axis=0)  # population standard deviation (ddof=0)
    xs[~(xs > 0)] = 1.0
    ym, ys = y.mean(), y.std()
    if not ys > 0:
        ys = 1.0
    return (x - xm) / xs, (y - ym) / ys


def set_exact(raw_param, constraint, value):
    """Sets raw_param so that constraint.transform(raw_param) is exactly value (nudging the raw value by ulps)."""
    with torch.no_grad():
        raw = constraint.inverse_transform(torch.full_like(raw_param, value))
        for _ in range(64):
            got = constraint.transform(raw)
            if bool((got == value).all()):
                break
            step = torch.where(got < value, torch.full_like(raw, math.inf), torch.full_like(raw, -math.inf))
            raw = torch.where(got == value, raw, torch.nextafter(raw, step))
        raw_param.copy_(raw)
    got = constraint.transform(raw_param)
    if not bool((got == value).all()):
        sys.exit(f"error: cannot set the constrained value to exactly {value}: got {got}")


class CGCounter:
    """Wraps linear_operator.utils.linear_cg to count the matrix products of each CG run (calls minus one)."""

    def __init__(self, linear_operator):
        self.utils = linear_operator.utils
        self.inner = self.utils.linear_cg
        self.runs = []
        self.utils.linear_cg = self

    def __call__(self, matmul_closure, rhs, *args, **kwargs):
        if torch.is_tensor(matmul_closure):
            matmul_closure = matmul_closure.matmul
        count = [0]

        def counted(v):
            count[0] += 1
            return matmul_closure(v)

        out = self.inner(counted, rhs, *args, **kwargs)
        self.runs.append((max(count[0] - 1, 0), rhs.shape[-1] if rhs.dim() > 1 else 1, kwargs.get("n_tridiag", 0)))
        return out

    def take(self):
        runs, self.runs = self.runs, []
        return runs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default="/work/shared/data", help="the benchmark data folder")
    ap.add_argument("--n", type=int, default=10000, help="rows (the first N training rows of kin40k's fold 0)")
    ap.add_argument("--iters", type=int, default=3, help="evaluations of the loss and its gradient")
    ap.add_argument("--threads", type=int, default=2, help="torch.set_num_threads")
    ap.add_argument("--seed", type=int, default=1, help="torch's seed, set once")
    ap.add_argument("--lengthscale", type=float, default=1.0)
    ap.add_argument("--outputscale", type=float, default=1.0)
    ap.add_argument("--noise", type=float, default=0.1)
    ap.add_argument("--no-cg-count", action="store_true", help="do not wrap linear_cg to count CG iterations")
    args = ap.parse_args()
    if args.n < 2 or args.iters < 1:
        sys.exit(f"error: --n {args.n} --iters {args.iters}: want at least 2 rows and 1 evaluation")

    torch.set_default_dtype(torch.float64)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)

    import gpytorch
    import linear_operator

    counter = None if args.no_cg_count else CGCounter(linear_operator)

    xn, yn = load_kin40k(args.data, args.n)
    X = torch.from_numpy(np.ascontiguousarray(xn))
    y = torch.from_numpy(np.ascontiguousarray(yn))
    d = X.shape[1]

    class ExactGPModel(gpytorch.models.ExactGP):
        def __init__(self, x, y, likelihood):
            super().__init__(x, y, likelihood)
            self.mean_module = gpytorch.means.ZeroMean()
            self.covar_module = gpytorch.kernels.ScaleKernel(gpytorch.kernels.RBFKernel(ard_num_dims=d))

        def forward(self, x):
            return gpytorch.distributions.MultivariateNormal(self.mean_module(x), self.covar_module(x))

    likelihood = gpytorch.likelihoods.GaussianLikelihood()
    model = ExactGPModel(X, y, likelihood)
    rbf = model.covar_module.base_kernel
    set_exact(rbf.raw_lengthscale, rbf.raw_lengthscale_constraint, args.lengthscale)
    set_exact(model.covar_module.raw_outputscale, model.covar_module.raw_outputscale_constraint, args.outputscale)
    noise = likelihood.noise_covar
    set_exact(noise.raw_noise, noise.raw_noise_constraint, args.noise)
    model.train()
    likelihood.train()
    mll = gpytorch.mlls.ExactMarginalLogLikelihood(likelihood, model)

    s = gpytorch.settings
    print(
        f"exact GP by conjugate gradients (GPyTorch {gpytorch.__version__}, linear_operator "
        f"{linear_operator.__version__}, torch {torch.__version__}, {torch.get_num_threads()} threads) on kin40k, "
        f"the first {args.n} training rows of fold 0 ({d} inputs): RBF-ARD, length-scales "
        f"{rbf.lengthscale.detach().flatten().tolist()}, output scale {model.covar_module.outputscale.item()!r}, "
        f"noise {likelihood.noise.item()!r}"
    )
    print(
        f"settings: max_cholesky_size 0 (CG forced; default {s.max_cholesky_size.value()}), "
        f"cg_tolerance {s.cg_tolerance.value()}, max_cg_iterations {s.max_cg_iterations.value()}, "
        f"max_preconditioner_size {s.max_preconditioner_size.value()}, "
        f"min_preconditioning_size {s.min_preconditioning_size.value()}, "
        f"preconditioner_tolerance {linear_operator.settings.preconditioner_tolerance.value()}, "
        f"num_trace_samples {s.num_trace_samples.value()}, "
        f"max_lanczos_quadrature_iterations {s.max_lanczos_quadrature_iterations.value()}, "
        f"fast_computations(log_prob={s.fast_computations.log_prob.on()}, solves={s.fast_computations.solves.on()}), "
        f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}",
        flush=True,
    )

    secs = []
    with gpytorch.settings.max_cholesky_size(0):
        for i in range(args.iters):
            model.zero_grad(set_to_none=True)
            if counter:
                counter.take()
            t0 = time.perf_counter()
            loss = -mll(model(X), y)
            loss.backward()
            secs.append(time.perf_counter() - t0)
            cg = ""
            if counter:
                runs = counter.take()
                cg = ", " + "; ".join(f"{it} CG iterations ({cols} right-hand sides, {tri} probes)" for it, cols, tri in runs)
            print(f"evaluation {i + 1}: {secs[-1]:.3f}s, −log p(y)/N = {loss.item():.5f}{cg}", flush=True)
    grads = {name: p.grad.flatten().tolist() for name, p in model.named_parameters() if p.grad is not None}
    print("gradient of the last evaluation:", {k: [round(v, 5) for v in g] for k, g in grads.items()})
    later = statistics.median(secs[1:]) if len(secs) > 1 else secs[0]
    print(f"median {statistics.median_low(secs):.3f}s per evaluation (all {len(secs)}); "
          f"median {later:.3f}s of the evaluations after the first")


if __name__ == "__main__":
    main()
