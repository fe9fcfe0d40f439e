/*
 * natsio_bench: benchmark harness of libnatsio, driven only through the
 * public C ABI (include/natsio.h).
 *
 * Implements the CLI, scenarios, clock boundaries and output lines of the
 * project's benchmark spec (shared/bench-spec.md) with client=libnatsio,
 * plus libnatsio-only measurements:
 *   - scenario pub4: the pub scenario with --threads T publisher threads
 *     sharing one client (N messages in total, N/T per thread);
 *   - extra fields on pub/pubsub/req lines: cpu_ns_per_msg (user+sys of the
 *     whole process over the timed region, divided by the messages) and, on
 *     pubsub, rss_kb (peak RSS, getrusage ru_maxrss) with rss_start_kb and
 *     rss_end_kb (current RSS sampled before and after the run) to show
 *     that memory stays bounded.
 * jspub keeps a ring of --window publish tokens (the library's own
 * publish_async_max_pending is set to the same value) and waits on the
 * oldest when the ring is full.
 *
 * Build: bench/natsio/build.sh (or through bench/run.sh).
 */
#define _GNU_SOURCE
#include <stdint.h>

#include "natsio.h"

#include "../common/bench_common.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define CLIENT "libnatsio"

/* ------------------------------------------------------------------------ */
/* options                                                                  */

typedef enum { PUBSUB_CALLBACK, PUBSUB_ITERATOR } pubsub_mode_t;

static bench_options O;
/* libnatsio-only options */
static long g_threads = 4;
static pubsub_mode_t g_pubsub_mode = PUBSUB_CALLBACK;

/* ------------------------------------------------------------------------ */
/* helpers                                                                  */

/* user+sys CPU of the whole process (library threads included), in ns */
static double cpu_ns(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ((double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec) * 1e9 +
           ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) * 1e3;
}

static long peak_rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* current resident set size, from /proc/self/statm */
static long current_rss_kb(void)
{
    long pages_total = 0, pages_resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f == NULL)
        return -1;
    if (fscanf(f, "%ld %ld", &pages_total, &pages_resident) != 2)
        pages_resident = -1;
    fclose(f);
    return pages_resident < 0 ? -1 : pages_resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static void emit_failure(const char *scen, long size, const char *status,
                         const char *what, natsio_status s)
{
    bench_emit_failure(scen, size, status, what, natsio_status_str(s),
                       natsio_last_error());
}

/* ------------------------------------------------------------------------ */
/* asynchronous error accounting                                            */

/*
 * One context per scenario run, registered as the error callback's user
 * data of that run's connections; the library calls the release function
 * once no client uses it any more, so a late report of an earlier run can
 * never be counted in the next one and the context is freed safely.
 */
typedef struct {
    atomic_long errors;  /* slow consumer, server -ERR, lost connection */
    atomic_int closing;  /* set while we close connections ourselves */
    atomic_int users;    /* connections (plus the run itself) holding it */
} err_ctx_t;

static err_ctx_t *err_ctx_new(void)
{
    err_ctx_t *c = calloc(1, sizeof *c);
    if (c == NULL) {
        fprintf(stderr, "natsio_bench: out of memory\n");
        exit(1);
    }
    atomic_store(&c->users, 1);
    return c;
}

static void err_ctx_release(void *user_data)
{
    err_ctx_t *c = user_data;
    if (atomic_fetch_sub(&c->users, 1) == 1)
        free(c);
}

static void on_async_error(void *user_data, natsio_status status,
                           const char *text, uint64_t sid, const char *subject)
{
    (void)status; (void)text; (void)sid; (void)subject;
    err_ctx_t *c = user_data;
    if (!atomic_load(&c->closing))
        atomic_fetch_add(&c->errors, 1);
}

static natsio_status connect_client(err_ctx_t *ctx, const char *name,
                                    natsio_client **out)
{
    natsio_options *opts = NULL;
    natsio_status s = natsio_options_new(&opts);
    if (s == NATSIO_OK)
        s = natsio_options_set_url(opts, O.url);
    if (s == NATSIO_OK)
        s = natsio_options_set_name(opts, name);
    if (s == NATSIO_OK) {
        atomic_fetch_add(&ctx->users, 1);
        s = natsio_options_set_error_callback(opts, on_async_error, ctx,
                                              err_ctx_release);
        if (s != NATSIO_OK)
            atomic_fetch_sub(&ctx->users, 1);
    }
    if (s == NATSIO_OK)
        s = natsio_client_connect(opts, out);
    natsio_options_free(opts);
    return s;
}

