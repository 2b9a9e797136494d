#!/bin/sh
# demo.sh - install the dependencies, build calltrace, and trace the bundled demo
# program, printing its fprof-style report.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/setup.sh"
cmake -S "$top" -B "$top/build" >/dev/null
cmake --build "$top/build" -j"$(nproc)" >/dev/null
exec "$top/build/src/calltrace" "$top/build/fixtures/demo"
