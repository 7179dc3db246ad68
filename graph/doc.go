// Package graph is gpzoo's adapter over the gorgonia engine. Model code builds its computation with a Graph,
// declares trainable values as Params, compiles a Program and runs it; it never touches gorgonia directly, so
// the engine's traps are handled once, here, and the engine can be swapped.
//
// # Conventions
//
//   - float64 throughout. Shapes are written [rows, cols]; a vector is [n]; a scalar has the empty shape.
//   - Every node a Graph creates gets a unique name (gorgonia merges input nodes whose names match).
//   - A Param stores its unconstrained ("raw") value in Go memory; each Graph that uses it gets its own leaf,
//     filled from that storage at every Run. Gradients are with respect to the raw value.
//   - Programs run on gpzoo's own executor (exec.go), not gorgonia's machines: the nodes are tasks of an
//     ops.TaskGraph, independent ones run concurrently, and nodes sharing state run in the engine's topological
//     order, so every GOMAXPROCS gives the tape machine's bits. Shapes are static, so inputs are bound by name
//     at a fixed size every step.
//   - Values are copied out of the nodes' buffers after each run (ops reuse their buffers across runs).
//
// # Errors
//
// Graph methods that build nodes do not return errors one by one: the Graph keeps the first error (with the
// op and node names) and every later method returns a poisoned node; Err and Compile report it. Exported
// functions never panic on user data; a panic inside the engine while building is recovered and returned as
// an error.
package graph