static void close_client(err_ctx_t *ctx, natsio_client *c)
{
    if (c == NULL)
        return;
    atomic_store(&ctx->closing, 1);
    natsio_client_close(c);
    natsio_client_free(c);
}

/* ------------------------------------------------------------------------ */
/* pub and pub4                                                             */

typedef struct {
    natsio_client *client;
    const char *data;
    long size;
    long count;
    double t0;
    long errors;
    bool deadline_hit;
    pthread_barrier_t *start;
} publisher_t;

static void publish_loop(publisher_t *p)
{
    for (long i = 0; i < p->count; i++) {
        if (natsio_client_publish(p->client, "bench.pub", p->data,
                                  (size_t)p->size) != NATSIO_OK)
            p->errors++;
        if ((i & 4095) == 4095 && bench_now_s() - p->t0 > O.max_secs) {
            p->deadline_hit = true;
            break;
        }
    }
}

static void *publisher_thread(void *arg)
{
    publisher_t *p = arg;
    pthread_barrier_wait(p->start);
    publish_loop(p);
    return NULL;
}

/* threads == 0: the plain pub scenario on the main thread */
static void run_pub(long size, long threads)
{
    const char *scen = threads > 0 ? "pub4" : "pub";
    natsio_client *nc = NULL;
    char *data = bench_make_payload(size);
    err_ctx_t *ctx = err_ctx_new();
    long nthreads = threads > 0 ? threads : 1;
    publisher_t pubs[64];
    pthread_t tids[64];
    pthread_barrier_t start;
    natsio_status s;

    if (nthreads > 64)
        nthreads = 64;
    s = connect_client(ctx, "natsio-bench-pub", &nc);
    if (s != NATSIO_OK) {
        emit_failure(scen, size, "failed", "connect", s);
        goto out;
    }
    for (long t = 0; t < nthreads; t++) {
        pubs[t] = (publisher_t){.client = nc, .data = data, .size = size,
                                .count = O.n / nthreads +
                                         (t < O.n % nthreads ? 1 : 0)};
    }

    double c0 = cpu_ns();
    double t0;
    if (threads > 0) {
        /* every thread is created and parked before the clock starts */
        pthread_barrier_init(&start, NULL, (unsigned)nthreads + 1);
        for (long t = 0; t < nthreads; t++) {
            pubs[t].start = &start;
            pthread_create(&tids[t], NULL, publisher_thread, &pubs[t]);
        }
        t0 = bench_now_s();
        for (long t = 0; t < nthreads; t++)
            pubs[t].t0 = t0;
        c0 = cpu_ns();
        pthread_barrier_wait(&start);
        for (long t = 0; t < nthreads; t++)
            pthread_join(tids[t], NULL);
        pthread_barrier_destroy(&start);
    } else {
        t0 = bench_now_s();
        pubs[0].t0 = t0;
        publish_loop(&pubs[0]);
    }
    long errors = 0;
    bool deadline_hit = false;
    for (long t = 0; t < nthreads; t++) {
        errors += pubs[t].errors;
        deadline_hit = deadline_hit || pubs[t].deadline_hit;
    }
    if (deadline_hit) {
        bench_emit_status(scen, size, "timeout", "max-secs");
        goto out;
    }
    s = natsio_client_flush(nc, bench_idle_ms(&O));
    double t1 = bench_now_s();
    double c1 = cpu_ns();
    if (s != NATSIO_OK) {
        emit_failure(scen, size, s == NATSIO_ERR_TIMEOUT ? "timeout" : "failed",
                     "flush", s);
        goto out;
    }
    errors += atomic_load(&ctx->errors);
    double secs = t1 - t0;
    printf("scenario=%s client=%s size=%ld n=%ld secs=%.6f msgs_per_s=%.1f "
           "mb_per_s=%.3f errors=%ld flush=pingpong cpu_ns_per_msg=%.1f",
           scen, CLIENT, size, O.n, secs, (double)O.n / secs,
           (double)O.n * (double)size / 1e6 / secs, errors,
           (c1 - c0) / (double)O.n);
    if (threads > 0)
        printf(" threads=%ld", nthreads);
    printf("\n");
    fflush(stdout);
out:
    close_client(ctx, nc);
    err_ctx_release(ctx);
    free(data);
}

