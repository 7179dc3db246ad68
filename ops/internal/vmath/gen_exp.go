//go:build ignore

// gen_exp writes the exponential of package vmath: expconst.go (the constants, computed here in 256-bit
// arithmetic and rounded once to float64), exp_amd64.s (the AVX2 and AVX-512 kernels, Go assembly) and
// exp_amd64.go (their declarations and registration). Run it with go generate in ops/internal/vmath; the output is
// committed.
//
// Each kernel runs, per lane, exactly the operations of expReduced (exp.go), fused where it fuses:
//
//	t  = fma(x, log2e, 1.5·2⁵²)            k = round(x·log2e) in the low bits of t
//	kf = t − 1.5·2⁵²
//	r  = fma(kf, −ln2Hi, x)                exact
//	r  = fma(kf, −ln2Lo, r)
//	p  = c13; p = fma(p, r, c_j) for j = 12 … 0
//	bits(p) + bits(t)<<52                  p·2ᵏ
//
// so every kernel gives the bits of the generic Go code. A kernel takes (dst, src, n) and returns how many
// elements it wrote, a multiple of its vector width: it runs blocks of unroll vectors, then single vectors, while
// every lane of the block (or vector) lies in [expMin, expMax] (ordered comparisons, so NaN is out of range), and
// stops at the first vector with a lane out of range or when fewer than a vector's worth remain. The Go driver
// finishes that vector with the scalar code (math.Exp for the lanes out of range) and calls the kernel again.
//
// Registers. Vector i of a block keeps x then r in register i, t then the scale 2ᵏ's bits in register U+i, and
// kf then p in register 2U+i (U = unroll: 12 registers for U = 4).
//
//	avx2   (16 ymm registers, 4 doubles): log2e, 1.5·2⁵², expMin and expMax stay in Y12–Y15; the other constants
//	       are memory operands of the FMAs (the table holds each constant four times). The range test ORs
//	       unordered "not ≥ min" and "not ≤ max" masks and VPTESTs the result.
//	avx512 (32 zmm registers, 8 doubles): all 19 distinct constants stay in Z12–Z30; the range test chains
//	       ordered "≥ min" and "≤ max" comparisons through two opmask registers (masked compares AND their
//	       results), then checks that all 8 bits of K1 & K2 are set.
//
// VZEROUPPER before returning avoids the AVX–SSE transition penalty in the Go code that follows.
package main

import (
	"bytes"
	"fmt"
	"go/format"
	"math"
	"math/big"
	"os"
	"strconv"
)

const prec = 256

// ln2Digits is ln 2 to 100 significant digits.
const ln2Digits = "0.6931471805599453094172321214581765680755001343602552541206800094933936219696947156058633269964186875"

// degree of the Taylor polynomial of eʳ: the remainder |r|¹⁴/14!·e^|r| ≤ 5.8·10⁻¹⁸ on |r| ≤ ln2/2.
const degree = 13

// The range the kernels handle: beyond it the result overflows, becomes subnormal or the input is NaN.
const (
	expMin = -708.0
	expMax = 709.0
)

type constant struct {
	name, doc string
	v         float64
}

func bigf(s string) *big.Float {
	f, _, err := big.ParseFloat(s, 10, prec, big.ToNearestEven)
	if err != nil {
		panic(err)
	}
	return f
}

func constants() (scalars []constant, coeffs []float64) {
	ln2 := bigf(ln2Digits)
	hi, _ := ln2.Float64()
	lo, _ := new(big.Float).SetPrec(prec).Sub(ln2, new(big.Float).SetFloat64(hi)).Float64()
	log2e, _ := new(big.Float).SetPrec(prec).Quo(big.NewFloat(1).SetPrec(prec), ln2).Float64()
	scalars = []constant{
		{"expLog2e", "log₂e rounded to nearest", log2e},
		{"expShifter", "1.5·2⁵²: adding it rounds to an integer, kept in the low mantissa bits", 0x1.8p52},
		{"expLn2Hi", "ln 2 rounded to nearest (Cody–Waite high part; kf·ln2Hi is exact in an FMA)", hi},
		{"expLn2Lo", "ln 2 − ln2Hi rounded to nearest (Cody–Waite low part)", lo},
		{"expMin", "smallest input the vector kernels take: e^expMin is normal", expMin},
		{"expMax", "largest input the vector kernels take: e^expMax is finite", expMax},
	}
	fact := big.NewInt(1)
	for n := 0; n <= degree; n++ {
		if n > 0 {
			fact.Mul(fact, big.NewInt(int64(n)))
		}
		c, _ := new(big.Float).SetPrec(prec).Quo(big.NewFloat(1).SetPrec(prec), new(big.Float).SetPrec(prec).SetInt(fact)).Float64()
		coeffs = append(coeffs, c)
	}
	return scalars, coeffs
}

