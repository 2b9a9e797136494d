/* SPDX-License-Identifier: MIT */
/* bench/workloads/ladder.c - accuracy fixture: four CPU-bound functions whose calls take
 * about 1 us, 10 us, 100 us and 1 ms, called 1000, 100, 10 and 1 times per round, so
 * each has about a quarter of the run time (the short ones are where subtracting the
 * cost of the ptrace stops matters most). Own work is the same inlined
 * multiply/xorshift loop as mixed.c (about 2.2 ns per iteration on the benchmark VM
 * when the other vCPU is idle, up to 4.5 ns when it is busy), so a function's share of
 * time tracks its share of instructions.
 * Usage: ladder [ROUNDS] (default 25, about 0.1 s). Build with -O2 -fno-inline. */
#include <stdio.h>
#include <stdlib.h>

volatile unsigned long ladder_sink;

#define WORK(n) do {							\
	unsigned long x_ = ladder_sink | 1;				\
	for (unsigned long i_ = 0; i_ < (n); i_++) {			\
		x_ = x_ * 6364136223846793005UL + 1442695040888963407UL; \
		x_ ^= x_ >> 29;					\
	}							\
	ladder_sink = x_;					\
} while (0)

__attribute__((noinline)) void rung_1us(void) { WORK(450); }
__attribute__((noinline)) void rung_10us(void) { WORK(4500); }
__attribute__((noinline)) void rung_100us(void) { WORK(45000); }
__attribute__((noinline)) void rung_1ms(void) { WORK(450000); }

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 25;

	for (long r = 0; r < rounds; r++) {
		for (int i = 0; i < 1000; i++)
			rung_1us();
		for (int i = 0; i < 100; i++)
			rung_10us();
		for (int i = 0; i < 10; i++)
			rung_100us();
		rung_1ms();
	}
	printf("%lu\n", ladder_sink);
	return 0;
}