/* ------------------------------------------------------------------------ */
/* pubsub                                                                   */

typedef struct {
    atomic_long received;
    atomic_long badsize;
    long target;
    long size;
    double t_done;
    bool done;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    natsio_sub *sub;      /* iterator mode: read by the reader thread */
    atomic_int stop;      /* iterator mode: asks the reader to return */
} ps_state_t;

/* Counts one delivered message; the last one stops the clock. */
static void ps_count(ps_state_t *st, size_t len)
{
    if ((long)len != st->size)
        atomic_fetch_add(&st->badsize, 1);
    long r = atomic_fetch_add(&st->received, 1) + 1;
    if (r == st->target) {
        double t = bench_now_s();
        pthread_mutex_lock(&st->mu);
        st->t_done = t;
        st->done = true;
        pthread_cond_signal(&st->cv);
        pthread_mutex_unlock(&st->mu);
    }
}

static void ps_on_msg(void *user_data, natsio_sub *sub, const natsio_msg *msg)
{
    (void)sub;
    ps_count(user_data, natsio_msg_data_len(msg));
}

static void *ps_reader(void *arg)
{
    ps_state_t *st = arg;
    while (!atomic_load(&st->stop)) {
        natsio_msg *m = NULL;
        natsio_status s = natsio_sub_next_msg(st->sub, 100, &m);
        if (s == NATSIO_ERR_TIMEOUT)
            continue;
        if (s != NATSIO_OK)
            break;
        ps_count(st, natsio_msg_data_len(m));
        natsio_msg_free(m);
    }
    return NULL;
}

static void run_pubsub(long size)
{
    natsio_client *snc = NULL, *pnc = NULL;
    natsio_sub *sub = NULL;
    char *data = bench_make_payload(size);
    err_ctx_t *ctx = err_ctx_new();
    long errors = 0;
    ps_state_t st;
    pthread_t reader;
    bool reader_started = false;
    natsio_status s;

    memset(&st, 0, sizeof st);
    st.target = O.n;
    st.size = size;
    pthread_mutex_init(&st.mu, NULL);
    pthread_cond_init(&st.cv, NULL);

    s = connect_client(ctx, "natsio-bench-sub", &snc);
    if (s == NATSIO_OK)
        s = connect_client(ctx, "natsio-bench-pub", &pnc);
    if (s != NATSIO_OK) {
        emit_failure("pubsub", size, "failed", "connect", s);
        goto out;
    }
    if (g_pubsub_mode == PUBSUB_CALLBACK) {
        s = natsio_client_subscribe_callback(snc, "bench.ps", NULL, NULL,
                                             ps_on_msg, &st, NULL, &sub);
    } else {
        s = natsio_client_subscribe(snc, "bench.ps", NULL, NULL, &sub);
        if (s == NATSIO_OK) {
            st.sub = sub;
            reader_started = pthread_create(&reader, NULL, ps_reader, &st) == 0;
        }
    }
    if (s == NATSIO_OK) /* barrier: SUB registered once the PONG is back */
        s = natsio_client_flush(snc, bench_idle_ms(&O));
    if (s != NATSIO_OK) {
        emit_failure("pubsub", size, "failed", "subscribe", s);
        goto out;
    }

    long rss_start = current_rss_kb();
    double c0 = cpu_ns();
    double t0 = bench_now_s();
    for (long i = 0; i < O.n; i++) {
        if (natsio_client_publish(pnc, "bench.ps", data, (size_t)size) != NATSIO_OK)
            errors++;
        if ((i & 4095) == 4095 && bench_now_s() - t0 > O.max_secs)
            break;
    }
    /* make sure everything buffered goes out; the clock stops on receipt */
    if (natsio_client_flush(pnc, bench_idle_ms(&O)) != NATSIO_OK)
        errors++;

    long last_seen = -1;
    double last_progress = bench_now_s();
    pthread_mutex_lock(&st.mu);
    while (!st.done) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 10 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&st.cv, &st.mu, &ts);
        if (st.done)
            break;
        long r = atomic_load(&st.received);
        double t = bench_now_s();
        if (r != last_seen) {
            last_seen = r;
            last_progress = t;
        }
        if (t - last_progress > O.idle_timeout || t - t0 > O.max_secs)
            break;
    }
    bool done = st.done;
    double t_done = st.t_done;
    pthread_mutex_unlock(&st.mu);
    double c1 = cpu_ns();
    long rss_end = current_rss_kb();

    long received = atomic_load(&st.received);
    if (received > O.n)
        received = O.n;
    double secs = (done ? t_done : last_progress) - t0;
    if (secs <= 0)
        secs = 1e-9;
    natsio_sub_stats ss;
    long dropped = 0;
    if (natsio_sub_get_stats(sub, &ss) == NATSIO_OK)
        dropped = (long)ss.dropped;
    errors += atomic_load(&ctx->errors) + atomic_load(&st.badsize);
    printf("scenario=pubsub client=%s size=%ld n=%ld received=%ld lost=%ld "
           "secs=%.6f msgs_per_s=%.1f mb_per_s=%.3f errors=%ld mode=%s "
           "dropped=%ld cpu_ns_per_msg=%.1f rss_kb=%ld rss_start_kb=%ld "
           "rss_end_kb=%ld\n",
           CLIENT, size, O.n, received, O.n - received, secs,
           (double)received / secs, (double)received * (double)size / 1e6 / secs,
           errors, g_pubsub_mode == PUBSUB_CALLBACK ? "callback" : "iterator",
           dropped, (c1 - c0) / (double)(received > 0 ? received : 1),
           peak_rss_kb(), rss_start, rss_end);
    fflush(stdout);
