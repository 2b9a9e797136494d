#!/bin/sh
# bench/run.sh - the tracing-core benchmark (not a test). Builds the call-heavy
# workload and the ptrace floor, then prints: traced calls, stops per traced call,
# microseconds per traced call, and the ratio to twice the one-stop floor measured in
# the same run (same CPU placement), plus the ratio to `ltrace -c -x leaf` when ltrace
# is installed.
#
# Usage: bench/run.sh [BUILD_DIR] [CALLS]   (defaults: build, 200000)
# CPU placement: calltrace pins itself and a single-threaded program to the CPU it
# starts on (see docs/design.md); the floor is measured with both on one CPU
# (taskset -c 0) and unpinned with calltrace also started under taskset -c 0, so
# the two sides are placed the same way.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
build=${1:-$top/build}
calls=${2:-200000}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

ct=$build/src/calltrace
[ -x "$ct" ] || { echo "bench: $ct not built; run cmake --build $build first" >&2; exit 1; }
floor_src=$top/../shared/tools/ptrace-floor.c
[ -f "$floor_src" ] || { echo "bench: $floor_src missing" >&2; exit 1; }

cc -O2 -fno-inline -o "$out/callheavy" "$here/callheavy.c"
cc -O2 -o "$out/floor" "$floor_src"

now() { date +%s.%N; }
elapsed() { echo "$2 - $1" | bc -l; }

# 1. The floor: stop + PTRACE_CONT round trip, tracer and tracee on one CPU.
floor_ns=$(taskset -c 0 "$out/floor" 100000 2>&1 | awk '/stop\+CONT only/ { print $(NF-1); exit }')

# 2. Untraced run.
t0=$(now); "$out/callheavy" "$calls" >/dev/null; t1=$(now)
untraced=$(elapsed "$t0" "$t1")

# 3. calltrace, full mode, started on CPU 0 like the floor.
t0=$(now)
stats=$(taskset -c 0 "$ct" --stats -o /dev/null "$out/callheavy" "$calls" 2>&1 >/dev/null | grep 'stops per call')
t1=$(now)
traced=$(elapsed "$t0" "$t1")
ncalls=$(echo "$stats" | awk '{ print $2 }')
stops=$(echo "$stats" | awk '{ for (i = 1; i <= NF; i++) if ($i == "stops,") print $(i-1) }')

# 4. calltrace unpinned start (it still pins itself and the program to one CPU).
t0=$(now); "$ct" -o /dev/null "$out/callheavy" "$calls" >/dev/null 2>&1; t1=$(now)
traced_free=$(elapsed "$t0" "$t1")
t0=$(now); "$ct" --no-pin -o /dev/null "$out/callheavy" "$calls" >/dev/null 2>&1; t1=$(now)
traced_nopin=$(elapsed "$t0" "$t1")

us_call=$(echo "($traced - $untraced) * 1000000 / $ncalls" | bc -l)
printf '| measure | value |\n|---|---|\n'
printf '| traced calls | %s |\n' "$ncalls"
printf '| ptrace stops per traced call | %.3f |\n' "$(echo "$stops / $ncalls" | bc -l)"
printf '| ptrace floor, one stop (same CPU) | %.2f us |\n' "$(echo "$floor_ns / 1000" | bc -l)"
printf '| calltrace, us per traced call (taskset -c 0) | %.2f us |\n' "$us_call"
printf '| ratio to the 2-stop floor | %.3f |\n' "$(echo "$us_call * 1000 / (2 * $floor_ns)" | bc -l)"
printf '| calltrace, us per call, started unpinned | %.2f us |\n' \
	"$(echo "($traced_free - $untraced) * 1000000 / $ncalls" | bc -l)"
printf '| calltrace --no-pin, us per call | %.2f us |\n' \
	"$(echo "($traced_nopin - $untraced) * 1000000 / $ncalls" | bc -l)"

if command -v ltrace >/dev/null 2>&1; then
	lcalls=$((calls / 20))
	t0=$(now); ltrace -c -x leaf -o /dev/null "$out/callheavy" "$lcalls" >/dev/null 2>&1; t1=$(now)
	lt=$(echo "($(elapsed "$t0" "$t1")) * 1000000 / $lcalls" | bc -l)
	t0=$(now); taskset -c 0 ltrace -c -x leaf -o /dev/null "$out/callheavy" "$lcalls" >/dev/null 2>&1; t1=$(now)
	ltp=$(echo "($(elapsed "$t0" "$t1")) * 1000000 / $lcalls" | bc -l)
	printf '| ltrace -c -x leaf, us per call (%s calls, unpinned) | %.2f us |\n' "$lcalls" "$lt"
	printf '| ltrace, us per call (taskset -c 0) | %.2f us |\n' "$ltp"
	printf '| calltrace speed-up over ltrace (as users run both) | %.1fx |\n' \
		"$(echo "$lt / (($traced_free - $untraced) * 1000000 / $ncalls)" | bc -l)"
	printf '| calltrace speed-up over ltrace (both pinned) | %.1fx |\n' "$(echo "$ltp / $us_call" | bc -l)"
else
	echo "(ltrace not installed: no comparison; apt-get install ltrace)"
fi