type kernel struct {
	name    string // Go function name
	tag     string // Kernel() name
	reg     string // Y or Z
	vec     int    // doubles per vector
	unroll  int
	feature string
}

var kernels = []kernel{
	{name: "expAVX2", tag: "avx2", reg: "Y", vec: 4, unroll: 4, feature: "cpu.X86.HasAVX2 && cpu.X86.HasFMA"},
	{name: "expAVX512", tag: "avx512", reg: "Z", vec: 8, unroll: 4, feature: "cpu.X86.HasAVX512F"},
}

// table layout: each constant 32 bytes (four copies), so that AVX2 uses it as a memory operand.
var slot = map[string]int{}

func off(name string) string { return fmt.Sprintf("expc<>+%d(SB)", 32*slot[name]) }

func coefName(j int) string { return fmt.Sprintf("c%d", j) }

type emitter struct {
	b *bytes.Buffer
	k kernel
	// operand of each constant: a register or a memory reference
	op map[string]string
}

func (e *emitter) f(format string, a ...any) { fmt.Fprintf(e.b, "\t"+format+"\n", a...) }
func (e *emitter) r(i int) string            { return fmt.Sprintf("%s%d", e.k.reg, i) }

// body emits the range test and the computation of u vectors at element offset AX (bail: the label to jump to
// when a lane is out of range), then advances AX.
func (e *emitter) body(u int, bail string) {
	k := e.k
	x := func(i int) string { return e.r(i) }
	t := func(i int) string { return e.r(u + i) }
	p := func(i int) string { return e.r(2*u + i) }
	bytesPer := 8 * k.vec
	for i := 0; i < u; i++ {
		e.f("VMOVUPD %d(SI)(AX*8), %s", i*bytesPer, x(i))
	}
	if k.reg == "Y" {
		for i := 0; i < u; i++ {
			e.f("VCMPPD $0x19, %s, %s, %s", e.op["expMin"], x(i), t(i)) // NGE_UQ: x < min or NaN
			e.f("VCMPPD $0x16, %s, %s, %s", e.op["expMax"], x(i), p(i)) // NLE_UQ: x > max or NaN
			e.f("VORPD %s, %s, %s", p(i), t(i), t(i))
		}
		for i := 1; i < u; i++ {
			e.f("VORPD %s, %s, %s", t(i), t(0), t(0))
		}
		e.f("VPTEST %s, %s", t(0), t(0))
		e.f("JNE %s", bail)
	} else {
		for i := 0; i < u; i++ {
			m := fmt.Sprintf("K%d", 1+i%2)
			if i < 2 {
				e.f("VCMPPD $0x1d, %s, %s, %s", e.op["expMin"], x(i), m) // GE_OQ
			} else {
				e.f("VCMPPD $0x1d, %s, %s, %s, %s", e.op["expMin"], x(i), m, m)
			}
			e.f("VCMPPD $0x12, %s, %s, %s, %s", e.op["expMax"], x(i), m, m) // LE_OQ
		}
		if u > 1 {
			e.f("KANDW K2, K1, K1")
		}
		e.f("KMOVW K1, BX")
		e.f("CMPL BX, $0xff")
		e.f("JNE %s", bail)
	}
	for i := 0; i < u; i++ {
		e.f("VMOVAPD %s, %s", e.op["expShifter"], t(i))
	}
	for i := 0; i < u; i++ {
		e.f("VFMADD231PD %s, %s, %s", e.op["expLog2e"], x(i), t(i)) // t = x·log2e + shifter
	}
	for i := 0; i < u; i++ {
		e.f("VSUBPD %s, %s, %s", e.op["expShifter"], t(i), p(i)) // kf = t − shifter
	}
	for i := 0; i < u; i++ {
		e.f("VFMADD231PD %s, %s, %s", e.op["negLn2Hi"], p(i), x(i)) // r = kf·(−ln2Hi) + x
	}
	for i := 0; i < u; i++ {
		e.f("VFMADD231PD %s, %s, %s", e.op["negLn2Lo"], p(i), x(i)) // r = kf·(−ln2Lo) + r
	}
	for i := 0; i < u; i++ {
		if k.reg == "Y" {
			e.f("VMOVUPD %s, %s", e.op[coefName(degree)], p(i))
		} else {
			e.f("VMOVAPD %s, %s", e.op[coefName(degree)], p(i))
		}
	}
	for j := degree - 1; j >= 0; j-- {
		for i := 0; i < u; i++ {
			e.f("VFMADD213PD %s, %s, %s", e.op[coefName(j)], x(i), p(i)) // p = r·p + c_j
		}
	}
	for i := 0; i < u; i++ {
		e.f("VPSLLQ $52, %s, %s", t(i), t(i))
		e.f("VPADDQ %s, %s, %s", t(i), p(i), p(i))
		e.f("VMOVUPD %s, %d(DI)(AX*8)", p(i), i*bytesPer)
	}
	e.f("ADDQ $%d, AX", u*k.vec)
}

