#!/bin/bash
# bench/accuracy.sh - how true are calltrace's times? (a benchmark, not a test)
#
# On CPU-bound fixtures whose functions take from 1 us to 1 ms per call
# (bench/workloads/ladder.c: four functions of ~1 us, 10 us, 100 us and 1 ms with a
# quarter of the run time each; bench/workloads/mixed.c: 121 functions, 1 us..1 ms):
#   - each function's share of the total OWN time (calltrace --format json,
#     functions[].own_ns, the 'suspend' pseudo-function left out) against its share of
#     the instructions executed, self, as counted by `valgrind --tool=callgrind` on the
#     same fixture and the same input (callgrind_annotate), over the same functions;
#     target: every function within 5 percentage points;
#   - main's ACC (functions[main].acc_ns) against the wall time of the untraced run made
#     just before it (which also holds exec, dynamic linking and exit, ~1 ms); target:
#     within 10 %.
# calltrace runs as users run it (no taskset; it pins itself and the program to the
# CPU it starts on); PIN=1 runs it and the untraced program under taskset -c 0. REPEAT runs (default 3) of calltrace and of the untraced program;
# the verdict uses the median run. Markdown on stdout, progress on stderr.
#
# Usage: bench/accuracy.sh [BUILD_DIR]     (default: build); takes about 30 s.
# Needs valgrind (callgrind_annotate) and jq; installs jq with apt-get when root.
# Without jq it falls back to python3 if present (said in the output).
set -u
set -f

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
build=${1:-$top/build}
REPEAT=${REPEAT:-3}
pin=()
[ "${PIN:-0}" = 1 ] && pin=(taskset -c 0)
ct=$build/src/calltrace
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
say() { echo "accuracy: $*" >&2; }
fail() { echo "accuracy: $*" >&2; exit 1; }
have() { command -v "$1" >/dev/null 2>&1; }

[ -x "$ct" ] || fail "$ct not built; run: cmake -S . -B build && cmake --build build -j2"
have valgrind && have callgrind_annotate || fail "valgrind (callgrind_annotate) not installed: apt-get install valgrind"
parser=jq
if ! have jq && [ "$(id -u)" = 0 ] && have apt-get; then
	say "apt-get install -y jq"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q jq >"$out/apt.log" 2>&1 ||
		{ apt-get update -q >>"$out/apt.log" 2>&1 &&
			DEBIAN_FRONTEND=noninteractive apt-get install -y -q jq >>"$out/apt.log" 2>&1; }
fi
if ! have jq; then
	have python3 || fail "neither jq nor python3: apt-get install jq"
	parser=python3
fi

CFLAGS="-O2 -fno-inline -fno-ipa-icf -fno-optimize-sibling-calls"
cc $CFLAGS -o "$out/ladder" "$here/workloads/ladder.c" || fail "cc ladder"
cc $CFLAGS -o "$out/mixed" "$here/workloads/mixed.c" || fail "cc mixed"

# json FILE -> "name<TAB>calls<TAB>own_ns<TAB>acc_ns" per function
json() {
	if [ $parser = jq ]; then
		jq -r '.functions[] | [.name, .calls, .own_ns, .acc_ns] | @tsv' "$1"
	else
		python3 -c 'import json, sys
for f in json.load(open(sys.argv[1]))["functions"]:
    print("%s\t%d\t%d\t%d" % (f["name"], f["calls"], f["own_ns"], f["acc_ns"]))' "$1"
	fi
}
med() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

echo "## calltrace time accuracy against callgrind's instruction counts"
echo
echo "Machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), kernel $(uname -r)."
echo "JSON parsed with $parser. Placement: $([ ${#pin[@]} -gt 0 ] && echo 'taskset -c 0 (PIN=1)' || echo 'unpinned, as users run it')."
echo "$REPEAT calltrace runs per fixture, each right after an untraced run;"
echo "the detailed table is from the run with the median largest deviation."
echo

