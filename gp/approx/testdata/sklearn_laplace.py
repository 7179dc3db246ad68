#!/usr/bin/env python3
"""Writes sklearn_laplace.json: the oracle of TestLaplaceAgainstScikitLearn (gp/approx/sklearn_test.go).

scikit-learn's GaussianProcessClassifier (binary: the Laplace approximation with the logit link, R&W Algorithms
3.1 and 5.1) evaluates log q(y | X, theta) and its gradient with respect to theta = the logs of the kernel's
hyperparameters, for the kernel ConstantKernel(c) * RBF(length_scale), at fixed hyperparameters (no optimiser),
on a seeded 300-row binary data set of 2 inputs. Only the marginal likelihood is compared (sklearn's predictive
probabilities use their own approximation).

Run with Debian's python3-sklearn (1.2.1 made the committed file):
    /usr/bin/python3 gp/approx/testdata/sklearn_laplace.py > gp/approx/testdata/sklearn_laplace.json
"""
import json
import sys

import numpy as np
import sklearn
from sklearn.gaussian_process import GaussianProcessClassifier
from sklearn.gaussian_process.kernels import RBF, ConstantKernel

rng = np.random.default_rng(20240611)
n = 300
X = rng.uniform(-3.0, 3.0, size=(n, 2))
f = np.sin(1.5 * X[:, 0]) + 0.5 * X[:, 1] - 0.3 * X[:, 0] * X[:, 1]
y = (f + 0.5 * rng.standard_normal(n) > 0).astype(int)

cases = []
for name, c, ell in [("isotropic", 2.0, 0.8), ("ard", 1.5, [0.6, 1.7]), ("long", 7.0, [3.0, 2.5])]:
    kernel = ConstantKernel(c) * RBF(length_scale=ell)
    gpc = GaussianProcessClassifier(kernel=kernel, optimizer=None).fit(X, y)
    theta = gpc.kernel_.theta
    lml, grad = gpc.log_marginal_likelihood(theta, eval_gradient=True)
    cases.append({
        "name": name,
        "variance": c,
        "lengthscales": list(np.broadcast_to(np.asarray(ell, dtype=float), (2,))),
        "theta": list(theta),
        "log_marginal_likelihood": float(lml),
        "gradient": list(grad),
    })

json.dump({
    "generator": "gp/approx/testdata/sklearn_laplace.py",
    "sklearn": sklearn.__version__,
    "numpy": np.__version__,
    "x": X.tolist(),
    "y": y.tolist(),
    "cases": cases,
}, sys.stdout, indent=1)
sys.stdout.write("\n")