out:
    atomic_store(&ctx->closing, 1);
    atomic_store(&st.stop, 1);
    /* unsubscribe first: it ends a blocked natsio_sub_next_msg and, after it
     * returns, no callback can touch st any more */
    if (sub)
        natsio_sub_unsubscribe(sub);
    if (reader_started)
        pthread_join(reader, NULL);
    natsio_sub_free(sub);
    close_client(ctx, pnc);
    close_client(ctx, snc);
    err_ctx_release(ctx);
    pthread_cond_destroy(&st.cv);
    pthread_mutex_destroy(&st.mu);
    free(data);
}

/* ------------------------------------------------------------------------ */
/* req                                                                      */

static void req_on_msg(void *user_data, natsio_sub *sub, const natsio_msg *msg)
{
    (void)sub;
    err_ctx_t *ctx = user_data;
    if (natsio_msg_respond(msg, natsio_msg_data(msg), natsio_msg_data_len(msg)) !=
        NATSIO_OK)
        atomic_fetch_add(&ctx->errors, 1);
}

static void run_req(long size)
{
    natsio_client *rnc = NULL, *qnc = NULL;
    natsio_sub *sub = NULL;
    char *data = bench_make_payload(size);
    double *lat = calloc((size_t)(O.k > 0 ? O.k : 1), sizeof(double));
    err_ctx_t *ctx = err_ctx_new();
    long errors = 0, nlat = 0;
    bool timed_out = false;
    natsio_status s;

    s = connect_client(ctx, "natsio-bench-responder", &rnc);
    if (s == NATSIO_OK)
        s = connect_client(ctx, "natsio-bench-requester", &qnc);
    if (s != NATSIO_OK) {
        emit_failure("req", size, "failed", "connect", s);
        goto out;
    }
    s = natsio_client_subscribe_callback(rnc, "bench.req", NULL, NULL, req_on_msg,
                                         ctx, NULL, &sub);
    if (s == NATSIO_OK)
        s = natsio_client_flush(rnc, bench_idle_ms(&O));
    if (s != NATSIO_OK) {
        emit_failure("req", size, "failed", "subscribe", s);
        goto out;
    }
    for (long i = 0; i < O.warmup; i++) {
        natsio_msg *m = NULL;
        natsio_client_request(qnc, "bench.req", NULL, data, (size_t)size,
                              bench_idle_ms(&O), &m);
        natsio_msg_free(m);
    }
    atomic_store(&ctx->errors, 0);

    double c0 = cpu_ns();
    double t0 = bench_now_s();
    for (long i = 0; i < O.k; i++) {
        natsio_msg *m = NULL;
        double a = bench_now_s();
        s = natsio_client_request(qnc, "bench.req", NULL, data, (size_t)size,
                                  bench_idle_ms(&O), &m);
        double b = bench_now_s();
        if (s != NATSIO_OK) {
            errors++;
        } else {
            if ((long)natsio_msg_data_len(m) != size)
                errors++;
            lat[nlat++] = (b - a) * 1e6;
        }
        natsio_msg_free(m);
        if (b - t0 > O.max_secs) {
            timed_out = true;
            break;
        }
    }
    double secs = bench_now_s() - t0;
    double c1 = cpu_ns();
    if (timed_out) {
        bench_emit_status("req", size, "timeout", "max-secs");
        goto out;
    }
    errors += atomic_load(&ctx->errors);
    bench_latency L = bench_latency_stats(lat, nlat);
    printf("scenario=req client=%s size=%ld n=%ld secs=%.6f msgs_per_s=%.1f "
           "mean_us=%.1f p50_us=%.1f p99_us=%.1f errors=%ld cpu_ns_per_msg=%.1f\n",
           CLIENT, size, O.k, secs, (double)O.k / secs, L.mean, L.p50, L.p99,
           errors, (c1 - c0) / (double)(O.k > 0 ? O.k : 1));
    fflush(stdout);
out:
    atomic_store(&ctx->closing, 1);
    natsio_sub_free(sub);
    close_client(ctx, qnc);
    close_client(ctx, rnc);
    err_ctx_release(ctx);
    free(lat);
    free(data);
}