verdicts=()
for spec in "ladder 25" "mixed 20"; do
	set -- $spec
	fx=$1 n=$2
	say "$fx $n: callgrind"
	valgrind --tool=callgrind --callgrind-out-file="$out/$fx.cg" "$out/$fx" "$n" >/dev/null 2>"$out/$fx.vg" ||
		fail "callgrind failed on $fx"
	# self Ir per function of the fixture binary itself
	callgrind_annotate --threshold=100 "$out/$fx.cg" 2>/dev/null |
		awk -v bin="[$out/$fx]" '$0 ~ /^ *[0-9,]+ +\(/ && index($0, bin) {
			ir = $1; gsub(/,/, "", ir); fn = $0
			sub(/^ *[0-9,]+ +\( *[0-9.]+%\) +/, "", fn); sub(/ \[.*$/, "", fn); sub(/^.*:/, "", fn)
			print fn "\t" ir }' >"$out/$fx.ir"
	[ -s "$out/$fx.ir" ] || fail "no per-function Ir parsed from callgrind_annotate for $fx"

	say "$fx $n: untraced x$REPEAT, calltrace x$REPEAT"
	# Each traced run right after an untraced one, and main's ACC against that run: the
	# VM's speed drifts by tens of percent between blocks of runs a minute apart.
	ut=()
	maxd=(); accr=(); runsum=()
	for ((i = 0; i < REPEAT; i++)); do
		t0=$(date +%s%N); "${pin[@]}" "$out/$fx" "$n" >/dev/null 2>&1; t1=$(date +%s%N)
		ut+=($((t1 - t0)))
		"${pin[@]}" "$ct" --format json -o "$out/$fx.$i.json" "$out/$fx" "$n" >/dev/null 2>"$out/$fx.$i.err" ||
			fail "calltrace failed on $fx: $(cat "$out/$fx.$i.err")"
		json "$out/$fx.$i.json" >"$out/$fx.$i.tsv"
		# shares over calltrace's functions (suspend left out), Ir looked up by name
		awk -F'\t' -v ir="$out/$fx.ir" 'BEGIN { while ((getline l < ir) > 0) { split(l, a, "\t"); I[a[1]] = a[2] } }
			$1 != "suspend" { n++; nm[n] = $1; c[n] = $2; o[n] = $3; io[n] = I[$1] + 0; so += $3; si += io[n] }
			END { for (k = 1; k <= n; k++) {
				ps = 100 * o[k] / so; pi = 100 * io[k] / si; d = ps - pi
				printf "%s\t%d\t%.2f\t%.2f\t%+.2f\n", nm[k], c[k], ps, pi, d } }' \
			"$out/$fx.$i.tsv" | sort -t"$(printf '\t')" -k5,5g >"$out/$fx.$i.cmp"
		md=$(awk -F'\t' '{ d = $5 < 0 ? -$5 : $5; if (d > m) { m = d; f = $1 } } END { printf "%.2f %s", m, f }' "$out/$fx.$i.cmp")
		acc=$(awk -F'\t' '$1 == "main" { print $4 }' "$out/$fx.$i.tsv")
		r=$(awk -v a="$acc" -v u="${ut[$i]}" 'BEGIN { printf "%.3f", a / u }')
		maxd+=("${md%% *}"); accr+=("$r")
		runsum+=("| $((i + 1)) | ${md%% *} (${md#* }) | $(awk -v a="$acc" 'BEGIN { printf "%.1f", a / 1e6 }') | $r |")
	done
	untr=$(med "${ut[@]}")
	mmd=$(med "${maxd[@]}")
	macc=$(med "${accr[@]}")
	# the run whose largest deviation is the median one
	pick=0
	for ((i = 0; i < REPEAT; i++)); do [ "${maxd[$i]}" = "$mmd" ] && pick=$i && break; done

	nf=$(wc -l <"$out/$fx.$pick.cmp")
	calls=$(awk -F'\t' '{ s += $2 } END { print s }' "$out/$fx.$pick.cmp")
	echo "### $fx $n ($nf functions, $calls calls; untraced wall $(awk -v u="$untr" 'BEGIN { printf "%.1f", u / 1e6 }') ms, median of $REPEAT)"
	echo
	echo "| run | largest deviation, pp (function) | main ACC ms | main ACC / untraced wall (the run just before) |"
	echo "|---:|---|---:|---:|"
	printf '%s\n' "${runsum[@]}"
	echo
	if [ "$nf" -le 12 ]; then
		echo "Run $((pick + 1)), every function:"
	else
		echo "Run $((pick + 1)), the 10 largest deviations of $nf functions:"
	fi
	echo
	echo "| function | calls | share of OWN % | share of Ir % | difference pp |"
	echo "|---|---:|---:|---:|---:|"
	awk -F'\t' '{ d = $5 < 0 ? -$5 : $5; print d "\t" $0 }' "$out/$fx.$pick.cmp" | sort -g -r | head -10 |
		cut -f2- | awk -F'\t' '{ printf "| %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5 }'
	echo
	v1=$(awk -v m="$mmd" 'BEGIN { print (m <= 5) ? "PASS" : "FAIL" }')
	v2=$(awk -v r="$macc" 'BEGIN { d = r - 1; if (d < 0) d = -d; print (d <= 0.10) ? "PASS" : "FAIL" }')
	verdicts+=("- $v1 $fx: largest |OWN share - Ir share| = $mmd pp, median of $REPEAT runs (target <= 5)")
	verdicts+=("- $v2 $fx: main ACC / untraced wall = $macc, median of $REPEAT runs (target 0.90..1.10)")
done

echo "### Targets"
echo
printf '%s\n' "${verdicts[@]}"
