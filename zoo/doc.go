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
// # One training path
//
// The */gpr, */sgpr, */svgp* and deep-GP (*/dgp-*, */dsdgp-*, mnist/dgp2-robustmax) entries are data: a name, a
// data set (with its split protocol), a summary, a reference, the published numbers and a configuration of
// `gpzoo train` (Entry.Config, a CustomConfig), run by fit (custom.go), the code TrainCustom runs once it has
// split and standardised a user's data (configured.go applies Options' overrides and the data set's split). A
// full-batch fit reports its final objective, a minibatch one the mean of its last 100 minibatch estimates
// (Result.ObjectiveKind); a deep GP's test LL is its S-sample mixture's, the moment-matched Gaussian's beside it.
// ADVGP (advgp.go, distributed workers), VBKS (vbks.go, the kernel-structure search), the ODVGP protocol entries
// and the ringnorm illustration (odvgp.go, illustration.go: fixed or random-subset bases, Jacobi steps, basis
// minibatches) use machinery gpzoo train does not have and keep their own code.
//
// # Tables
//
// The seed papers' benchmark tables are definitions (tables.go): rows of entries at each paper's protocol, on the
// protocol's splits (the -bb and -havasi data sets of data.go), with the published numbers and the differences from
// the protocol. RunTable runs a table's rows × splits into a results folder, one result file per run, skipping those
// done and resuming interrupted ones (tablerun.go); QueueTable and WorkTables spread the runs over runners through
// cluster's JetStream work queue (tablequeue.go); Table.Report and WriteReproduction write the reports and
// REPRODUCTION.md from the definitions and the result files (tablereport.go).
//
// # Errors
//
// Run returns an error for an unknown entry, missing data (with the directory it looked in), or a training
// failure; it never panics on user data.
package zoo