/* ------------------------------------------------------------------------ */
/* JetStream: jspub, jspub-sync, kv                                         */

static natsio_status open_js(err_ctx_t *ctx, natsio_client **c, natsio_js **js)
{
    natsio_status s = connect_client(ctx, "natsio-bench-js", c);
    if (s != NATSIO_OK)
        return s;
    natsio_js_options jo = {0};
    jo.timeout_ms = bench_idle_ms(&O);
    jo.publish_async_max_pending = O.window;
    /* a publish that cannot get a window slot waits up to the idle timeout */
    jo.publish_async_stall_wait_ms = bench_idle_ms(&O);
    return natsio_client_jetstream(*c, &jo, js);
}

static natsio_status fresh_bench_stream(natsio_js *js)
{
    natsio_status s = natsio_js_stream_delete(js, "BENCH");
    if (s != NATSIO_OK && s != NATSIO_ERR_STREAM_NOT_FOUND)
        return s;
    return natsio_js_stream_create(js,
        "{\"name\":\"BENCH\",\"subjects\":[\"bench.js.>\"],\"storage\":\"file\","
        "\"num_replicas\":1,\"retention\":\"limits\"}", NULL);
}

static void run_jspub(long size)
{
    err_ctx_t *ctx = err_ctx_new();
    natsio_client *c = NULL;
    natsio_js *js = NULL;
    char *data = bench_make_payload(size);
    long window = O.window;
    natsio_token **ring = calloc((size_t)window, sizeof *ring);
    long head = 0, inflight = 0, acked = 0, errors = 0;
    double t_last = 0;

    natsio_status s = open_js(ctx, &c, &js);
    if (s == NATSIO_OK)
        s = fresh_bench_stream(js);
    if (s != NATSIO_OK) {
        emit_failure("jspub", size, "failed", "stream", s);
        goto out;
    }
    atomic_store(&ctx->errors, 0);

    /* Completes the oldest publish of the ring. */
#define JSPUB_RETIRE()                                                        \
    do {                                                                      \
        natsio_token *t_ = ring[head];                                        \
        ring[head] = NULL;                                                    \
        head = (head + 1) % window;                                           \
        inflight--;                                                           \
        if (natsio_token_wait(t_, bench_idle_ms(&O)) == NATSIO_OK &&          \
            natsio_token_status(t_) == NATSIO_OK) {                           \
            acked++;                                                          \
            t_last = bench_now_s();                                           \
        } else                                                                \
            errors++;                                                         \
        natsio_token_free(t_);                                                \
    } while (0)

    double t0 = bench_now_s();
    t_last = t0;
    for (long i = 0; i < O.js_n; i++) {
        if (inflight == window)
            JSPUB_RETIRE();
        natsio_token *t = NULL;
        s = natsio_js_publish_async(js, "bench.js.a", data, (size_t)size, NULL, &t);
        if (s != NATSIO_OK) {
            errors++;
            if (s == NATSIO_ERR_TOO_MANY_STALLED)
                break;
            continue;
        }
        ring[(head + inflight) % window] = t;
        inflight++;
        if ((i & 1023) == 1023 && bench_now_s() - t0 > O.max_secs)
            break;
    }
    while (inflight > 0)
        JSPUB_RETIRE();
#undef JSPUB_RETIRE
    double t1 = acked < O.js_n ? t_last : bench_now_s();
    errors += atomic_load(&ctx->errors);
    double secs = t1 - t0;
    if (secs <= 0)
        secs = 1e-9;
    printf("scenario=jspub client=%s size=%ld n=%ld acked=%ld unacked=%ld "
           "secs=%.6f msgs_per_s=%.1f mb_per_s=%.3f window=%ld errors=%ld\n",
           CLIENT, size, O.js_n, acked, O.js_n - acked, secs,
           (double)acked / secs, (double)acked * (double)size / 1e6 / secs,
           window, errors);
    fflush(stdout);
out:
    natsio_js_free(js);
    close_client(ctx, c);
    err_ctx_release(ctx);
    free(ring);
    free(data);
}