func emitKernel(b *bytes.Buffer, k kernel) {
	e := &emitter{b: b, k: k, op: map[string]string{}}
	u := k.unroll
	fmt.Fprintf(b, "\n// func %s(dst, src *float64, n int) int\nTEXT ·%s(SB), NOSPLIT, $0-32\n", k.name, k.name)
	e.f("MOVQ dst+0(FP), DI")
	e.f("MOVQ src+8(FP), SI")
	e.f("MOVQ n+16(FP), CX")
	e.f("XORQ AX, AX")
	var inReg []string
	if k.reg == "Y" {
		inReg = []string{"expLog2e", "expShifter", "expMin", "expMax"}
	} else {
		inReg = []string{"expLog2e", "expShifter", "expMin", "expMax", "negLn2Hi", "negLn2Lo"}
		for j := 0; j <= degree; j++ {
			if j == 0 { // c0 = c1 = 1
				continue
			}
			inReg = append(inReg, coefName(j))
		}
	}
	for name := range slot {
		e.op[name] = off(name)
	}
	next := 3 * u
	for _, name := range inReg {
		e.op[name] = e.r(next)
		e.f("VBROADCASTSD %s, %s", off(name), e.r(next))
		next++
	}
	if k.reg == "Z" {
		e.op[coefName(0)] = e.op[coefName(1)]
	}
	if next > map[string]int{"Y": 16, "Z": 32}[k.reg] {
		panic("too many registers")
	}
	block, single := u*k.vec, k.vec
	fmt.Fprintf(b, "\n\t// Blocks of %d vectors while %d elements remain.\n", u, block)
	e.f("MOVQ CX, DX")
	e.f("SUBQ $%d, DX", block)
	fmt.Fprintf(b, "%sblock:\n", k.tag)
	e.f("CMPQ AX, DX")
	e.f("JGT %ssingle", k.tag)
	e.body(u, k.tag+"single")
	e.f("JMP %sblock", k.tag)
	fmt.Fprintf(b, "\n\t// Single vectors, up to the first with a lane out of range.\n%ssingle:\n", k.tag)
	e.f("MOVQ CX, DX")
	e.f("SUBQ $%d, DX", single)
	fmt.Fprintf(b, "%ssingleloop:\n", k.tag)
	e.f("CMPQ AX, DX")
	e.f("JGT %sdone", k.tag)
	e.body(1, k.tag+"done")
	e.f("JMP %ssingleloop", k.tag)
	fmt.Fprintf(b, "\n%sdone:\n", k.tag)
	e.f("VZEROUPPER")
	e.f("MOVQ AX, ret+24(FP)")
	e.f("RET")
}

