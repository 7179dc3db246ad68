#!/usr/bin/env bash
# convergence_table.sh: issue 31's check of gpzoo train's default training length (deliverable 4).
#
# For every data set, split and model it trains three times with gpzoo train's defaults otherwise:
#   old   --iters 2000   the fixed step count that was the default before the convergence criterion
#   new   (no flag)      the default: stop when converged, at most zoo.DefaultMaxIters steps
#   long  --iters 6000
# old and new run back to back, their order alternating from one run to the next, so that the machine's drift
# falls on both alike; the long runs follow. It then prints a Markdown table: per data set and model the mean
# test LL of old, new and long over the splits, new − old and new − long, the mean steps new took (and why it
# stopped), and the total training seconds (train_seconds: the steps' wall time) of old and new; a last row sums
# the seconds. The issue asks: new ≥ old − 0.01 and new ≥ long − 0.02 in every row, and total new ≤ total old.
#
# Usage (from the repository's root; the whole check takes hours on 2 cores):
#   scripts/convergence_table.sh [--data DIR] [--out DIR] [--sets "boston kin8nm ..."] [--splits "0 1 2"]
#                                [--models "svgp dgp"] [--no-long]
# Defaults: --data $GPZOO_DATA, else ../shared/data; --out convergence-runs; the issue's sets boston kin8nm
# naval power yacht protein, splits 0 1 2, models svgp dgp, seed 1; protein's training rows subsampled to 10,000
# (--max-train-rows 10000, drawn by the seed). Each run writes OUT/DATASET-MODEL-sK-CONFIG.json; a run whose
# JSON exists is not run again, so an interrupted check continues where it stopped (remove OUT to start
# afresh). The table is also written to OUT/table.md. NICE (default 10) is the niceness of the runs.
set -euo pipefail

data=${GPZOO_DATA:-../shared/data}
out=convergence-runs
sets="boston kin8nm naval power yacht protein"
splits="0 1 2"
models="svgp dgp"
long=1
while [ $# -gt 0 ]; do
	case $1 in
	--data) data=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--sets) sets=$2; shift 2 ;;
	--splits) splits=$2; shift 2 ;;
	--models) models=$2; shift 2 ;;
	--no-long) long=0; shift ;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "convergence_table.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
done
[ -f go.mod ] && grep -q '^module github.com/gpzoo/gpzoo' go.mod || { echo "run from the gpzoo repository's root" >&2; exit 2; }
mkdir -p "$out"
bin=$out/gpzoo
go build -o "$bin" ./cmd/gpzoo
nice=${NICE:-10}

# json FILE KEY prints KEY's value in gpzoo's indented JSON result (one key a line).
json() { sed -n "s/^  \"$2\": \(.*\)$/\1/p" "$1" | sed 's/,$//; s/^"//; s/"$//'; }

# run DATASET SPLIT MODEL CONFIG trains one configuration unless its JSON exists.
run() {
	local ds=$1 k=$2 m=$3 cfg=$4 flags=()
	local f=$out/$ds-$m-s$k-$cfg.json
	[ -s "$f" ] && return 0
	case $cfg in
	old) flags=(--iters 2000) ;;
	long) flags=(--iters 6000) ;;
	new) ;;
	esac
	[ "$ds" = protein ] && flags+=(--max-train-rows 10000)
	echo "$(date +%T) $ds split $k $m $cfg" >&2
	nice -n "$nice" "$bin" train --dataset "$ds" --data "$data" --split "$k" --model "$m" --seed 1 --quiet \
		"${flags[@]}" --save "$out/model.gpz" --out "$f.tmp" >"$out/last.log" 2>&1 ||
		{ cat "$out/last.log" >&2; exit 1; }
	mv "$f.tmp" "$f"
}

i=0
for ds in $sets; do
	for k in $splits; do
		for m in $models; do
			if [ $((i % 2)) -eq 0 ]; then run "$ds" "$k" "$m" old; run "$ds" "$k" "$m" new; else run "$ds" "$k" "$m" new; run "$ds" "$k" "$m" old; fi
			i=$((i + 1))
		done
	done
done
if [ $long = 1 ]; then
	for ds in $sets; do for k in $splits; do for m in $models; do run "$ds" "$k" "$m" long; done; done; done
fi

# The table.
{
	echo "| data set | model | test LL old (2000) | test LL new | test LL 6000 | new − old | new − 6000 | steps new (mean) | stopped | train s old | train s new |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|"
	tot_old=0 tot_new=0
	for ds in $sets; do
		for m in $models; do
			row=$(for k in $splits; do
				for cfg in old new long; do
					f=$out/$ds-$m-s$k-$cfg.json
					if [ -s "$f" ]; then echo "$cfg $(json "$f" test_ll) $(json "$f" iters) $(json "$f" train_seconds) $(json "$f" stop_reason | tr ' ' _)"; fi
				done
			done | awk -v ds="$ds" -v m="$m" '
				{ n[$1]++; ll[$1] += $2; it[$1] += $3; s[$1] += $4; if ($1 == "new") why[$5]++ }
				END {
					f = "%.4f"
					o = n["old"] ? sprintf(f, ll["old"]/n["old"]) : "–"
					w = n["new"] ? sprintf(f, ll["new"]/n["new"]) : "–"
					l = n["long"] ? sprintf(f, ll["long"]/n["long"]) : "–"
					d1 = n["old"] && n["new"] ? sprintf("%+.4f", ll["new"]/n["new"] - ll["old"]/n["old"]) : "–"
					d2 = n["long"] && n["new"] ? sprintf("%+.4f", ll["new"]/n["new"] - ll["long"]/n["long"]) : "–"
					st = n["new"] ? sprintf("%.0f", it["new"]/n["new"]) : "–"
					r = ""; for (k in why) r = r (r == "" ? "" : ", ") why[k] "× " k; gsub("_", " ", r)
					printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %.1f | %.1f |\t%s %s\n", ds, m, o, w, l, d1, d2, st, r, s["old"], s["new"], s["old"], s["new"]
				}')
			echo "${row%%$'\t'*}"
			secs=${row##*$'\t'}
			tot_old=$(awk -v a="$tot_old" -v b="${secs% *}" 'BEGIN { print a + b }')
			tot_new=$(awk -v a="$tot_new" -v b="${secs#* }" 'BEGIN { print a + b }')
		done
	done
	printf "| **total** | | | | | | | | | %.1f | %.1f |\n" "$tot_old" "$tot_new"
	echo
	echo "Splits $splits, seed 1; old = --iters 2000, new = the default (convergence criterion, cap $(json "$(ls "$out"/*-new.json | head -1)" max_iters)), 6000 = --iters 6000; protein's training rows subsampled to 10,000. $(date -u +%F), $(uname -m), GOMAXPROCS=$(json "$(ls "$out"/*-new.json | head -1)" gomaxprocs)."
} | tee "$out/table.md"