/* Prints one latency line (jspub-sync, kv-put, kv-get). */
static void emit_latency(const char *scen, const char *rate_key, long size, long n,
                         double secs, double *lat, long nlat, long errors)
{
    bench_latency L = bench_latency_stats(lat, nlat);
    printf("scenario=%s client=%s size=%ld n=%ld secs=%.6f %s=%.1f mean_us=%.1f "
           "p50_us=%.1f p99_us=%.1f errors=%ld\n",
           scen, CLIENT, size, n, secs, rate_key, (double)n / secs, L.mean, L.p50,
           L.p99, errors);
    fflush(stdout);
}

static void run_jspub_sync(long size)
{
    err_ctx_t *ctx = err_ctx_new();
    natsio_client *c = NULL;
    natsio_js *js = NULL;
    char *data = bench_make_payload(size);
    double *lat = calloc((size_t)(O.k > 0 ? O.k : 1), sizeof(double));
    long errors = 0, nlat = 0;

    natsio_status s = open_js(ctx, &c, &js);
    if (s == NATSIO_OK)
        s = fresh_bench_stream(js);
    if (s != NATSIO_OK) {
        emit_failure("jspub-sync", size, "failed", "stream", s);
        goto out;
    }
    for (long i = 0; i < O.warmup; i++)
        natsio_js_publish(js, "bench.js.a", data, (size_t)size, NULL, NULL);
    atomic_store(&ctx->errors, 0);

    double t0 = bench_now_s();
    bool timed_out = false;
    for (long i = 0; i < O.k; i++) {
        double a = bench_now_s();
        s = natsio_js_publish(js, "bench.js.a", data, (size_t)size, NULL, NULL);
        double b = bench_now_s();
        if (s != NATSIO_OK)
            errors++;
        else
            lat[nlat++] = (b - a) * 1e6;
        if (b - t0 > O.max_secs) {
            timed_out = true;
            break;
        }
    }
    double secs = bench_now_s() - t0;
    if (timed_out)
        bench_emit_status("jspub-sync", size, "timeout", "max-secs");
    else
        emit_latency("jspub-sync", "msgs_per_s", size, O.k, secs, lat, nlat,
                     errors + atomic_load(&ctx->errors));
out:
    natsio_js_free(js);
    close_client(ctx, c);
    err_ctx_release(ctx);
    free(lat);
    free(data);
}

