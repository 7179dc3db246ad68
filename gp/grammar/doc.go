// Package grammar is the kernel-expression grammar of variational Bayesian kernel selection (VBKS; Teng, Chen,
// Zhang & Low 2020, "Scalable Variational Bayesian Kernel Selection for Sparse Gaussian Process Regression",
// AAAI, Sec. 6.1 and App. E.1). Candidate kernels are expressions over the four base kernels PER, LIN, RQ and SE
// combined with + and ×, as in the compositional kernel search of Duvenaud et al. (2013). The package parses
// and prints such expressions, enumerates the kernel space K_144 (every expression up to level 3), holds the
// paper's K_12 table, and turns an expression into a gp.Kernel.
//
// # Conventions
//
//   - An Expr is immutable and always in canonical form: same-operator children are flattened
//     ((A+B)+C = A+B+C, associativity) and operands are sorted (commutativity). Distributivity is not applied:
//     (PER+RQ)*LIN stays as it is. Two expressions are Equal when their canonical forms are the same.
//   - Canonical operand order: compound operands (sums, products) come before base kernels; base kernels are
//     ordered PER < LIN < RQ < SE (the order of the paper's tables); compound operands are ordered by their
//     canonical strings (byte order). Under this order the entries of the paper's K_12 table (App. E.1,
//     Table 1) print exactly as there, with × written *.
//   - Printing is ASCII without spaces and with minimal parentheses: a sum inside a product is parenthesised,
//     nothing else is ("(PER+RQ)*LIN", "LIN*RQ+PER"). Parsing accepts any case, spaces, "*" or "×", and
//     redundant parentheses; * binds tighter than +.
//   - A leaf may be followed by input columns, "SE[0,2]": the kernel acts on those columns only (gp.Active,
//     GPflow's active_dims), e.g. "se[0,1]*coregion[2]". Columns after a parenthesised expression go to each of
//     its leaves ("(SE+PER)[0]" is "PER[0]+SE[0]"; a leaf's own columns index into them). They print after the
//     leaf's name; among leaves of the same kernel, one on every column comes first, then by column list.
//   - The level of an expression is its number of base-kernel occurrences (leaves): PER+PER+SE has level 3.
//   - A built kernel (Expr.Kernel) names each leaf's hyperparameters "<Name>.<i>.<base>" with i the leaf's
//     index in canonical print order, and gives a product a single overall scale: the leaf operands of a
//     product other than its first have their variance fixed at 1.
//
// # Errors
//
// Parse and ParseList return *SyntaxError (byte offset, message) for every malformed input; Sum and Product
// return plain errors for fewer than two or nil operands; Enumerate rejects levels outside [1, 6];
// Expr.Kernel returns errors wrapping gp.ErrConfig for invalid configurations. Nothing panics on user input.
package grammar
