#!/bin/sh
# test.sh - install the dependencies, build with warnings as errors, run every test
# (Check unit tests, Erlang consult checks, end-to-end tests on the fixtures).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/setup.sh"
cmake -S "$top" -B "$top/build" -DCALLTRACE_WERROR=ON
cmake --build "$top/build" -j"$(nproc)"
ctest --test-dir "$top/build" --output-on-failure -j"$(nproc)"
