// Package blas is gpzoo's level-3 BLAS and Cholesky factorisation for the default (pure-Go) build: gonum's
// blas.Float64 and lapack.Float64 with Dgemm, Dsyrk, Dtrsm, Dtrmm and Dpotrf replaced by blocked, packed,
// register-tiled routines (the other routines are gonum's, by embedding).
//
// # Design
//
// After BLIS (Van Zee & van de Geijn, "BLIS: A Framework for Rapidly Instantiating BLAS Functionality", ACM TOMS
// 2015) and GotoBLAS (Goto & van de Geijn, "Anatomy of High-Performance Matrix Multiplication", ACM TOMS 2008):
// C += αAB is computed over blocks of kc columns of A (rows of B); each block of B (kc × nc) is packed into
// micro-panels of nr columns and each block of A (mc × kc) into micro-panels of mr rows, both contiguous in the
// order the micro-kernel reads them; the micro-kernel keeps an mr × nr tile of C in registers for the whole kc
// loop. Matrices are row-major (gonum's convention), so a tile row of C is nr contiguous values: the vectors run
// along the columns of C and B, and A's values are broadcast.
//
// Micro-kernels, chosen once at start-up from golang.org/x/sys/cpu (Kernel reports which):
//
//	avx512  12 × 16 tile in 24 zmm accumulators (Go assembly, AVX-512F)
//	avx2     6 × 8  tile in 12 ymm accumulators (Go assembly, AVX2 + FMA)
//	generic  4 × 4  tile, portable Go (math.FMA), for other CPUs and as a reference
//
// The environment variable GPZOO_BLAS=generic|avx2|avx512 forces one (an unsupported choice falls back to the
// best available), for tests and for bisecting a numerical difference; SetKernel does the same from Go.
//
// Every kernel accumulates each entry of C in the same order — one fused multiply-add per k, k ascending within
// a kc block, then C ← α·acc + C fused — and kc is the same for all, so the three kernels give the same bits:
// results do not depend on the CPU. They differ from gonum's reference in the last bits (fused multiply-adds,
// another summation order).
//
// A row-major operand whose micro-panels are its transpose (A of C = A·B, B of C = A·Bᵀ) is packed by
// transposing blocks of 8 × 8 (AVX-512) or 4 × 4 (AVX2) values in registers (pack_amd64.s), the rest in Go.
//
// Triangular solves and products (Dtrsm, Dtrmm) run on the same micro-kernel: the triangle is packed in
// micro-panels of mr rows; for each panel the micro-kernel applies the already-computed rows (a GEMM update
// with k up to the panel) and a small kernel finishes the mr × mr diagonal block by substitution (multiplying by
// the reciprocals of the diagonal, as OpenBLAS does; never an inverse matrix). Up to order 256 B's rows are read
// where they are through the strided kernel, whole tiles of nr columns (a solve's panels solved in place, at a
// negative stride when the sweep runs from the last row; a product's through a scratch tile); above, and for
// the last partial tile, each tile of B is packed first. DtrsmLeftTo solves from one matrix into another
// without a copy. Right-side cases transpose B. Dgemmt (one triangle of a product; Dsyrk is Dgemmt with B = A)
// skips the micro-tiles outside the triangle and computes those across the diagonal in a scratch tile.
//
// TriQuad is the batched form of ops.TriQuadCols' P triangular products, which all multiply the same A: each
// column tile of A is packed once and every factor applied to it while it is in cache (the column sums of squares
// taken from each tile of L_qᵀA as it leaves the kernel, ∂A = Σ L_q·G_q accumulated in the kernel), and the
// operands of the lower-triangle products tril(A·G_qᵀ) are written in the kernel's packed layout as their tiles
// are made, block of kc columns by block.
//
// Dpotrf (lower) and CholeskyBackward (the factorisation's backward pass by Murray's blocked reverse mode, about
// 2n³/3 flops) are blocked by 48 and call the micro-kernel themselves (chol.go, cholrev.go), at the orders GP
// training uses as well as large ones: each kernel has a strided twin that reads operands stored k-major in place
// (the blocks of L, and of the right-hand sides, transposed once per block by 8 × 8 vector transposes), so nothing
// is packed twice; the diagonal blocks are factorised, and reversed, by vector kernels (a row in registers,
// left-looking; rows updated under a mask), and the solves against them run as Dtrsm's. Each entry gets the same
// operations in the same order in every kernel (the Go versions of these kernels included), so the bits do not
// depend on the CPU here either.
// Triangular solves and products with at most two right-hand sides (a GP's y) run as level-2 loops (trsv.go),
// which a tile of 8 or 16 columns would mostly pad.
//
// # Parallelism
//
// Large calls split C into stripes of rows or columns (whichever is longer) run on up to GOMAXPROCS goroutines;
// calls below about 2·10⁶ flops run on the calling goroutine. Dpotrf and CholeskyBackward split their products and
// solves (above the same threshold) into pieces claimed by the caller and ops/internal/parallel's pooled workers. Callers that already run calls on several
// goroutines (gpzoo's ops) need no coordination: the goroutines share GOMAXPROCS threads.
package blas
