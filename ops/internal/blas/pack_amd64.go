package blas

// The transposing packers of pack_amd64.s: kb blocks of 8 (4) columns of 8 (4) rows of src (stride ld) into dst
// k-major (stride width).

//go:noescape
func interleave8AVX512(dst *float64, width int, src *float64, ld int, kb int)

//go:noescape
func interleave4AVX2(dst *float64, width int, src *float64, ld int, kb int)

// interleaveArch packs the first rows of src by the active kernel's vector code (groups of 8 rows with AVX-512,
// then of 4 with AVX2; none for the generic kernel) and returns how many rows it packed (all their k columns).
// The caller has checked the bounds: dst holds (k−1)·width + rows values, src (rows−1)·ld + k.
func interleaveArch(dst, src []float64, ld, rows, k, width int) (done int) {
	switch sel.Active().name {
	case "avx512":
		for ; done+8 <= rows; done += 8 {
			if k >= 8 {
				interleave8AVX512(&dst[done], width, &src[done*ld], ld, k/8)
			}
			interleaveGo(dst[done:], src[done*ld:], ld, 8, k&^7, k, width)
		}
		fallthrough
	case "avx2":
		for ; done+4 <= rows; done += 4 {
			if k >= 4 {
				interleave4AVX2(&dst[done], width, &src[done*ld], ld, k/4)
			}
			interleaveGo(dst[done:], src[done*ld:], ld, 4, k&^3, k, width)
		}
	}
	return done
}
