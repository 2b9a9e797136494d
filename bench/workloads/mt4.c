/* SPDX-License-Identifier: MIT */
/* bench/workloads/mt4.c - the multi-threaded call-heavy workload: 4 threads, each
 * calls leaf() N times (argv[1], default 25000 per thread), started together on a
 * barrier. leaf is a few instructions, so a traced run's time is the tracer's cost per
 * call. Build: cc -O2 -fno-inline -pthread mt4.c */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 4

static long per_thread;
static pthread_barrier_t start;
static volatile long sink[THREADS * 8];	/* one cache line per thread */

__attribute__((noinline)) void leaf(long t, long i)
{
	sink[t * 8] += i;
}

__attribute__((noinline)) static void *worker(void *arg)
{
	long t = (long)arg;

	pthread_barrier_wait(&start);
	for (long i = 0; i < per_thread; i++)
		leaf(t, i);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[THREADS];
	long sum = 0;

	per_thread = argc > 1 ? atol(argv[1]) : 25000;
	pthread_barrier_init(&start, NULL, THREADS);
	for (long t = 0; t < THREADS; t++)
		if (pthread_create(&th[t], NULL, worker, (void *)t) != 0)
			return 1;
	for (long t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	for (long t = 0; t < THREADS; t++)
		sum += sink[t * 8];
	printf("%ld\n", sum);
	return 0;
}
