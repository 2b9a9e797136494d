#!/bin/bash
# bench/ab.sh - interleaved A/B of calltrace option sets on the call-heavy workload (a
# benchmark, not a test). Each round runs the same-CPU ptrace floor once, then every
# option set at N calls and at 1 call, all under taskset -c 0; an option set's cost per
# call is its marginal cost (T(N) - T(1)) / (N - 1). Prints one line per round, then
# per option set the median cost and its ratio to the floor (2 stops per call in full
# mode, 1 with -c), and the paired median ratio of each set to the first.
#
# Usage: bench/ab.sh [BUILD_DIR] -- 'OPTS A' 'OPTS B' ...
#   e.g. bench/ab.sh build -- '' '--no-detours' '-c' '-c --no-detours'
# An option set that starts with @DIR runs the calltrace built in DIR instead, so two
# builds can be compared: bench/ab.sh build -- '' '@/tmp/old' '-c' '@/tmp/old -c'
# Environment: ROUNDS (default 9), N (default 100000).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
build=$top/build
if [ $# -gt 0 ] && [ "$1" != "--" ]; then build=$1; shift; fi
[ "${1:-}" = "--" ] && shift
[ $# -gt 0 ] || set -- '' '--no-detours'
ROUNDS=${ROUNDS:-9}
N=${N:-100000}
ct=$build/src/calltrace
[ -x "$ct" ] || { echo "ab: $ct not built" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cc -O2 -fno-inline -o "$out/callheavy" "$here/callheavy.c"
cc -O2 -o "$out/floor" "$top/../shared/tools/ptrace-floor.c"

wall() {	# N OPTS -> ns
	local n=$1 t0 t1 bin=$ct opts=$2
	if [ "${opts#@}" != "$opts" ]; then
		bin=${opts%% *}
		opts=${opts#"$bin"}
		opts=${opts# }
		bin=${bin#@}/src/calltrace
	fi
	t0=$(date +%s%N)
	# shellcheck disable=SC2086
	taskset -c 0 "$bin" -q $opts -o /dev/null "$out/callheavy" "$n" >/dev/null 2>&1
	t1=$(date +%s%N)
	echo $((t1 - t0))
}

for ((r = 0; r < ROUNDS; r++)); do
	f=$(taskset -c 0 "$out/floor" 40000 1000 2>&1 | awk '/stop\+CONT only/ { print $(NF - 1); exit }')
	line="floor $f"
	for ((i = 1; i <= $#; i++)); do
		o=${!i}
		t1=$(wall 1 "$o")
		tn=$(wall "$N" "$o")
		line="$line|$(( (tn - t1) / (N - 1) ))"
	done
	echo "$line"
done | tee "$out/rounds"

echo
awk -F'|' -v names="$(printf '%s|' "$@")" '
function median(a, n,   i, j, t) {
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{
	split($1, fl, " "); floor[NR] = fl[2]
	for (i = 2; i <= NF; i++) v[i - 1, NR] = $i
	k = NF - 1
}
END {
	split(names, nm, "|")
	for (i = 1; i <= k; i++) {
		stops = (nm[i] ~ /(^| )-c( |$)|--count/) ? 1 : 2
		for (r = 1; r <= NR; r++) { c[r] = v[i, r]; q[r] = v[i, r] / (stops * floor[r]); p[r] = v[i, r] / v[1, r] }
		printf "[%s] median %.0f ns/call, %.2fx the %d-stop floor (median of rounds), %.3f x [%s] (paired median)\n",
			nm[i], median(c, NR), median(q, NR), stops, median(p, NR), nm[1]
	}
}' "$out/rounds"
