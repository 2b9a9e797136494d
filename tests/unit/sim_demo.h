/* SPDX-License-Identifier: MIT */
/* sim_demo.h - the demo profile shared by check_report.c and check_writers.c: the
 * event stream of ../shared/docs/format-samples/tools/gen_native_samples.py replayed
 * with ctree_enter()/ctree_leave() and injected times. */
#ifndef CT_SIM_DEMO_H
#define CT_SIM_DEMO_H

struct profile;

/* The functions of gen_native_samples.py, in profile id order. */
enum {
	F_MAIN, F_FIB, F_CHEAP, F_COSTLY, F_SHARED, F_CALLER_A, F_CALLER_B, F_WORKER,
	F_PTHREAD_CREATE, F_PTHREAD_JOIN, F_PRINTF, F_START_THREAD, F_SUSPEND, NR_DEMO_FUNCS
};

/* Timestamps are offset so that no event is at 0 (0 means "no event" in ct_thread). */
#define TS_BASE 1000000000ull
#define UNIT_NS 1000ull
#define JITTER_NS 37ull

struct profile *demo_profile(void);

#endif /* CT_SIM_DEMO_H */
