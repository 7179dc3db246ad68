// Package cluster trains every model whose loss is a sum over rows (gp.RowSum: SVGP with any layer family, the
// LMC, deep GPs, ADVGP's weight-space model of package gp/advgp) with a parameter server and k workers that talk
// over NATS (github.com/nats-io/nats.go), by the bounded-delay rule of ADVGP (Peng, Zhe & Qi 2017, Algorithm 1):
// the server holds the parameters, rebuilds the model from its Spec, and applies update t, through the model's
// own optimiser and hooks (train.Updater), as soon as every live worker has pushed a gradient computed at some
// version ≥ t − τ (τ = 0 is synchronous); each worker owns one shard of the training data, pulls the newest
// parameters, computes the gradient of its data term and pushes it. It also holds the JetStream work queue
// (queue.go) on which `gpzoo table` spreads a table's runs over runners, and the security every connection
// shares (security.go). It is the only package that imports NATS.
//
// Subjects, under the prefix gpzoo.cluster.RUN (RunSubjects; CheckRunName keeps RUN one subject token):
//
//	.join        request/reply: a worker asks for its shard's Job and the current parameters
//	.params      server → workers: every new parameter version (and the final "done")
//	.grad        worker → server: a gradient with the version it was computed at
//	.hb          worker → server: heartbeats
//	.ctl.ID      server → one worker: "you were dropped, join again"
//	.cg.join     request/reply: a products worker asks for the exact GP's kernel, inputs and its rows
//	.cg.task     server → products workers: the hyperparameters, a product K·V, a gradient, done
//	.cg.result   products worker → server: its rows' part (products.go: ServeProducts, WorkProducts)
//	.cg.beat     products worker → server: heartbeats
//	.cg.alive    server → products workers: heartbeats
//
// Faults: a worker silent for HeartbeatTimeout, or without a gradient for StallTimeout, is dropped and training
// goes on with the others (the aggregated gradient is rescaled to the whole data set); a restarted or dropped
// worker joins again; a gradient older than the delay bound is refused and counted; the server checkpoints its
// parameters and optimiser state and resumes from them. Local starts an embedded NATS server
// (github.com/nats-io/nats-server/v2) on loopback, the server and k workers (goroutines or processes).
package cluster
