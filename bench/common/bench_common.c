/* See bench_common.h. */
#define _GNU_SOURCE
#include "bench_common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static const char *g_program = "bench";
static const char *g_client = "?";

void bench_set_identity(const char *program, const char *client)
{
    g_program = program;
    g_client = client;
}

const char *bench_client(void) { return g_client; }

void bench_options_init(bench_options *o)
{
    *o = (bench_options){
        .url = "nats://127.0.0.1:4222",
        .scenarios = strdup("pub,pubsub,req,jspub,jspub-sync,kv"),
        .sizes = strdup("16,1024"),
        .n = 1000000,
        .js_n = 200000,
        .k = 10000,
        .kv_k = 10000,
        .window = 4096,
        .warmup = 100,
        .idle_timeout = 5,
        .max_secs = 120,
    };
}

void bench_options_free(bench_options *o)
{
    free(o->scenarios);
    free(o->sizes);
    o->scenarios = NULL;
    o->sizes = NULL;
}

long bench_parse_long(const char *name, const char *value)
{
    char *end = NULL;
    long x = strtol(value, &end, 10);
    if (end == value || *end != 0 || x < 0) {
        fprintf(stderr, "%s: bad value for %s: %s\n", g_program, name, value);
        exit(2);
    }
    return x;
}

double bench_parse_double(const char *name, const char *value)
{
    char *end = NULL;
    double x = strtod(value, &end);
    if (end == value || *end != 0 || x <= 0) {
        fprintf(stderr, "%s: bad value for %s: %s\n", g_program, name, value);
        exit(2);
    }
    return x;
}

/* Sets a spec option; false if `name` is not one. */
static bool parse_spec_option(bench_options *o, const char *name, const char *v)
{
    if (!strcmp(name, "--url")) o->url = v;
    else if (!strcmp(name, "--scenarios")) { free(o->scenarios); o->scenarios = strdup(v); }
    else if (!strcmp(name, "--sizes")) { free(o->sizes); o->sizes = strdup(v); }
    else if (!strcmp(name, "--n")) o->n = bench_parse_long(name, v);
    else if (!strcmp(name, "--js-n")) o->js_n = bench_parse_long(name, v);
    else if (!strcmp(name, "--k")) o->k = bench_parse_long(name, v);
    else if (!strcmp(name, "--kv-k")) o->kv_k = bench_parse_long(name, v);
    else if (!strcmp(name, "--window")) o->window = bench_parse_long(name, v);
    else if (!strcmp(name, "--warmup")) o->warmup = bench_parse_long(name, v);
    else if (!strcmp(name, "--idle-timeout")) o->idle_timeout = bench_parse_double(name, v);
    else if (!strcmp(name, "--max-secs")) o->max_secs = bench_parse_double(name, v);
    else return false;
    return true;
}

int bench_parse_args(int argc, char **argv, bench_options *o, void (*usage)(FILE *f),
                     bool (*parse_extra)(const char *name, const char *value))
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = NULL;
        char namebuf[64];
        const char *eq = strchr(a, '=');
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        }
        if (strncmp(a, "--", 2) != 0) {
            fprintf(stderr, "%s: unexpected argument: %s\n", g_program, a);
            usage(stderr);
            return 2;
        }
        if (eq != NULL) { /* --name=value */
            size_t l = (size_t)(eq - a);
            if (l >= sizeof namebuf)
                l = sizeof namebuf - 1;
            memcpy(namebuf, a, l);
            namebuf[l] = 0;
            a = namebuf;
            v = eq + 1;
        } else {
            if (i + 1 >= argc) {
                fprintf(stderr, "%s: missing value for %s\n", g_program, a);
                return 2;
            }
            v = argv[++i];
        }
        if (!parse_spec_option(o, a, v) && !(parse_extra && parse_extra(a, v))) {
            fprintf(stderr, "%s: unknown option: %s\n", g_program, a);
            usage(stderr);
            return 2;
        }
    }
    return -1;
}

int bench_parse_sizes(const bench_options *o, long *sizes, int cap)
{
    int count = 0;
    char *tmp = strdup(o->sizes), *save = NULL;
    for (char *t = strtok_r(tmp, ",", &save); t && count < cap; t = strtok_r(NULL, ",", &save))
        sizes[count++] = bench_parse_long("--sizes", t);
    free(tmp);
    return count;
}

double bench_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double bench_cpu_ns(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return ((double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec) * 1e9 +
           ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) * 1e3;
}

double bench_cpu_per_msg(double c0, double c1, long count)
{
    return (c1 - c0) / (double)(count > 0 ? count : 1);
}

int64_t bench_idle_ms(const bench_options *o) { return (int64_t)(o->idle_timeout * 1000.0); }

char *bench_make_payload(long size)
{
    char *p = malloc((size_t)size + 1);
    if (p == NULL) {
        fprintf(stderr, "%s: out of memory\n", g_program);
        exit(1);
    }
    memset(p, 'x', (size_t)size);
    p[size] = 0;
    return p;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_percentile(const double *sorted, long cnt, double p)
{
    if (cnt <= 0)
        return 0;
    long idx = (long)ceil(p / 100.0 * (double)cnt) - 1;
    if (idx < 0)
        idx = 0;
    if (idx >= cnt)
        idx = cnt - 1;
    return sorted[idx];
}

bench_latency bench_latency_stats(double *us, long cnt)
{
    bench_latency r = {0, 0, 0};
    if (cnt <= 0)
        return r;
    double sum = 0;
    for (long i = 0; i < cnt; i++)
        sum += us[i];
    qsort(us, (size_t)cnt, sizeof(double), compare_doubles);
    r.mean = sum / (double)cnt;
    r.p50 = bench_percentile(us, cnt, 50);
    r.p99 = bench_percentile(us, cnt, 99);
    return r;
}

long bench_proc_status(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    size_t fl = strlen(field);
    long v = -1;
    if (f == NULL)
        return -1;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, field, fl) == 0 && line[fl] == ':') {
            v = strtol(line + fl + 1, NULL, 10);
            break;
        }
    }
    fclose(f);
    return v;
}

void bench_end_result_line(void)
{
    printf(" rss_peak_kb=%ld\n", bench_proc_status("VmHWM"));
    fflush(stdout);
}

void bench_emit_status(const char *scenario, long size, const char *status, const char *err)
{
    printf("scenario=%s client=%s size=%ld n=- status=%s%s%s\n", scenario, g_client, size, status,
           err ? " error=" : "", err ? err : "");
    fflush(stdout);
}

void bench_emit_failure(const char *scenario, long size, const char *status, const char *what,
                        const char *status_text, const char *last_error)
{
    char buf[512];
    bool has_last = last_error && *last_error;
    snprintf(buf, sizeof buf, "%s:%s%s%s", what, status_text, has_last ? ":" : "",
             has_last ? last_error : "");
    for (char *p = buf; *p; p++)
        if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
            *p = '_';
    printf("scenario=%s client=%s size=%ld n=- status=%s error=%s\n", scenario, g_client, size, status,
           buf);
    fflush(stdout);
}
