/* SPDX-License-Identifier: MIT */
/* main.c - calltrace: parse options, check the inputs, trace, report. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calltrace/engine.h"
#include "calltrace/opts.h"
#include "calltrace/profile.h"
#include "calltrace/report.h"
#include "calltrace/sym.h"
#include "calltrace/target.h"
#include "calltrace/util.h"

struct output {
	const struct report_ops *ops;
	char *path;             /* NULL: stderr */
	FILE *f;
};

static void on_signal(int sig)
{
	engine_request_stop(sig);
}

static void install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;    /* no SA_RESTART: waitpid returns EINTR */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* Open every report destination before the program runs: a bad -o is bad input. */
static int open_outputs(const struct opts *o, struct output *out)
{
	for (size_t i = 0; i < o->nr_formats; i++) {
		out[i].ops = report_find(o->formats[i]);
		if (!o->output) {
			out[i].f = stderr;
			continue;
		}
		out[i].path = o->nr_formats > 1 ? xasprintf("%s.%s", o->output, o->formats[i])
						: xstrdup(o->output);
		out[i].f = fopen(out[i].path, "w");
		if (!out[i].f) {
			msg_error("%s: cannot open for writing: %s; choose a writable path for -o",
				  out[i].path, strerror(errno));
			return EXIT_TRACER;
		}
	}
	return 0;
}

static int write_outputs_now(const struct opts *o, struct output *out, const struct profile *p)
{
	int rc = 0;

	for (size_t i = 0; i < o->nr_formats; i++) {
		struct report_opts ro = o->report;
		int r;

		if (!o->sort_given)
			ro.sort = out[i].ops->default_sort;
		ro.output = out[i].path;
		r = out[i].ops->emit(p, &ro, out[i].f);

		if (out[i].f == stderr) {
			if (fflush(stderr) != 0)
				r = -errno;
		} else if (fclose(out[i].f) != 0 && !r) {
			r = -errno;
		}
		if (r < 0) {
			msg_error("%s: cannot write the report: %s",
				  out[i].path ? out[i].path : "stderr", strerror(-r));
			rc = EXIT_TRACER;
		}
		free(out[i].path);
	}
	return rc;
}

/* Run @fn(@arg) on a thread with a 1 GiB stack (its pages are touched only as needed).
 * Writers walk call trees, some recursively, and json-c builds, prints and frees
 * nested objects recursively: a program that recursed a million deep gives a tree a
 * million deep. */
static void run_big_stack(void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	pthread_t th;

	if (pthread_attr_init(&attr) == 0 &&
	    pthread_attr_setstacksize(&attr, (size_t)1 << 30) == 0 &&
	    pthread_create(&th, &attr, fn, arg) == 0) {
		pthread_join(th, NULL);
		pthread_attr_destroy(&attr);
		return;
	}
	fn(arg);
}

struct write_job {
	const struct opts *o;
	struct output *out;
	const struct profile *p;
	int rc;
};

static void *write_job_run(void *arg)
{
	struct write_job *j = arg;

	j->rc = write_outputs_now(j->o, j->out, j->p);
	return NULL;
}

static int write_outputs(const struct opts *o, struct output *out, const struct profile *p)
{
	struct write_job j = { o, out, p, 0 };

	run_big_stack(write_job_run, &j);
	return j.rc;
}

struct load_job {
	const char *path;
	struct profile *p;
	char err[512];
	int rc;
};

static void *load_job_run(void *arg)
{
	struct load_job *j = arg;

	j->rc = report_load_json(j->path, &j->p, j->err, sizeof(j->err));
	return NULL;
}

