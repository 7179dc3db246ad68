// Package train is the one training loop every gpzoo model uses.
//
// A model (gp.Model) supplies a scalar loss for a batch and its Params. Train builds the graph once at a fixed
// batch size, then each step draws a minibatch from a seeded Sampler, runs forward and backward, checks that the
// loss and every gradient are finite, lets the hooks act (natural-gradient steps plug in here) and lets the
// Optimizer update the remaining trainable Params. It runs Config.Iters steps, or with Config.Converge stops
// earlier when the smoothed loss has converged (converge.go); Result.StopReason says which.
//
// # Conventions
//
//   - Minibatches have a fixed size (static shapes); the remainder of an epoch is not dropped: the Sampler walks
//     an endless stream of seeded permutations, so a batch may straddle two epochs.
//   - Optimiser state is keyed by *graph.Param, never by position.
//   - Randomness comes from the caller's *rand.Rand (math/rand/v2).
//
// # Errors
//
// A non-finite loss or gradient stops training with a *NonFiniteError naming the step, the parameter and the
// entry; the Params are restored to their last good values (those of the last finite step).
package train
