/*
 * natsio_bench: benchmark harness of libnatsio, driven only through the
 * public C ABI (include/natsio.h).
 *
 * Implements the CLI, scenarios, clock boundaries and output lines of the
 * project's benchmark spec (shared/bench-spec.md) with client=libnatsio,
 * plus libnatsio-only measurements:
 *   - scenario pub4: the pub scenario with --threads T publisher threads
 *     sharing one client (N messages in total, N/T per thread);
 *   - cpu_ns_per_msg on every line with a message/operation count (pub,
 *     pubsub, req, jspub, jspub-sync, kv-put, kv-get, kv-par, js-consume,
 *     pub4): user+sys CPU of the whole process over exactly the timed
 *     region, divided by the messages/operations of the line;
 *   - on pubsub, rss_start_kb and rss_end_kb (current RSS sampled before
 *     and after the run) beside every line's rss_peak_kb, to show that
 *     memory stays bounded.
 * jspub keeps a ring of --window publish tokens (the library's own
 * publish_async_max_pending is set to the same value) and waits on the
 * oldest when the ring is full; it publishes with defer_send (a run of
 * publishes in one write; the wait sends what is queued).
 * kv-par keeps --par natsio_kv_get_async tokens in flight: each completion
 * callback (natsio_token_on_complete, on the library's dispatcher thread)
 * checks its entry and starts the next get (--par-mode window instead:
 * a ring of tokens waited on in order from the main thread). threads_peak
 * is sampled by a thread of this harness every 2 ms, not counting itself.
 * js-consume reads a natsio_js_consume iterator in push mode (--consume-mode
 * iterator: natsio_js_messages_next on the main thread) and acks each
 * message with natsio_msg_ack_deferred (a run of acks in one write).
 * obj-put/obj-get: bucket BENCHOBJ recreated per run; natsio_obj_put from
 * memory / natsio_obj_get + natsio_obj_reader_read into one buffer of the
 * object's size; --obj-mode stream: natsio_obj_writer_write of 128 KiB
 * pieces of a repeated 1 MiB pattern / natsio_obj_reader_read into one
 * 128 KiB buffer. Each measured run is a fresh process (this program re-run
 * with --obj-child), so rss_peak_mb (VmHWM) is that of the one run.
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CLIENT "libnatsio"

/* ------------------------------------------------------------------------ */
/* options                                                                  */

typedef enum { PUBSUB_CALLBACK, PUBSUB_ITERATOR } pubsub_mode_t;
typedef enum { PAR_CALLBACK, PAR_WINDOW } par_mode_t;

static bench_options O;
/* spec options that bench_common leaves to the harness */
static long g_par = 256;        /* --par (kv-par) */
static long g_obj_mb = 64;      /* --obj-mb */
static long g_obj_small = 1000; /* --obj-small */
/* libnatsio-only options */
static long g_threads = 4;
static pubsub_mode_t g_pubsub_mode = PUBSUB_CALLBACK;
static par_mode_t g_par_mode = PAR_CALLBACK;
static pubsub_mode_t g_consume_mode = PUBSUB_CALLBACK;
static bool g_obj_stream;             /* --obj-mode stream */
static const char *g_obj_child;       /* internal: --obj-child SCENARIO:big|small */

/* ------------------------------------------------------------------------ */
/* helpers                                                                  */

/* user+sys CPU of the whole process (library threads included), in ns */
static double cpu_ns(void) { return bench_cpu_ns(); }


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
           bench_cpu_per_msg(c0, c1, O.n));
    if (threads > 0)
        printf(" threads=%ld", nthreads);
    bench_end_result_line();
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
    double c_done; /* process CPU at t_done */
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
        double c = cpu_ns();
        pthread_mutex_lock(&st->mu);
        st->t_done = t;
        st->c_done = c;
        st->done = true;
        pthread_cond_signal(&st->cv);
        pthread_mutex_unlock(&st->mu);
    }
}

static void ps_on_msg(void *user_data, const natsio_msg *msg, natsio_status status)
{
    (void)status;
    if (msg == NULL) /* the final call: the subscription ended */
        return;
    ps_count(user_data, natsio_msg_data_len(msg));
}

