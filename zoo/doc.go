// Package zoo holds gpzoo's ready-made experiments: named entries (DATASET/MODEL, lower case) that load a
// benchmark data set with its published split protocol, build a model, train it with package train and report
// test metrics as a Result whose JSON keys stay stable across releases.
//
// # Conventions
//
//   - Regression targets and inputs are standardised on the training split; metrics are reported in the
//     original units (RMSE; test_ll is the mean log predictive density per test point).
//   - Every entry is reproducible from (split, seed); randomness comes from math/rand/v2 PCG seeded by Seed.
//   - Deep-GP entries report test_ll as the log density of the S-sample predictive mixture (test_ll_kind,
//     test_samples) and the moment-matched Gaussian's as test_ll_moment_matched.
//
// # Families
//
// Exact GPs (gpr.go); SVGP, SGPR and the classification likelihoods (sparse.go); decoupled bases: the ODVGP
// protocol, the Cheng & Boots setting and the ringnorm illustration (odvgp.go, illustration.go); deep GPs: Havasi
// et al.'s tables and the Doubly-Stochastic-DGP notebooks (dgp.go).
//
// # Errors
//
// Run returns an error for an unknown entry, missing data (with the directory it looked in), or a training
// failure; it never panics on user data.
package zoo
