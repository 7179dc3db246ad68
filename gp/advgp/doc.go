// Package advgp is the model side of ADVGP, asynchronous distributed variational GP regression (Peng, Zhe & Qi
// 2017; MATH.md §11): the weight-space augmented model (Model, a whitened SVGP in disguise), the data term of
// one worker's shard (ShardTerm), the weight-space reference computation of eqs. 14–17 (WeightSpace) and the
// closed-form proximal operator of the KL term (Prox, ProxStep; eqs. 18–20). The parameter server, the workers
// and their NATS transport live in package dist.
package advgp
