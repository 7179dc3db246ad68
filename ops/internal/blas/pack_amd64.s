#include "textflag.h"

// Transposing packers (pack_amd64.go): dst[p·width + i] = src[i·ld + p] for the rows i of one group (8 or 4)
// and the columns p of kb whole blocks (8 or 4 columns), a block's rows loaded as vectors, transposed in
// registers and stored as the block's columns. Moves only: no arithmetic.

// func interleave8AVX512(dst *float64, width int, src *float64, ld int, kb int)
TEXT ·interleave8AVX512(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ width+8(FP), R8
	SHLQ $3, R8
	MOVQ src+16(FP), SI
	MOVQ ld+24(FP), R9
	SHLQ $3, R9
	MOVQ kb+32(FP), CX
	LEAQ (R9)(R9*2), R10  // 3·ld
	LEAQ (R9)(R9*4), R11  // 5·ld
	LEAQ (R10)(R10*1), R12 // 6·ld
	LEAQ (R12)(R9*1), R13 // 7·ld
	LEAQ (R8)(R8*2), AX   // 3·width
	MOVQ R8, BX
	SHLQ $3, BX           // 8·width
	TESTQ CX, CX
	JZ i8done

i8loop:
	VMOVUPD (SI), Z0
	VMOVUPD (SI)(R9*1), Z1
	VMOVUPD (SI)(R9*2), Z2
	VMOVUPD (SI)(R10*1), Z3
	VMOVUPD (SI)(R9*4), Z4
	VMOVUPD (SI)(R11*1), Z5
	VMOVUPD (SI)(R12*1), Z6
	VMOVUPD (SI)(R13*1), Z7
	// pairs of rows: t0 = (r0_0 r1_0 | r0_2 r1_2 | r0_4 r1_4 | r0_6 r1_6), t1 the odd columns, …
	VUNPCKLPD Z1, Z0, Z8
	VUNPCKHPD Z1, Z0, Z9
	VUNPCKLPD Z3, Z2, Z10
	VUNPCKHPD Z3, Z2, Z11
	VUNPCKLPD Z5, Z4, Z12
	VUNPCKHPD Z5, Z4, Z13
	VUNPCKLPD Z7, Z6, Z14
	VUNPCKHPD Z7, Z6, Z15
	// 128-bit lanes: u0 = (t0.L0 t0.L1 t2.L0 t2.L1), u1 = (t0.L2 t0.L3 t2.L2 t2.L3), u2, u3 from t4, t6; the
	// same from the odd ones
	VSHUFF64X2 $0x44, Z10, Z8, Z0
	VSHUFF64X2 $0xEE, Z10, Z8, Z1
	VSHUFF64X2 $0x44, Z14, Z12, Z2
	VSHUFF64X2 $0xEE, Z14, Z12, Z3
	VSHUFF64X2 $0x44, Z11, Z9, Z4
	VSHUFF64X2 $0xEE, Z11, Z9, Z5
	VSHUFF64X2 $0x44, Z15, Z13, Z6
	VSHUFF64X2 $0xEE, Z15, Z13, Z7
	// columns: c0 = (u0.L0 u0.L2 u2.L0 u2.L2) = (r0_0 … r7_0), c2 = (u0.L1 u0.L3 u2.L1 u2.L3), c4, c6 from u1, u3
	VSHUFF64X2 $0x88, Z2, Z0, Z16
	VSHUFF64X2 $0xDD, Z2, Z0, Z18
	VSHUFF64X2 $0x88, Z3, Z1, Z20
	VSHUFF64X2 $0xDD, Z3, Z1, Z22
	VSHUFF64X2 $0x88, Z6, Z4, Z17
	VSHUFF64X2 $0xDD, Z6, Z4, Z19
	VSHUFF64X2 $0x88, Z7, Z5, Z21
	VSHUFF64X2 $0xDD, Z7, Z5, Z23
	VMOVUPD Z16, (DI)
	VMOVUPD Z17, (DI)(R8*1)
	VMOVUPD Z18, (DI)(R8*2)
	VMOVUPD Z19, (DI)(AX*1)
	LEAQ (DI)(R8*4), DX
	VMOVUPD Z20, (DX)
	VMOVUPD Z21, (DX)(R8*1)
	VMOVUPD Z22, (DX)(R8*2)
	VMOVUPD Z23, (DX)(AX*1)
	ADDQ $64, SI
	ADDQ BX, DI
	DECQ CX
	JNZ i8loop

i8done:
	VZEROUPPER
	RET

// func interleave4AVX2(dst *float64, width int, src *float64, ld int, kb int)
TEXT ·interleave4AVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ width+8(FP), R8
	SHLQ $3, R8
	MOVQ src+16(FP), SI
	MOVQ ld+24(FP), R9
	SHLQ $3, R9
	MOVQ kb+32(FP), CX
	LEAQ (R9)(R9*2), R10 // 3·ld
	LEAQ (R8)(R8*2), AX  // 3·width
	MOVQ R8, BX
	SHLQ $2, BX          // 4·width
	TESTQ CX, CX
	JZ i4done

i4loop:
	VMOVUPD (SI), Y0
	VMOVUPD (SI)(R9*1), Y1
	VMOVUPD (SI)(R9*2), Y2
	VMOVUPD (SI)(R10*1), Y3
	// t0 = (r0_0 r1_0 | r0_2 r1_2), t1 = (r0_1 r1_1 | r0_3 r1_3), t2, t3 from rows 2, 3
	VUNPCKLPD Y1, Y0, Y4
	VUNPCKHPD Y1, Y0, Y5
	VUNPCKLPD Y3, Y2, Y6
	VUNPCKHPD Y3, Y2, Y7
	// columns: c0 = (t0.lo t2.lo), c1 = (t1.lo t3.lo), c2 = (t0.hi t2.hi), c3 = (t1.hi t3.hi)
	VPERM2F128 $0x20, Y6, Y4, Y0
	VPERM2F128 $0x20, Y7, Y5, Y1
	VPERM2F128 $0x31, Y6, Y4, Y2
	VPERM2F128 $0x31, Y7, Y5, Y3
	VMOVUPD Y0, (DI)
	VMOVUPD Y1, (DI)(R8*1)
	VMOVUPD Y2, (DI)(R8*2)
	VMOVUPD Y3, (DI)(AX*1)
	ADDQ $32, SI
	ADDQ BX, DI
	DECQ CX
	JNZ i4loop

i4done:
	VZEROUPPER
	RET