int main(int argc, char **argv)
{
	struct engine_opts eo = { 0 };
	struct engine_stats stats;
	struct output *out = NULL;
	struct sym_module *image = NULL;
	struct profile *p = NULL;
	char *path = NULL;
	char err[512];
	struct opts o;
	int status = EXIT_TRACER, rc;

	switch (opts_parse(&o, argc, argv, err, sizeof(err))) {
	case OPTS_EXIT_OK:
		return 0;
	case OPTS_ERROR:
		msg_error("%s", err);
		return EXIT_TRACER;
	case OPTS_RUN:
		break;
	}
	if (o.report_file) {
		out = xcalloc(o.nr_formats, sizeof(*out));
		struct load_job lj = { .path = o.report_file };

		run_big_stack(load_job_run, &lj);
		p = lj.p;
		if (lj.rc < 0) {
			msg_error("%s", lj.err);
			status = EXIT_TRACER;
			goto out;
		}
		if ((rc = open_outputs(&o, out)) != 0) {
			status = rc;
			goto out;
		}
		status = write_outputs(&o, out, p);
		free(out);
		out = NULL;
		goto out;
	}
	if (o.pid) {
		char exe[64];
		char buf[4096];
		ssize_t n;

		snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)o.pid);
		n = readlink(exe, buf, sizeof(buf) - 1);
		if (n <= 0) {
			if (errno == ENOENT)
				msg_error("pid %d: no such process; check the pid with ps", (int)o.pid);
			else if (errno == EACCES || errno == EPERM)
				msg_error("pid %d: permission denied: another user's process; run "
					  "calltrace as its user or as root", (int)o.pid);
			else
				msg_error("pid %d: cannot read its executable: %s; run as its user or root",
					  (int)o.pid, strerror(errno));
			goto out;
		}
		buf[n] = 0;
		path = xstrdup(buf);
		if ((rc = target_load(path, &image)) != 0 ||
		    (o.patterns_given && !o.nr_libs &&
		     (rc = target_check_patterns(image, o.patterns, o.nr_patterns)) != 0)) {
			status = rc == EXIT_NOEXEC || rc == EXIT_NOTFOUND ? EXIT_TRACER : rc;
			goto out;
		}
	} else if ((rc = target_resolve(o.argv[0], &path)) != 0 ||
	    (rc = target_load(path, &image)) != 0 ||
	    /* with --lib, a root may be a library's function: known only when it loads */
	    (!o.nr_libs && (rc = target_check_patterns(image, o.patterns, o.nr_patterns)) != 0)) {
		status = rc;
		goto out;
	}
	out = xcalloc(o.nr_formats, sizeof(*out));
	if ((rc = open_outputs(&o, out)) != 0) {
		status = rc;
		goto out;
	}

	p = profile_new();
	p->mode = o.count ? CT_MODE_COUNT : CT_MODE_FULL;
	{
		size_t len = 0;

		if (o.pid)
			p->command = xasprintf("-p %d (%s)", (int)o.pid, path);
		for (int i = 0; i < o.argc && !o.pid; i++)
			len += strlen(o.argv[i]) + 1;
		if (!o.pid)
			p->command = xcalloc(1, len + 1);
		for (int i = 0; i < o.argc && !o.pid; i++) {
			if (i)
				strcat(p->command, " ");
			strcat(p->command, o.argv[i]);
		}
	}
	eo.path = path;
	eo.argv = o.argv;
	eo.patterns = o.patterns;
	eo.nr_patterns = o.nr_patterns;
	eo.pin = !o.no_pin;
	eo.no_detours = o.no_detours;
	eo.count = o.count;
	for (size_t i = 0; i < o.nr_formats; i++)
		eo.count_callers |= report_find(o.formats[i])->shows_callers;
	eo.pid = o.pid;
	eo.clock_cpu = o.clock_cpu;
	eo.status_line = !o.quiet && isatty(STDERR_FILENO);
	eo.no_suspend = o.no_suspend;
	eo.no_compensate = o.raw_times;
	eo.duration = o.duration;
	eo.follow_forks = o.follow_forks;
	eo.libs = o.libs;
	eo.nr_libs = o.nr_libs;
	/* attached to a running program, main has long been entered: record everything
	 * from now on unless roots were named */
	eo.record_all = o.pid && !o.patterns_given;
	eo.image = image;
	image = NULL;                     /* the engine owns it now */
	install_signals();
	if (engine_run(&eo, p, &status, &stats) < 0) {
		status = EXIT_TRACER;
		goto out;
	}
	if (o.stats)
		fprintf(stderr, "calltrace: %llu calls (%llu recorded), %llu stops, %.3f stops per "
			"call, %llu breakpoints (%llu in detours), %llu rip writes, %llu "
			"functions not traced; one stop costs "
			"%llu ns wall (%llu ns of it calltrace's handling), %llu ns cpu; "
			"kernel part used %llu ns (%s%llu round trips that ran next to nothing)\n",
			(unsigned long long)stats.calls, (unsigned long long)stats.recorded,
			(unsigned long long)stats.stops,
			stats.calls ? (double)stats.stops / (double)stats.calls : 0.0,
			(unsigned long long)stats.nr_bps, (unsigned long long)stats.nr_detoured,
			(unsigned long long)stats.rip_writes, (unsigned long long)stats.nr_refused,
			(unsigned long long)stats.stop_wall_ns, (unsigned long long)stats.handler_ns,
			(unsigned long long)stats.stop_cpu_ns,
			(unsigned long long)stats.stop_kernel_used_ns,
			stats.stop_cost_trips ? "the mean of " : "calibrated: fewer than ",
			(unsigned long long)(stats.stop_cost_trips ? stats.stop_cost_trips : 1000));
	rc = write_outputs(&o, out, p);
	free(out);
	out = NULL;
	if (rc && status == 0)
		status = rc;
out:
	if (out) {
		for (size_t i = 0; i < o.nr_formats; i++) {
			if (out[i].f && out[i].f != stderr)
				fclose(out[i].f);
			free(out[i].path);
		}
		free(out);
	}
	profile_free(p);
	sym_module_free(image);
	free(path);
	opts_fini(&o);
	return status;
}
