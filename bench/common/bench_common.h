/*
 * bench_common: the parts of the benchmark spec (shared/bench-spec.md) that
 * do not depend on the client under test, shared by the C harnesses
 * (bench/natsio/natsio_bench.c over libnatsio, bench/peers/natsc/natsc_bench.c
 * over nats.c) so that both parse the same CLI, time with the same clock and
 * compute and print statistics the same way.
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* The spec's options, with its defaults (bench_options_init). */
typedef struct {
    const char *url;
    char *scenarios; /* comma-separated, malloc'd */
    char *sizes;     /* comma-separated, malloc'd */
    long n;
    long js_n;
    long k;
    long kv_k;
    long window;
    long warmup;
    double idle_timeout;
    double max_secs;
} bench_options;

/* Names every output line and error message uses: `program` prefixes error
 * messages ("natsio_bench: ..."), `client` is the client= field. Call first. */
void bench_set_identity(const char *program, const char *client);
const char *bench_client(void);

void bench_options_init(bench_options *o);
void bench_options_free(bench_options *o);

/* Parses argv into `o`. Options the spec does not define go to
 * `parse_extra` (may be NULL), which returns false for a name it does not
 * know and may exit(2) on a bad value. Returns -1 to go on running, or the
 * exit status for main (0 after --help, 2 on a usage error). */
int bench_parse_args(int argc, char **argv, bench_options *o, void (*usage)(FILE *f),
                     bool (*parse_extra)(const char *name, const char *value));

/* A non-negative integer / a positive number, or exit(2) naming the option. */
long bench_parse_long(const char *name, const char *value);
double bench_parse_double(const char *name, const char *value);

/* The sizes of o->sizes in order (at most `cap`); returns how many. */
int bench_parse_sizes(const bench_options *o, long *sizes, int cap);

/* Monotonic clock in seconds. */
double bench_now_s(void);
/* User+sys CPU time of the whole process (every thread, the client
 * library's included) in nanoseconds, from getrusage(RUSAGE_SELF).
 * cpu_ns_per_msg = the difference over exactly the timed region (read where
 * the clock starts and where it stops) divided by the messages or operations
 * the line reports (bench_cpu_per_msg; a count of 0 divides by 1). */
double bench_cpu_ns(void);
double bench_cpu_per_msg(double c0, double c1, long count);
/* The idle timeout in milliseconds. */
int64_t bench_idle_ms(const bench_options *o);

/* `size` bytes of 'x' followed by a NUL; exits on out of memory. */
char *bench_make_payload(long size);

/* Mean and nearest-rank percentiles of latencies (microseconds). */
typedef struct {
    double mean, p50, p99;
} bench_latency;

/* Sorts `us` in place. All zero when cnt <= 0. */
bench_latency bench_latency_stats(double *us, long cnt);
/* Nearest rank of an ascending array: sorted[ceil(p/100*cnt)-1]. */
double bench_percentile(const double *sorted, long cnt, double p);

/* A numeric field of /proc/self/status ("Threads"; "VmHWM", "VmRSS" in
 * kB), or -1. */
long bench_proc_status(const char *field);
/* Ends a result line: appends " rss_peak_kb=N" (VmHWM, the process's peak
 * resident set so far: run.sh runs one process per scenario and size, so it
 * is that run's peak) and a newline, and flushes stdout. */
void bench_end_result_line(void);

/* "scenario=S client=C size=N n=- status=STATUS[ error=ERR]" */
void bench_emit_status(const char *scenario, long size, const char *status, const char *err);
/* As bench_emit_status with error=WHAT:STATUS_TEXT[:LAST_ERROR], blanks
 * replaced by '_' so the line stays key=value space separated. */
void bench_emit_failure(const char *scenario, long size, const char *status, const char *what,
                        const char *status_text, const char *last_error);

#endif /* BENCH_COMMON_H */