static void *ps_reader(void *arg)
{
    ps_state_t *st = arg;
    while (!atomic_load(&st->stop)) {
        natsio_msg *m = NULL;
        natsio_status s = natsio_sub_next(st->sub, 100, &m);
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
        s = natsio_client_subscribe(snc, "bench.ps", NULL, NULL, &sub);
        if (s == NATSIO_OK)
            s = natsio_sub_set_callback(sub, ps_on_msg, &st, NULL);
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

    long rss_start = bench_proc_status("VmRSS");
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
    double c1 = done ? st.c_done : cpu_ns();
    long rss_end = bench_proc_status("VmRSS");

    long received = atomic_load(&st.received);
    if (received > O.n)
        received = O.n;
    double secs = (done ? t_done : last_progress) - t0;
    if (secs <= 0)
        secs = 1e-9;
    natsio_iter_stats ss;
    long dropped = 0;
    if (natsio_sub_get_stats(sub, &ss) == NATSIO_OK)
        dropped = (long)ss.dropped;
    errors += atomic_load(&ctx->errors) + atomic_load(&st.badsize);
    printf("scenario=pubsub client=%s size=%ld n=%ld received=%ld lost=%ld "
           "secs=%.6f msgs_per_s=%.1f mb_per_s=%.3f errors=%ld mode=%s "
           "dropped=%ld cpu_ns_per_msg=%.1f rss_start_kb=%ld rss_end_kb=%ld",
           CLIENT, size, O.n, received, O.n - received, secs,
           (double)received / secs, (double)received * (double)size / 1e6 / secs,
           errors, g_pubsub_mode == PUBSUB_CALLBACK ? "callback" : "iterator",
           dropped, bench_cpu_per_msg(c0, c1, received),
           rss_start, rss_end);
    bench_end_result_line();
    fflush(stdout);
out:
    atomic_store(&ctx->closing, 1);
    atomic_store(&st.stop, 1);
    /* stop first: it ends a blocked natsio_sub_next and, after it returns,
     * no callback can touch st any more */
    if (sub)
        natsio_sub_stop(sub);
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

static void req_on_msg(void *user_data, const natsio_msg *msg, natsio_status status)
{
    (void)status;
    if (msg == NULL) /* the final call */
        return;
    err_ctx_t *ctx = user_data;
    if (natsio_msg_respond(msg, natsio_msg_data(msg), natsio_msg_data_len(msg)) !=
        NATSIO_OK)
        atomic_fetch_add(&ctx->errors, 1);
}

/* One timed request loop (req and svc): --warmup untimed requests, then
 * O.k timed ones to `subject`, each reply's length checked. */
typedef struct {
    long errors, nlat;
    double secs, cpu0, cpu1;
    bool timed_out;
} request_loop_t;

static request_loop_t request_loop(natsio_client *qnc, const char *subject, const char *data,
                                   long size, double *lat)
{
    request_loop_t r = {0};
    for (long i = 0; i < O.warmup; i++) {
        natsio_msg *m = NULL;
        natsio_client_request(qnc, subject, NULL, data, (size_t)size, bench_idle_ms(&O), &m);
        natsio_msg_free(m);
    }
    r.cpu0 = cpu_ns();
    double t0 = bench_now_s();
    for (long i = 0; i < O.k; i++) {
        natsio_msg *m = NULL;
        double a = bench_now_s();
        natsio_status s = natsio_client_request(qnc, subject, NULL, data, (size_t)size,
                                                bench_idle_ms(&O), &m);
        double b = bench_now_s();
        if (s != NATSIO_OK) {
            r.errors++;
        } else {
            if ((long)natsio_msg_data_len(m) != size)
                r.errors++;
            lat[r.nlat++] = (b - a) * 1e6;
        }
        natsio_msg_free(m);
        if (b - t0 > O.max_secs) {
            r.timed_out = true;
            break;
        }
    }
    r.secs = bench_now_s() - t0;
    r.cpu1 = cpu_ns();
    return r;
}

static void run_req(long size)
{
    natsio_client *rnc = NULL, *qnc = NULL;
    natsio_sub *sub = NULL;
    char *data = bench_make_payload(size);
    double *lat = calloc((size_t)(O.k > 0 ? O.k : 1), sizeof(double));
    err_ctx_t *ctx = err_ctx_new();
    natsio_status s;

    s = connect_client(ctx, "natsio-bench-responder", &rnc);
    if (s == NATSIO_OK)
        s = connect_client(ctx, "natsio-bench-requester", &qnc);
    if (s != NATSIO_OK) {
        emit_failure("req", size, "failed", "connect", s);
        goto out;
    }
    s = natsio_client_subscribe(rnc, "bench.req", NULL, NULL, &sub);
    if (s == NATSIO_OK)
        s = natsio_sub_set_callback(sub, req_on_msg, ctx, NULL);
    if (s == NATSIO_OK)
        s = natsio_client_flush(rnc, bench_idle_ms(&O));
    if (s != NATSIO_OK) {
        emit_failure("req", size, "failed", "subscribe", s);
        goto out;
    }
    request_loop_t r = request_loop(qnc, "bench.req", data, size, lat);
    if (r.timed_out) {
        bench_emit_status("req", size, "timeout", "max-secs");
        goto out;
    }
    /* Responder errors of the warmup do not count. */
    long errors = r.errors + atomic_load(&ctx->errors);
    bench_latency L = bench_latency_stats(lat, r.nlat);
    printf("scenario=req client=%s size=%ld n=%ld secs=%.6f msgs_per_s=%.1f "
           "mean_us=%.1f p50_us=%.1f p99_us=%.1f errors=%ld cpu_ns_per_msg=%.1f",
           CLIENT, size, O.k, r.secs, (double)O.k / r.secs, L.mean, L.p50, L.p99,
           errors, bench_cpu_per_msg(r.cpu0, r.cpu1, O.k));
    bench_end_result_line();
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
/* svc: request/reply through a service endpoint (ADR-32)                   */

static natsio_status svc_echo(void *user_data, const natsio_service_request *req,
                              natsio_status status)
{
    err_ctx_t *ctx = user_data;
    if (req == NULL)
        return status;
    const natsio_msg *m = natsio_service_request_msg(req);
    natsio_status s = natsio_service_request_respond(req, NULL, natsio_msg_data(m),
                                                     natsio_msg_data_len(m));
    if (s != NATSIO_OK)
        atomic_fetch_add(&ctx->errors, 1);
    return s;
}

/* The service's num_requests as read by a $SRV.STATS.bench request. */
static long svc_stats_requests(natsio_client *qnc)
{
    natsio_msg *m = NULL;
    long n = -1;
    if (natsio_client_request(qnc, "$SRV.STATS.bench", NULL, NULL, 0, bench_idle_ms(&O), &m) ==
        NATSIO_OK) {
        size_t len = natsio_msg_data_len(m);
        char *json = malloc(len + 1);
        if (json != NULL) {
            memcpy(json, natsio_msg_data(m), len);
            json[len] = '\0';
            const char *p = strstr(json, "\"num_requests\":");
            if (p != NULL)
                n = strtol(p + strlen("\"num_requests\":"), NULL, 10);
            free(json);
        }
    }
    natsio_msg_free(m);
    return n;
}

static void run_svc(long size)
{
    natsio_client *rnc = NULL, *qnc = NULL;
    natsio_service *svc = NULL;
    natsio_endpoint *ep = NULL;
    char *data = bench_make_payload(size);
    double *lat = calloc((size_t)(O.k > 0 ? O.k : 1), sizeof(double));
    err_ctx_t *ctx = err_ctx_new();
    natsio_status s;

    s = connect_client(ctx, "natsio-bench-service", &rnc);
    if (s == NATSIO_OK)
        s = connect_client(ctx, "natsio-bench-requester", &qnc);
    if (s != NATSIO_OK) {
        emit_failure("svc", size, "failed", "connect", s);
        goto out;
    }
    s = natsio_client_add_service(rnc, "{\"name\":\"bench\",\"version\":\"1.0.0\"}", &svc);
    if (s == NATSIO_OK)
        s = natsio_service_add_endpoint(svc, NULL,
                                        "{\"name\":\"echo\",\"subject\":\"bench.svc.echo\"}", &ep);
    if (s == NATSIO_OK)
        s = natsio_endpoint_set_callback(ep, svc_echo, ctx, NULL);
    if (s == NATSIO_OK)
        s = natsio_client_flush(rnc, bench_idle_ms(&O));
    if (s != NATSIO_OK) {
        emit_failure("svc", size, "failed", "service", s);
        goto out;
    }
    request_loop_t r = request_loop(qnc, "bench.svc.echo", data, size, lat);
    if (r.timed_out) {
        bench_emit_status("svc", size, "timeout", "max-secs");
        goto out;
    }
    long counted = svc_stats_requests(qnc);
    long errors = r.errors + atomic_load(&ctx->errors);
    bench_latency L = bench_latency_stats(lat, r.nlat);
    printf("scenario=svc client=%s size=%ld n=%ld secs=%.6f msgs_per_s=%.1f "
           "mean_us=%.1f p50_us=%.1f p99_us=%.1f errors=%ld stats_ok=%d cpu_ns_per_msg=%.1f",
           CLIENT, size, O.k, r.secs, (double)O.k / r.secs, L.mean, L.p50, L.p99, errors,
           counted == O.warmup + O.k, bench_cpu_per_msg(r.cpu0, r.cpu1, O.k));
    bench_end_result_line();
    fflush(stdout);
out:
    atomic_store(&ctx->closing, 1);
    natsio_endpoint_free(ep);
    natsio_service_free(svc);
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
    natsio_js_options jo;
    natsio_js_options_init(&jo);
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
        "\"num_replicas\":1,\"retention\":\"limits\"}", NATSIO_CREATE, NULL);
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

    /* Queued without waking the writer while others await acks: the
     * library sends them within its tick, and the wait on the oldest token
     * (natsio_token_wait) at once. */
    natsio_js_publish_options po;
    natsio_js_publish_options_init(&po);
    po.defer_send = true;
    double c0 = cpu_ns();
    double t0 = bench_now_s();
    t_last = t0;
    for (long i = 0; i < O.js_n; i++) {
        if (inflight == window)
            JSPUB_RETIRE();
        natsio_token *t = NULL;
        s = natsio_js_publish_async(js, "bench.js.a", data, (size_t)size, &po, &t);
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
    double c1 = cpu_ns();
    errors += atomic_load(&ctx->errors);
    double secs = t1 - t0;
    if (secs <= 0)
        secs = 1e-9;
    printf("scenario=jspub client=%s size=%ld n=%ld acked=%ld unacked=%ld "
           "secs=%.6f msgs_per_s=%.1f mb_per_s=%.3f window=%ld errors=%ld "
           "cpu_ns_per_msg=%.1f",
           CLIENT, size, O.js_n, acked, O.js_n - acked, secs,
           (double)acked / secs, (double)acked * (double)size / 1e6 / secs,
           window, errors, bench_cpu_per_msg(c0, c1, acked));
    bench_end_result_line();
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
                         double secs, double *lat, long nlat, long errors, double cpu)
{
    bench_latency L = bench_latency_stats(lat, nlat);
    printf("scenario=%s client=%s size=%ld n=%ld secs=%.6f %s=%.1f mean_us=%.1f "
           "p50_us=%.1f p99_us=%.1f errors=%ld cpu_ns_per_msg=%.1f",
           scen, CLIENT, size, n, secs, rate_key, (double)n / secs, L.mean, L.p50,
           L.p99, errors, bench_cpu_per_msg(0, cpu, n));
    bench_end_result_line();
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

    double c0 = cpu_ns();
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
    double c1 = cpu_ns();
    if (timed_out)
        bench_emit_status("jspub-sync", size, "timeout", "max-secs");
    else
        emit_latency("jspub-sync", "msgs_per_s", size, O.k, secs, lat, nlat,
                     errors + atomic_load(&ctx->errors), c1 - c0);
out:
    natsio_js_free(js);
    close_client(ctx, c);
    err_ctx_release(ctx);
    free(lat);
    free(data);
}

/* Deletes and creates BENCHKV (history 1, file storage; Direct Get is
 * always on). */
static natsio_status fresh_bench_kv(natsio_js *js, natsio_kv **kv)
{
    natsio_status s = natsio_js_kv_delete(js, "BENCHKV");
    if (s != NATSIO_OK && s != NATSIO_ERR_BUCKET_NOT_FOUND)
        return s;
    return natsio_js_kv_create(js, "{\"bucket\":\"BENCHKV\",\"history\":1,\"storage\":\"file\"}",
                               NATSIO_CREATE, kv);
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
    if (s == NATSIO_OK)
        s = fresh_bench_kv(js, &kv);
    if (s != NATSIO_OK) {
        emit_failure("kv-put", size, "failed", "bucket", s);
        emit_failure("kv-get", size, "failed", "bucket", s);
        goto out;
    }
    for (long i = 0; i < O.warmup; i++) {
        natsio_kv_entry *e = NULL;
        snprintf(key, sizeof key, "warm%ld", i);
        natsio_kv_put(kv, key, data, (size_t)size, NULL, NULL);
        natsio_kv_get(kv, key, &e);
        natsio_kv_entry_free(e);
    }

    for (int phase = 0; phase < 2; phase++) {
        const char *scen = phase == 0 ? "kv-put" : "kv-get";
        long errors = 0, nlat = 0;
        bool timed_out = false;
        atomic_store(&ctx->errors, 0);
        double c0 = cpu_ns();
        double t0 = bench_now_s();
        for (long i = 0; i < K; i++) {
            natsio_kv_entry *e = NULL;
            snprintf(key, sizeof key, "k%ld", i);
            double a = bench_now_s();
            s = phase == 0 ? natsio_kv_put(kv, key, data, (size_t)size, NULL, NULL)
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
        double c1 = cpu_ns();
        if (timed_out)
            bench_emit_status(scen, size, "timeout", "max-secs");
        else
            emit_latency(scen, "ops_per_s", size, K, secs, lat, nlat,
                         errors + atomic_load(&ctx->errors), c1 - c0);
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
/* kv-par                                                                   */

/*
 * The highest Threads: of /proc/self/status, sampled every 2 ms by a
 * thread of its own. That thread is part of the process it measures, so
 * each sample counts it once too many: it is left out (the peak is the
 * process's threads without the sampler).
 */
typedef struct {
    pthread_t thread;
    atomic_int stop;
    atomic_long peak;
} thread_sampler_t;

static void sampler_note(thread_sampler_t *ts, long threads)
{
    long peak = atomic_load(&ts->peak);
    while (threads > peak && !atomic_compare_exchange_weak(&ts->peak, &peak, threads)) {
    }
}

static void *sample_threads(void *arg)
{
    thread_sampler_t *ts = arg;
    while (!atomic_load(&ts->stop)) {
        long t = bench_proc_status("Threads");
        if (t > 0)
            sampler_note(ts, t - 1); /* without this sampling thread */
        struct timespec d = {0, 2 * 1000000L};
        nanosleep(&d, NULL);
    }
    return NULL;
}

/* Starts sampling; `baseline` (sampled before the thread exists) seeds
 * the peak. False if the thread cannot start (then only the baseline and
 * the final sample count). */
static bool sampler_start(thread_sampler_t *ts, long baseline)
{
    atomic_store(&ts->stop, 0);
    atomic_store(&ts->peak, baseline);
    return pthread_create(&ts->thread, NULL, sample_threads, ts) == 0;
}

/* Stops sampling; one last sample once the sampler is gone. */
static long sampler_finish(thread_sampler_t *ts, bool started)
{
    atomic_store(&ts->stop, 1);
    if (started)
        pthread_join(ts->thread, NULL);
    sampler_note(ts, bench_proc_status("Threads"));
    return atomic_load(&ts->peak);
}

/* The gets of one kv-par run. Heap-allocated: completion callbacks may
 * still hold it when a run gives up (see run_kv_par). */
typedef struct {
    natsio_kv *kv;
    long k;
    long size;
    atomic_long next;      /* index of the next key to get */
    atomic_long completed; /* gets finished, well or not */
    atomic_long inflight;  /* tokens whose callback has not finished */
    atomic_long errors;
    atomic_int stop;       /* no new gets (the run gave up) */
    double t_done;
    double c_done;         /* process CPU at t_done */
    bool done;
    pthread_mutex_t mu;
    pthread_cond_t cv;
} kvpar_t;

static void kvpar_finish_one(kvpar_t *p)
{
    long c = atomic_fetch_add(&p->completed, 1) + 1;
    if (c == p->k) {
        double t = bench_now_s();
        double cpu = cpu_ns();
        pthread_mutex_lock(&p->mu);
        p->t_done = t;
        p->c_done = cpu;
        p->done = true;
        pthread_cond_signal(&p->cv);
        pthread_mutex_unlock(&p->mu);
    }
}

static void kvpar_on_get(void *user_data, natsio_token *token);

/* Starts gets until one is in flight (or none is left); a get refused at
 * once counts as an error and the next key is tried. */
static void kvpar_start_next(kvpar_t *p)
{
    char key[64];
    while (!atomic_load(&p->stop)) {
        long i = atomic_fetch_add(&p->next, 1);
        if (i >= p->k)
            return;
        snprintf(key, sizeof key, "k%ld", i);
        natsio_token *t = NULL;
        natsio_status s = natsio_kv_get_async(p->kv, key, &t);
        if (s == NATSIO_OK) {
            atomic_fetch_add(&p->inflight, 1);
            s = natsio_token_on_complete(t, kvpar_on_get, p, NULL);
            if (s == NATSIO_OK)
                return;
            atomic_fetch_sub(&p->inflight, 1);
            natsio_token_free(t);
        }
        atomic_fetch_add(&p->errors, 1);
        kvpar_finish_one(p);
    }
}

/* A get completed (on the library's dispatcher thread): check it, free
 * its token, start the next one. */
static void kvpar_on_get(void *user_data, natsio_token *token)
{
    kvpar_t *p = user_data;
    natsio_kv_entry *e = NULL;
    if (natsio_token_kv_entry(token, &e) != NATSIO_OK ||
        natsio_kv_entry_value_len(e) != (size_t)p->size)
        atomic_fetch_add(&p->errors, 1);
    natsio_kv_entry_free(e);
    natsio_token_free(token);
    kvpar_finish_one(p);
    kvpar_start_next(p);
    atomic_fetch_sub(&p->inflight, 1);
}

/* --par-mode window: a ring of `par` tokens, the oldest waited on from
 * this thread before its slot gets the next get. */
static void kvpar_window(kvpar_t *p, long par, double t0)
{
    natsio_token **ring = calloc((size_t)par, sizeof *ring);
    long head = 0, inflight = 0;
    char key[64];
    if (ring == NULL) {
        fprintf(stderr, "natsio_bench: out of memory\n");
        exit(1);
    }
    for (long i = 0; i < p->k || inflight > 0;) {
        if (i < p->k && inflight < par && !atomic_load(&p->stop)) {
            snprintf(key, sizeof key, "k%ld", i++);
            natsio_token *t = NULL;
            if (natsio_kv_get_async(p->kv, key, &t) != NATSIO_OK) {
                atomic_fetch_add(&p->errors, 1);
                kvpar_finish_one(p);
                continue;
            }
            ring[(head + inflight++) % par] = t;
            continue;
        }
        if (inflight == 0)
            break;
        natsio_token *t = ring[head];
        head = (head + 1) % par;
        inflight--;
        natsio_kv_entry *e = NULL;
        if (natsio_token_wait(t, bench_idle_ms(&O)) != NATSIO_OK ||
            natsio_token_kv_entry(t, &e) != NATSIO_OK ||
            natsio_kv_entry_value_len(e) != (size_t)p->size)
            atomic_fetch_add(&p->errors, 1);
        natsio_kv_entry_free(e);
        natsio_token_free(t);
        kvpar_finish_one(p);
        if (bench_now_s() - t0 > O.max_secs)
            atomic_store(&p->stop, 1);
    }
    free(ring);
}

static void run_kv_par(long size)
{
    err_ctx_t *ctx = err_ctx_new();
    natsio_client *c = NULL;
    natsio_js *js = NULL;
    natsio_kv *kv = NULL;
    char *data = bench_make_payload(size);
    long K = O.kv_k, par = g_par < 1 ? 1 : g_par;
    kvpar_t *p = calloc(1, sizeof *p);
    bool free_p = true;
    char key[64];

    if (p == NULL) {
        fprintf(stderr, "natsio_bench: out of memory\n");
        exit(1);
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    natsio_status s = open_js(ctx, &c, &js);
    if (s == NATSIO_OK)
        s = fresh_bench_kv(js, &kv);
    if (s != NATSIO_OK) {
        emit_failure("kv-par", size, "failed", "bucket", s);
        goto out;
    }
    /* untimed: the K keys, through a window of put tokens */
    {
        natsio_token **ring = calloc((size_t)par, sizeof *ring);
        long head = 0, inflight = 0;
        for (long i = 0; (i < K || inflight > 0) && s == NATSIO_OK;) {
            if (i < K && inflight < par) {
                snprintf(key, sizeof key, "k%ld", i++);
                s = natsio_kv_put_async(kv, key, data, (size_t)size, NULL, &ring[(head + inflight) % par]);
                if (s == NATSIO_OK)
                    inflight++;
                continue;
            }
            natsio_token *t = ring[head];
            head = (head + 1) % par;
            inflight--;
            s = natsio_token_wait(t, bench_idle_ms(&O));
            if (s == NATSIO_OK)
                s = natsio_token_status(t);
            natsio_token_free(t);
        }
        while (inflight > 0) { /* after a failure */
            natsio_token_free(ring[head]);
            head = (head + 1) % par;
            inflight--;
        }
        free(ring);
    }
    if (s != NATSIO_OK) {
        emit_failure("kv-par", size, "failed", "put", s);
        goto out;
    }
    p->kv = kv;
    p->k = K;
    p->size = size;
    atomic_store(&ctx->errors, 0);

    thread_sampler_t sampler;
    long threads_start = bench_proc_status("Threads");
    bool sampling = sampler_start(&sampler, threads_start);
    double c0 = cpu_ns();
    double t0 = bench_now_s();
    if (g_par_mode == PAR_WINDOW) {
        kvpar_window(p, par, t0);
    } else {
        /* par gets in flight; each completion starts the next */
        for (long j = 0; j < par && j < K; j++)
            kvpar_start_next(p);
    }
    long last_seen = -1;
    double last_progress = bench_now_s();
    pthread_mutex_lock(&p->mu);
    while (!p->done && K > 0) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 10 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&p->cv, &p->mu, &ts);
        if (p->done)
            break;
        long done_so_far = atomic_load(&p->completed);
        double t = bench_now_s();
        if (done_so_far != last_seen) {
            last_seen = done_so_far;
            last_progress = t;
        }
        if (t - last_progress > O.idle_timeout || t - t0 > O.max_secs)
            break;
    }
    bool done = p->done || K == 0;
    double t_done = K == 0 ? t0 : p->t_done;
    double c_done = K == 0 ? c0 : p->c_done;
    pthread_mutex_unlock(&p->mu);
    long threads_peak = sampler_finish(&sampler, sampling);

    if (!done) {
        /* Give up: start nothing more; closing the client completes the
         * gets still in flight (their callbacks then run and finish). */
        atomic_store(&p->stop, 1);
        bench_emit_status("kv-par", size, "timeout",
                          bench_now_s() - t0 > O.max_secs ? "max-secs" : "idle-timeout");
        goto out;
    }
    double secs = t_done - t0;
    if (secs <= 0)
        secs = 1e-9;
    long errors = atomic_load(&p->errors) + atomic_load(&ctx->errors);
    printf("scenario=kv-par client=%s size=%ld n=%ld par=%ld secs=%.6f ops_per_s=%.1f "
           "threads_peak=%ld errors=%ld mode=%s threads_start=%ld cpu_ns_per_msg=%.1f",
           CLIENT, size, K, par, secs, (double)K / secs, threads_peak, errors,
           g_par_mode == PAR_WINDOW ? "window" : "callback", threads_start,
           bench_cpu_per_msg(c0, c_done, K));
    bench_end_result_line();
    fflush(stdout);
out:
    atomic_store(&p->stop, 1);
    natsio_kv_free(kv);
    natsio_js_free(js);
    close_client(ctx, c);
    /* Callbacks of tokens that were in flight may still run after the
     * close (they report the closed connection): wait for them before the
     * state goes, and leave it allocated if they never come. */
    for (int i = 0; i < 500 && atomic_load(&p->inflight) > 0; i++) {
        struct timespec d = {0, 10 * 1000000L};
        nanosleep(&d, NULL);
    }
    free_p = atomic_load(&p->inflight) == 0;
    if (free_p) {
        pthread_cond_destroy(&p->cv);
        pthread_mutex_destroy(&p->mu);
        free(p);
    }
    err_ctx_release(ctx);
    free(data);
}

/* ------------------------------------------------------------------------ */
/* js-consume                                                               */

/* The JSON integer after the first "key": in json (after `from`, if found),
 * or -1. */
static long json_long(const char *json, const char *from, const char *key)
{
    char pattern[64];
    const char *p = json;
    if (json == NULL)
        return -1;
    if (from != NULL && (p = strstr(json, from)) == NULL)
        return -1;
    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    p = strstr(p, pattern);
    if (p == NULL)
        return -1;
    return strtol(p + strlen(pattern), NULL, 10);
}

/* What a js-consume run received. The clock stops at the N-th message. */
typedef struct {
    long target;
    long size;
    atomic_long received;
    atomic_long redelivered;
    atomic_long errors;
    double t_done;
    double c_done; /* process CPU at t_done */
    bool done;
    pthread_mutex_t mu;
    pthread_cond_t cv;
} consume_state_t;

/* One consumed message: checked, acked (plain ack, not ack-sync),
 * counted; the N-th stops the clock. */
static void consume_one(consume_state_t *st, const natsio_msg *m)
{
    natsio_js_msg_metadata md;
    if ((long)natsio_msg_data_len(m) != st->size)
        atomic_fetch_add(&st->errors, 1);
    if (natsio_msg_js_metadata(m, &md) == NATSIO_OK && md.num_delivered > 1)
        atomic_fetch_add(&st->redelivered, 1);
    if (natsio_msg_ack_deferred(m) != NATSIO_OK)
        atomic_fetch_add(&st->errors, 1);
    long r = atomic_fetch_add(&st->received, 1) + 1;
    if (r == st->target) {
        double t = bench_now_s();
        double c = cpu_ns();
        pthread_mutex_lock(&st->mu);
        st->t_done = t;
        st->c_done = c;
        st->done = true;
        pthread_cond_signal(&st->cv);
        pthread_mutex_unlock(&st->mu);
    }
}

static void consume_on_msg(void *user_data, const natsio_msg *msg, natsio_status status)
{
    consume_state_t *st = user_data;
    if (msg == NULL) {
        /* The final call: an error ended the consumption early. */
        if (status != NATSIO_DONE)
            atomic_fetch_add(&st->errors, 1);
        return;
    }
    consume_one(st, msg);
}

/* Fills BENCH with n messages through a window of publish tokens. */
static natsio_status fill_bench_stream(natsio_js *js, const char *data, long size, long n)
{
    long window = O.window < 1 ? 1 : O.window;
    natsio_token **ring = calloc((size_t)window, sizeof *ring);
    long head = 0, inflight = 0;
    natsio_status s = NATSIO_OK;
    for (long i = 0; (i < n || inflight > 0) && s == NATSIO_OK;) {
        if (i < n && inflight < window) {
            s = natsio_js_publish_async(js, "bench.js.a", data, (size_t)size, NULL,
                                        &ring[(head + inflight) % window]);
            if (s == NATSIO_OK) {
                inflight++;
                i++;
            }
            continue;
        }
        natsio_token *t = ring[head];
        head = (head + 1) % window;
        inflight--;
        s = natsio_token_wait(t, bench_idle_ms(&O));
        if (s == NATSIO_OK)
            s = natsio_token_status(t);
        natsio_token_free(t);
    }
    while (inflight > 0) {
        natsio_token_free(ring[head]);
        head = (head + 1) % window;
        inflight--;
    }
    free(ring);
    if (s != NATSIO_OK)
        return s;
    char *info = NULL;
    s = natsio_js_stream_info(js, "BENCH", NULL, &info);
    if (s == NATSIO_OK && json_long(info, "\"state\"", "messages") != n)
        s = NATSIO_ERR_JETSTREAM;
    natsio_string_free(info);
    return s;
}

static void run_js_consume(long size)
{
    err_ctx_t *ctx = err_ctx_new();
    natsio_client *c = NULL;
    natsio_js *js = NULL;
    natsio_js_messages *it = NULL;
    char *data = bench_make_payload(size);
    long N = O.js_n;
    consume_state_t st;

    memset(&st, 0, sizeof st);
    st.target = N;
    st.size = size;
    pthread_mutex_init(&st.mu, NULL);
    pthread_cond_init(&st.cv, NULL);

    natsio_status s = open_js(ctx, &c, &js);
    if (s == NATSIO_OK)
        s = fresh_bench_stream(js);
    if (s != NATSIO_OK) {
        emit_failure("js-consume", size, "failed", "stream", s);
        goto out;
    }
    s = fill_bench_stream(js, data, size, N);
    if (s != NATSIO_OK) {
        emit_failure("js-consume", size, "failed", "fill", s);
        goto out;
    }
    s = natsio_js_consumer_create(js, "BENCH",
                                  "{\"durable_name\":\"BENCHC\",\"ack_policy\":\"explicit\","
                                  "\"filter_subject\":\"bench.js.>\"}",
                                  NATSIO_CREATE, NULL);
    if (s != NATSIO_OK) {
        emit_failure("js-consume", size, "failed", "consumer", s);
        goto out;
    }
    atomic_store(&ctx->errors, 0);

    /* The clock starts before consume, which pulls from then on. */
    double c0 = cpu_ns();
    double t0 = bench_now_s();
    s = natsio_js_consume(js, "BENCH", "BENCHC", NULL, &it);
    if (s == NATSIO_OK && g_consume_mode == PUBSUB_CALLBACK)
        s = natsio_js_messages_set_callback(it, consume_on_msg, &st, NULL);
    if (s != NATSIO_OK) {
        emit_failure("js-consume", size, "failed", "consume", s);
        goto out;
    }
    long last_seen = -1;
    double last_progress = t0;
    if (g_consume_mode == PUBSUB_ITERATOR) {
        while (atomic_load(&st.received) < N) {
            natsio_msg *m = NULL;
            s = natsio_js_messages_next(it, 100, &m);
            double t = bench_now_s();
            if (s == NATSIO_OK) {
                consume_one(&st, m);
                natsio_msg_free(m);
                last_progress = t;
            } else if (s != NATSIO_ERR_TIMEOUT) {
                atomic_fetch_add(&st.errors, 1);
                break;
            }
            if (t - last_progress > O.idle_timeout || t - t0 > O.max_secs)
                break;
        }
    } else {
        pthread_mutex_lock(&st.mu);
        while (!st.done && N > 0) {
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
        pthread_mutex_unlock(&st.mu);
    }
    /* CPU where the clock stopped: at the N-th message, else now (gave up) */
    double c1 = cpu_ns();
    natsio_iter_stats is;
    bool have_stats = natsio_js_messages_get_stats(it, &is) == NATSIO_OK;
    /* After stop returns no callback runs: st is no longer shared. */
    natsio_js_messages_stop(it);
    if (st.done)
        c1 = st.c_done;
    long received = atomic_load(&st.received);
    if (received < N && have_stats)
        printf("# js-consume client=%s size=%ld: %ld of %ld received; the iterator's stats: "
               "delivered=%llu pending_items=%llu pending_bytes=%llu dropped=%llu stalls=%llu\n",
               CLIENT, size, received, N, (unsigned long long)is.delivered,
               (unsigned long long)is.pending_items, (unsigned long long)is.pending_bytes,
               (unsigned long long)is.dropped, (unsigned long long)is.stalls);
    double secs = (st.done ? st.t_done : (received > 0 ? last_progress : bench_now_s())) - t0;
    if (N == 0)
        secs = 0;
    if (secs <= 0)
        secs = 1e-9;
    if (received > N)
        received = N;

    /* untimed: wait until the server has every ack */
    long ack_pending = -1;
    double deadline = bench_now_s() + O.idle_timeout;
    for (;;) {
        char *info = NULL;
        if (natsio_js_consumer_info(js, "BENCH", "BENCHC", &info) == NATSIO_OK)
            ack_pending = json_long(info, NULL, "num_ack_pending");
        natsio_string_free(info);
        if (ack_pending == 0 || bench_now_s() > deadline)
            break;
        struct timespec d = {0, 5 * 1000000L};
        nanosleep(&d, NULL);
    }
    long errors = atomic_load(&st.errors) + atomic_load(&ctx->errors);
    printf("scenario=js-consume client=%s size=%ld n=%ld received=%ld secs=%.6f "
           "msgs_per_s=%.1f mb_per_s=%.3f redelivered=%ld ack_pending=%ld errors=%ld mode=%s "
           "cpu_ns_per_msg=%.1f",
           CLIENT, size, N, received, secs, (double)received / secs,
           (double)received * (double)size / 1e6 / secs, atomic_load(&st.redelivered), ack_pending,
           errors, g_consume_mode == PUBSUB_CALLBACK ? "callback" : "iterator",
           bench_cpu_per_msg(c0, c1, received));
    bench_end_result_line();
    fflush(stdout);
out:
    natsio_js_messages_free(it);
    natsio_js_free(js);
    close_client(ctx, c);
    err_ctx_release(ctx);
    pthread_cond_destroy(&st.cv);
    pthread_mutex_destroy(&st.mu);
    free(data);
}

/* ------------------------------------------------------------------------ */
/* obj-put / obj-get                                                        */

/* The spec's object bytes: xorshift32 (x ^= x<<13; x ^= x>>17; x ^= x<<5)
 * from seed 0x2545F491, each state written as 4 little-endian bytes,
 * truncated to n. Every harness generates the same bytes this way. */
static unsigned char *obj_data(size_t n)
{
    unsigned char *b = malloc(n + 4);
    uint32_t x = 0x2545F491u;
    if (b == NULL) {
        fprintf(stderr, "natsio_bench: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < n; i += 4) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        b[i] = (unsigned char)x;
        b[i + 1] = (unsigned char)(x >> 8);
        b[i + 2] = (unsigned char)(x >> 16);
        b[i + 3] = (unsigned char)(x >> 24);
    }
    return b;
}

#define OBJ_NOTE "data: xorshift32 seed 0x2545F491"
/* --obj-mode stream: the objects are the first MiB of obj_data repeated
 * (object i of a run starts at offset i*size of that endless stream), so
 * no buffer of the object's size is ever held; every harness does the same.
 * Pieces of STREAM_PIECE bytes go to natsio_obj_writer_write, and
 * natsio_obj_reader_read reads into one buffer of that size. */
#define OBJ_PATTERN ((size_t)1 << 20)
#define STREAM_PIECE ((size_t)128 * 1024)

/* One of the two runs: one --obj-mb MiB object, or --obj-small x 1 KiB. */
typedef struct {
    const char *name; /* "big" or "small" */
    size_t size;      /* bytes per object */
    long count;
} obj_run_t;

static obj_run_t obj_run_of(const char *which)
{
    obj_run_t r = {NULL, 0, 0};
    if (!strcmp(which, "big")) {
        r.name = "big";
        r.size = (size_t)g_obj_mb << 20;
        r.count = 1;
    } else if (!strcmp(which, "small")) {
        r.name = "small";
        r.size = 1024;
        r.count = g_obj_small;
    }
    return r;
}

static void obj_name(const obj_run_t *r, long i, char *out, size_t cap)
{
    if (!strcmp(r->name, "big"))
        snprintf(out, cap, "big");
    else
        snprintf(out, cap, "small-%ld", i);
}

/* What a run's puts read: all the objects' bytes (memory mode) or the
 * pattern the stream mode repeats; its length in *len. */
static unsigned char *obj_source(const obj_run_t *r, size_t *len)
{
    size_t total = r->size * (size_t)r->count;
    if (g_obj_stream) {
        total = total < 4 ? 4 : total;
        total = total > OBJ_PATTERN ? OBJ_PATTERN : total;
    }
    *len = total;
    return obj_data(total);
}

/* Stores one object: memory mode natsio_obj_put from the buffer; stream
 * mode natsio_obj_writer_open, _write of pieces of the repeated pattern
 * (from offset `off`), _finish. The digest of the stored object goes to
 * `digest` (cap bytes). */
static natsio_status put_one(const natsio_obj *obj, const char *name, const unsigned char *src,
                             size_t src_len, size_t off, size_t size, char *digest, size_t cap)
{
    natsio_obj_info *info = NULL;
    natsio_status s;
    if (!g_obj_stream) {
        s = natsio_obj_put(obj, name, NULL, src + off, size, &info);
    } else {
        natsio_obj_writer *w = NULL;
        s = natsio_obj_writer_open(obj, name, NULL, &w);
        size_t left = size;
        while (s == NATSIO_OK && left > 0) {
            size_t at = off % src_len;
            size_t n = left < STREAM_PIECE ? left : STREAM_PIECE;
            if (n > src_len - at)
                n = src_len - at;
            s = natsio_obj_writer_write(w, src + at, n);
            off += n;
            left -= n;
        }
        if (s == NATSIO_OK)
            s = natsio_obj_writer_finish(w, &info);
        natsio_obj_writer_free(w); /* aborts an unfinished put */
    }
    if (s == NATSIO_OK && digest != NULL)
        snprintf(digest, cap, "%s", natsio_obj_info_digest(info));
    natsio_obj_info_free(info);
    return s;
}

/* Stores the run's objects; returns the failed puts (the status of the
 * last failure in *last). A lost connection or --max-secs ends the loop
 * (*fatal set). */
static long put_objects(const natsio_obj *obj, const obj_run_t *r, const unsigned char *src,
                        size_t src_len, char *digest, size_t cap, double t0, bool *fatal,
                        natsio_status *last)
{
    char name[64];
    long errors = 0;
    *fatal = false;
    *last = NATSIO_OK;
    for (long i = 0; i < r->count; i++) {
        obj_name(r, i, name, sizeof name);
        size_t off = (size_t)i * r->size;
        natsio_status s = put_one(obj, name, src, src_len, off, r->size, digest, cap);
        if (s != NATSIO_OK) {
            errors++;
            *last = s;
            if (s == NATSIO_ERR_CONNECTION_CLOSED) {
                *fatal = true;
                break;
            }
        }
        if (bench_now_s() - t0 > O.max_secs) {
            *fatal = true;
            break;
        }
    }
    return errors;
}

/* Reads one object back with natsio_obj_get + natsio_obj_reader_read until
 * NATSIO_DONE (size, chunk count and digest verified by the library):
 * memory mode into one buffer of the object's size (from the reader's
 * info), stream mode into one STREAM_PIECE buffer, bytes counted. Returns
 * the bytes read, or -1 on any error. */
static long long get_one(const natsio_obj *obj, const char *name, unsigned char *piece)
{
    natsio_obj_reader *rd = NULL;
    natsio_status s = natsio_obj_get(obj, name, false, &rd);
    if (s != NATSIO_OK)
        return -1;
    unsigned char *buf = piece;
    size_t cap = STREAM_PIECE;
    if (!g_obj_stream) {
        /* one byte more than the object, so the read that reports DONE
         * still has room to offer */
        cap = (size_t)natsio_obj_info_size(natsio_obj_reader_info(rd)) + 1;
        buf = malloc(cap);
        if (buf == NULL) {
            natsio_obj_reader_free(rd);
            return -1;
        }
    }
    long long got = 0;
    for (;;) {
        size_t n = 0;
        size_t at = g_obj_stream ? 0 : (size_t)got;
        if (at >= cap) { /* more bytes than the info's size */
            s = NATSIO_ERR_DIGEST_MISMATCH;
            break;
        }
        s = natsio_obj_reader_read(rd, buf + at, cap - at, &n, bench_idle_ms(&O));
        if (s != NATSIO_OK)
            break;
        got += (long long)n;
    }
    if (s != NATSIO_DONE)
        got = -1;
    if (buf != piece)
        free(buf);
    natsio_obj_reader_free(rd);
    return got;
}

static long get_objects(const natsio_obj *obj, const obj_run_t *r, double t0, bool *fatal)
{
    char name[64];
    long errors = 0;
    unsigned char *piece = malloc(STREAM_PIECE);
    *fatal = false;
    for (long i = 0; i < r->count; i++) {
        obj_name(r, i, name, sizeof name);
        if (get_one(obj, name, piece) != (long long)r->size)
            errors++;
        if (bench_now_s() - t0 > O.max_secs) {
            *fatal = true;
            break;
        }
    }
    free(piece);
    return errors;
}

/* Bucket BENCHOBJ deleted and created (file storage); for obj-get the
 * run's objects are stored (untimed). */
static natsio_status prepare_obj(const char *scenario, const obj_run_t *r, const char **what)
{
    err_ctx_t *ctx = err_ctx_new();
    natsio_client *c = NULL;
    natsio_js *js = NULL;
    natsio_obj *obj = NULL;
    unsigned char *src = NULL;
    char digest[128] = "";
    *what = "connect";
    natsio_status s = open_js(ctx, &c, &js);
    if (s == NATSIO_OK) {
        *what = "delete_bucket";
        s = natsio_js_obj_delete(js, "BENCHOBJ");
        if (s == NATSIO_ERR_BUCKET_NOT_FOUND)
            s = NATSIO_OK;
    }
    if (s == NATSIO_OK) {
        *what = "create_bucket";
        s = natsio_js_obj_create(js, "{\"bucket\":\"BENCHOBJ\",\"storage\":\"file\"}",
                                 NATSIO_CREATE, &obj);
    }
    if (s == NATSIO_OK && !strcmp(scenario, "obj-get")) {
        size_t src_len = 0;
        bool fatal = false;
        *what = "put";
        src = obj_source(r, &src_len);
        natsio_status last = NATSIO_OK;
        long errors = put_objects(obj, r, src, src_len, digest, sizeof digest,
                                  bench_now_s(), &fatal, &last);
        if (errors > 0 || fatal)
            s = last != NATSIO_OK ? last : NATSIO_ERR_TIMEOUT; /* else: --max-secs */
        else if (!strcmp(r->name, "big"))
            printf("# note client=%s obj: object big digest=%s mode=%s (" OBJ_NOTE ")\n",
                   CLIENT, digest, g_obj_stream ? "stream" : "memory");
    }
    free(src);
    natsio_obj_free(obj);
    natsio_js_free(js);
    close_client(ctx, c);
    err_ctx_release(ctx);
    return s;
}

/* One measured run in a fresh process (this program re-run with
 * --obj-child SCENARIO:big|small), so VmHWM is that of the one run. */
static int obj_child(const char *spec)
{
    char scenario[32];
    const char *colon = strchr(spec, ':');
    if (colon == NULL || (size_t)(colon - spec) >= sizeof scenario) {
        fprintf(stderr, "natsio_bench: bad --obj-child: %s\n", spec);
        return 2;
    }
    memcpy(scenario, spec, (size_t)(colon - spec));
    scenario[colon - spec] = '\0';
    obj_run_t r = obj_run_of(colon + 1);
    bool put = !strcmp(scenario, "obj-put");
    if (r.name == NULL || (!put && strcmp(scenario, "obj-get"))) {
        fprintf(stderr, "natsio_bench: bad --obj-child: %s\n", spec);
        return 2;
    }
    size_t src_len = 0;
    unsigned char *src = put ? obj_source(&r, &src_len) : NULL;
    err_ctx_t *ctx = err_ctx_new();
    natsio_client *c = NULL;
    natsio_js *js = NULL;
    natsio_obj *obj = NULL;
    char digest[128] = "";
    natsio_status s = open_js(ctx, &c, &js);
    if (s != NATSIO_OK) {
        emit_failure(scenario, (long)r.size, "failed", "connect", s);
        goto out;
    }
    s = natsio_js_obj_bind(js, "BENCHOBJ", &obj);
    if (s != NATSIO_OK) {
        emit_failure(scenario, (long)r.size, "failed", "bucket", s);
        goto out;
    }
    atomic_store(&ctx->errors, 0);
    long rss_start_kb = bench_proc_status("VmRSS");
    double cpu0 = cpu_ns();
    bool fatal = false;
    double t0 = bench_now_s();
    natsio_status last = NATSIO_OK;
    long errors = put ? put_objects(obj, &r, src, src_len, digest, sizeof digest, t0, &fatal, &last)
                      : get_objects(obj, &r, t0, &fatal);
    double secs = bench_now_s() - t0;
    double cpu = cpu_ns() - cpu0;
    if (fatal) {
        bench_emit_status(scenario, (long)r.size, "timeout", "max-secs_or_connection_closed");
        goto out;
    }
    long hwm_kb = bench_proc_status("VmHWM");
    if (put && !strcmp(r.name, "big"))
        printf("# note client=%s obj: object big digest=%s mode=%s (" OBJ_NOTE ")\n", CLIENT,
               digest, g_obj_stream ? "stream" : "memory");
    double total = (double)r.size * (double)r.count;
    if (secs <= 0)
        secs = 1e-9;
    printf("scenario=%s client=%s size=%zu n=%ld secs=%.6f mb_per_s=%.3f rss_peak_mb=%.1f "
           "rss_start_mb=%.1f mode=%s cpu_s=%.3f errors=%ld",
           scenario, CLIENT, r.size, r.count, secs, total / 1e6 / secs,
           (double)hwm_kb * 1024 / 1e6, (double)rss_start_kb * 1024 / 1e6,
           g_obj_stream ? "stream" : "memory", cpu / 1e9, errors + atomic_load(&ctx->errors));
    bench_end_result_line();
out:
    fflush(stdout);
    natsio_obj_free(obj);
    natsio_js_free(js);
    close_client(ctx, c);
    err_ctx_release(ctx);
    free(src);
    return 0;
}

/* Runs `self --obj-child SCENARIO:WHICH ...` and copies its output; true
 * when it printed the run's line. */
static bool spawn_obj_child(const char *scenario, const char *which)
{
    char self[4096], mb[32], small[32], idle[32], maxs[32], child[64];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0)
        return false;
    self[len] = '\0';
    snprintf(mb, sizeof mb, "%ld", g_obj_mb);
    snprintf(small, sizeof small, "%ld", g_obj_small);
    snprintf(idle, sizeof idle, "%g", O.idle_timeout);
    snprintf(maxs, sizeof maxs, "%g", O.max_secs);
    snprintf(child, sizeof child, "%s:%s", scenario, which);
    char *argv[] = {self, "--url", (char *)O.url, "--obj-mb", mb, "--obj-small", small,
                    "--obj-mode", g_obj_stream ? "stream" : "memory", "--idle-timeout", idle,
                    "--max-secs", maxs, "--obj-child", child, NULL};
    int fd[2];
    if (pipe(fd) != 0)
        return false;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return false;
    }
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        execv(self, argv);
        _exit(127);
    }
    close(fd[1]);
    char want[64];
    snprintf(want, sizeof want, "scenario=%s ", scenario);
    bool found = false;
    FILE *f = fdopen(fd[0], "r");
    char line[1024];
    while (f != NULL && fgets(line, sizeof line, f)) {
        fputs(line, stdout);
        if (!strncmp(line, want, strlen(want)))
            found = true;
    }
    if (f != NULL)
        fclose(f);
    else
        close(fd[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    fflush(stdout);
    return found;
}

/* Each run (the --obj-mb object, then --obj-small objects of 1 KiB): the
 * bucket prepared here, the measured part in a child process. */
static void run_obj(const char *scenario)
{
    static const char *const which[] = {"big", "small"};
    for (int k = 0; k < 2; k++) {
        obj_run_t r = obj_run_of(which[k]);
        const char *what = "";
        natsio_status s = prepare_obj(scenario, &r, &what);
        if (s != NATSIO_OK) {
            emit_failure(scenario, (long)r.size, "failed", what, s);
            continue;
        }
        if (!spawn_obj_child(scenario, which[k]))
            bench_emit_status(scenario, (long)r.size, "failed", "child:no_result_line");
    }
}

/* ------------------------------------------------------------------------ */
/* main                                                                     */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: natsio_bench [--url URL] [--scenarios pub,pubsub,req,jspub,"
            "jspub-sync,kv,kv-par,js-consume,obj-put,obj-get,svc,pub4]\n"
            "                    [--sizes 16,1024] [--n N] [--js-n N] [--k K] "
            "[--kv-k K]\n"
            "                    [--window W] [--par P] [--obj-mb MiB] "
            "[--obj-small N]\n"
            "                    [--warmup W] [--idle-timeout S] [--max-secs S]\n"
            "                    [--threads T (pub4, default 4)] "
            "[--pubsub-mode callback|iterator]\n"
            "                    [--par-mode callback|window (kv-par)] "
            "[--consume-mode callback|iterator (js-consume)]\n"
            "                    [--obj-mode memory|stream (obj-put, obj-get)]\n");
}

/* callback|iterator, or exit(2) naming the option */
static pubsub_mode_t parse_mode(const char *name, const char *v)
{
    if (!strcmp(v, "callback")) return PUBSUB_CALLBACK;
    if (!strcmp(v, "iterator")) return PUBSUB_ITERATOR;
    fprintf(stderr, "natsio_bench: bad value for %s: %s\n", name, v);
    exit(2);
}

/* the spec's --par, --obj-mb, --obj-small; and --threads, --pubsub-mode,
 * --par-mode, --consume-mode */
static bool parse_natsio_option(const char *name, const char *v)
{
    if (!strcmp(name, "--par")) g_par = bench_parse_long(name, v);
    else if (!strcmp(name, "--obj-mb")) g_obj_mb = bench_parse_long(name, v);
    else if (!strcmp(name, "--obj-small")) g_obj_small = bench_parse_long(name, v);
    else if (!strcmp(name, "--threads")) g_threads = bench_parse_long(name, v);
    else if (!strcmp(name, "--pubsub-mode")) g_pubsub_mode = parse_mode(name, v);
    else if (!strcmp(name, "--consume-mode")) g_consume_mode = parse_mode(name, v);
    else if (!strcmp(name, "--obj-child")) g_obj_child = v;
    else if (!strcmp(name, "--obj-mode")) {
        if (!strcmp(v, "memory")) g_obj_stream = false;
        else if (!strcmp(v, "stream")) g_obj_stream = true;
        else {
            fprintf(stderr, "natsio_bench: bad value for %s: %s\n", name, v);
            exit(2);
        }
    }
    else if (!strcmp(name, "--par-mode")) {
        if (!strcmp(v, "callback")) g_par_mode = PAR_CALLBACK;
        else if (!strcmp(v, "window")) g_par_mode = PAR_WINDOW;
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
    free(O.scenarios); /* the spec's full list by default */
    O.scenarios = strdup("pub,pubsub,req,jspub,jspub-sync,kv,kv-par,js-consume,"
                         "obj-put,obj-get,svc");
    int rc = bench_parse_args(argc, argv, &O, usage, parse_natsio_option);
    if (rc >= 0)
        return rc;
    if (g_threads < 1) g_threads = 1;
    if (g_obj_child != NULL) {
        rc = obj_child(g_obj_child);
        bench_options_free(&O);
        return rc;
    }

    long sizes[64];
    int nsizes = bench_parse_sizes(&O, sizes, 64);

    printf("# client=%s version=%s url=%s\n", CLIENT, natsio_version(), O.url);
    fflush(stdout);

    char *tmp = strdup(O.scenarios), *save = NULL;
    for (char *sc = strtok_r(tmp, ",", &save); sc;
         sc = strtok_r(NULL, ",", &save)) {
        if (!strcmp(sc, "obj-put") || !strcmp(sc, "obj-get")) {
            run_obj(sc); /* sizes fixed by the spec, not --sizes */
            continue;
        }
        for (int j = 0; j < nsizes; j++) {
            long size = sizes[j];
            if (!strcmp(sc, "pub")) run_pub(size, 0);
            else if (!strcmp(sc, "pub4")) run_pub(size, g_threads);
            else if (!strcmp(sc, "pubsub")) run_pubsub(size);
            else if (!strcmp(sc, "req")) run_req(size);
            else if (!strcmp(sc, "svc")) run_svc(size);
            else if (!strcmp(sc, "jspub")) run_jspub(size);
            else if (!strcmp(sc, "jspub-sync")) run_jspub_sync(size);
            else if (!strcmp(sc, "kv")) run_kv(size);
            else if (!strcmp(sc, "kv-par")) run_kv_par(size);
            else if (!strcmp(sc, "js-consume")) run_js_consume(size);
            else bench_emit_status(sc, size, "unsupported", NULL);
        }
    }
    free(tmp);
    bench_options_free(&O);
    return 0;
}
