/* SPDX-License-Identifier: MIT */
/* bench/callheavy.c - the call-heavy workload: main calls leaf() N times (argv[1],
 * default 100000). leaf is a few instructions, so the run time of a traced run is the
 * tracer's cost per call. Built -O2 -fno-inline so leaf stays a real call. */
#include <stdio.h>
#include <stdlib.h>

volatile long bench_sink;

__attribute__((noinline)) void leaf(long i)
{
	bench_sink += i;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;

	for (long i = 0; i < n; i++)
		leaf(i);
	printf("%ld\n", (long)bench_sink);
	return 0;
}