static void run_kv(long size)
{
    err_ctx_t *ctx = err_ctx_new();
    natsio_client *c = NULL;
    natsio_js *js = NULL;
    natsio_kv *kv = NULL;
    char *data = bench_make_payload(size);
    long K = O.kv_k;
    double *lat = calloc((size_t)(K > 0 ? K : 1), sizeof(double));
    char key[64];

    natsio_status s = open_js(ctx, &c, &js);
    if (s == NATSIO_OK) {
        s = natsio_js_kv_delete(js, "BENCHKV");
        if (s == NATSIO_ERR_BUCKET_NOT_FOUND)
            s = NATSIO_OK;
    }
    if (s == NATSIO_OK)
        s = natsio_js_kv_create(js, "{\"bucket\":\"BENCHKV\",\"history\":1,\"storage\":\"file\"}",
                                &kv); /* allow_direct is always set */
    if (s != NATSIO_OK) {
        emit_failure("kv-put", size, "failed", "bucket", s);
        emit_failure("kv-get", size, "failed", "bucket", s);
        goto out;
    }
    for (long i = 0; i < O.warmup; i++) {
        natsio_kv_entry *e = NULL;
        snprintf(key, sizeof key, "warm%ld", i);
        natsio_kv_put(kv, key, data, (size_t)size, NULL);
        natsio_kv_get(kv, key, &e);
        natsio_kv_entry_free(e);
    }

    for (int phase = 0; phase < 2; phase++) {
        const char *scen = phase == 0 ? "kv-put" : "kv-get";
        long errors = 0, nlat = 0;
        bool timed_out = false;
        atomic_store(&ctx->errors, 0);
        double t0 = bench_now_s();
        for (long i = 0; i < K; i++) {
            natsio_kv_entry *e = NULL;
            snprintf(key, sizeof key, "k%ld", i);
            double a = bench_now_s();
            s = phase == 0 ? natsio_kv_put(kv, key, data, (size_t)size, NULL)
                           : natsio_kv_get(kv, key, &e);
            double b = bench_now_s();
            if (s != NATSIO_OK || (phase == 1 && natsio_kv_entry_value_len(e) != (size_t)size))
                errors++;
            else
                lat[nlat++] = (b - a) * 1e6;
            natsio_kv_entry_free(e);
            if (b - t0 > O.max_secs) {
                timed_out = true;
                break;
            }
        }
        double secs = bench_now_s() - t0;
        if (timed_out)
            bench_emit_status(scen, size, "timeout", "max-secs");
        else
            emit_latency(scen, "ops_per_s", size, K, secs, lat, nlat,
                         errors + atomic_load(&ctx->errors));
    }
out:
    natsio_kv_free(kv);
    natsio_js_free(js);
    close_client(ctx, c);
    err_ctx_release(ctx);
    free(lat);
    free(data);
}

/* ------------------------------------------------------------------------ */
/* main                                                                     */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: natsio_bench [--url URL] [--scenarios pub,pubsub,req,jspub,"
            "jspub-sync,kv,pub4]\n"
            "                    [--sizes 16,1024] [--n N] [--js-n N] [--k K] "
            "[--kv-k K]\n"
            "                    [--window W] [--warmup W] [--idle-timeout S] "
            "[--max-secs S]\n"
            "                    [--threads T (pub4, default 4)] "
            "[--pubsub-mode callback|iterator]\n");
}

/* --threads and --pubsub-mode */
static bool parse_natsio_option(const char *name, const char *v)
{
    if (!strcmp(name, "--threads")) g_threads = bench_parse_long(name, v);
    else if (!strcmp(name, "--pubsub-mode")) {
        if (!strcmp(v, "callback")) g_pubsub_mode = PUBSUB_CALLBACK;
        else if (!strcmp(v, "iterator")) g_pubsub_mode = PUBSUB_ITERATOR;
        else {
            fprintf(stderr, "natsio_bench: bad value for %s: %s\n", name, v);
            exit(2);
        }
    } else return false;
    return true;
}

int main(int argc, char **argv)
{
    bench_set_identity("natsio_bench", CLIENT);
    bench_options_init(&O);
    int rc = bench_parse_args(argc, argv, &O, usage, parse_natsio_option);
    if (rc >= 0)
        return rc;
    if (g_threads < 1) g_threads = 1;

    long sizes[64];
    int nsizes = bench_parse_sizes(&O, sizes, 64);

    printf("# client=%s version=%s url=%s\n", CLIENT, natsio_version(), O.url);
    fflush(stdout);

    char *tmp = strdup(O.scenarios), *save = NULL;
    for (char *sc = strtok_r(tmp, ",", &save); sc;
         sc = strtok_r(NULL, ",", &save)) {
        for (int j = 0; j < nsizes; j++) {
            long size = sizes[j];
            if (!strcmp(sc, "pub")) run_pub(size, 0);
            else if (!strcmp(sc, "pub4")) run_pub(size, g_threads);
            else if (!strcmp(sc, "pubsub")) run_pubsub(size);
            else if (!strcmp(sc, "req")) run_req(size);
            else if (!strcmp(sc, "jspub")) run_jspub(size);
            else if (!strcmp(sc, "jspub-sync")) run_jspub_sync(size);
            else if (!strcmp(sc, "kv")) run_kv(size);
            else bench_emit_status(sc, size, "unsupported", NULL);
        }
    }
    free(tmp);
    bench_options_free(&O);
    return 0;
}