func main() {
	scalars, coeffs := constants()

	// expconst.go
	var c bytes.Buffer
	fmt.Fprintf(&c, "// Code generated by gen_exp.go; DO NOT EDIT.\n\npackage vmath\n\n")
	fmt.Fprintf(&c, "// The constants of the exponential, computed in %d-bit arithmetic and rounded once to nearest.\nconst (\n", prec)
	for _, s := range scalars {
		fmt.Fprintf(&c, "\t%s = %s // %s\n", s.name, hexf(s.v), s.doc)
	}
	fmt.Fprintf(&c, "\n\t// Taylor coefficients 1/j! of eʳ, j = 0 … %d (Horner from c%d down).\n", degree, degree)
	for j, v := range coeffs {
		fmt.Fprintf(&c, "\tc%d = %s\n", j, hexf(v))
	}
	fmt.Fprintf(&c, ")\n")
	src, err := format.Source(c.Bytes())
	must(err)
	must(os.WriteFile("expconst.go", src, 0o644))

	// exp_amd64.s: the table, then the kernels.
	var s bytes.Buffer
	fmt.Fprintf(&s, "// Code generated by gen_exp.go; DO NOT EDIT.\n\n#include \"textflag.h\"\n\n")
	fmt.Fprintf(&s, "// expc: each constant of expconst.go four times (32 bytes).\n")
	entries := []constant{}
	for _, sc := range scalars {
		switch sc.name {
		case "expLn2Hi":
			entries = append(entries, constant{name: "negLn2Hi", v: -sc.v})
		case "expLn2Lo":
			entries = append(entries, constant{name: "negLn2Lo", v: -sc.v})
		default:
			entries = append(entries, sc)
		}
	}
	for j, v := range coeffs {
		entries = append(entries, constant{name: coefName(j), v: v})
	}
	for i, en := range entries {
		slot[en.name] = i
		for r := 0; r < 4; r++ {
			fmt.Fprintf(&s, "DATA expc<>+%d(SB)/8, $0x%016x\n", 32*i+8*r, math.Float64bits(en.v))
		}
	}
	fmt.Fprintf(&s, "GLOBL expc<>(SB), RODATA|NOPTR, $%d\n", 32*len(entries))
	for _, k := range kernels {
		emitKernel(&s, k)
	}
	must(os.WriteFile("exp_amd64.s", s.Bytes(), 0o644))

	// exp_amd64.go
	var g bytes.Buffer
	fmt.Fprintf(&g, "// Code generated by gen_exp.go; DO NOT EDIT.\n\npackage vmath\n\nimport \"golang.org/x/sys/cpu\"\n\n")
	for _, k := range kernels {
		fmt.Fprintf(&g, "// %s writes e^src[i] to dst[i] for whole vectors of %d while every lane lies in [expMin, expMax]\n", k.name, k.vec)
		fmt.Fprintf(&g, "// and returns how many elements it wrote (%s; see gen_exp.go).\n//\n//go:noescape\n", k.tag)
		fmt.Fprintf(&g, "func %s(dst, src *float64, n int) int\n\n", k.name)
	}
	fmt.Fprintf(&g, "var (\n")
	for _, k := range kernels {
		fmt.Fprintf(&g, "\t%sKernel = &kernel{name: %q, width: %d}\n", k.tag, k.tag, k.vec)
	}
	fmt.Fprintf(&g, ")\n\nfunc addArchKernels() {\n")
	for _, k := range kernels {
		fmt.Fprintf(&g, "\tif %s {\n\t\tkernels[%q] = %sKernel\n\t}\n", k.feature, k.tag, k.tag)
	}
	fmt.Fprintf(&g, "}\n\n")
	fmt.Fprintf(&g, "// expArch runs kernel k's assembly on n elements; see the kernels above.\n")
	fmt.Fprintf(&g, "func expArch(k *kernel, dst, src *float64, n int) int {\n\tswitch k {\n")
	for _, k := range kernels {
		fmt.Fprintf(&g, "\tcase %sKernel:\n\t\treturn %s(dst, src, n)\n", k.tag, k.name)
	}
	fmt.Fprintf(&g, "\t}\n\treturn 0\n}\n")
	src, err = format.Source(g.Bytes())
	must(err)
	must(os.WriteFile("exp_amd64.go", src, 0o644))
}

func hexf(v float64) string { return strconv.FormatFloat(v, 'x', -1, 64) }

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
