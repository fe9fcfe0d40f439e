/*
 * natsc_bench: peer benchmark harness over nats.c (the official C client).
 *
 * Implements the CLI, scenarios, clock boundaries and output lines fixed by
 * the project's benchmark spec (shared/bench-spec.md), with client=nats.c.
 * Build: bench/peers/natsc/build.sh
 *
 * Every line with a message/operation count (pub, pubsub, req, jspub,
 * jspub-sync, kv-put, kv-get, kv-par, js-consume) has cpu_ns_per_msg: user+sys
 * CPU of the whole process (getrusage RUSAGE_SELF, nats.c's threads included)
 * over exactly the timed region, divided by the line's messages/operations.
 * Every result line ends with rss_peak_kb (VmHWM, bench_end_result_line).
 *
 * Scenarios nats.c 3.4 has no API for (each says so in a `# note=` line):
 *   kv-par      no asynchronous KV get: the row is K sequential kvStore_Get
 *               calls (par=1)
 *   js-consume  no continuous-pull (consume) API: a natsSubscription_Fetch
 *               loop on a pull subscription, natsMsg_Ack per message
 *   obj-put/obj-get  no Object Store: status=failed error=unsupported lines
 */
#define _GNU_SOURCE
#include <nats/nats.h>

#include "../../common/bench_common.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CLIENT "nats.c"

/* ------------------------------------------------------------------------ */
/* options                                                                  */

static bench_options O;
/* spec options not (yet) in bench_common, parsed through parse_extra */
static long g_par = 256;        /* --par (kv-par: nats.c runs it at 1) */
static long g_obj_mb = 64;      /* --obj-mb */
static long g_obj_small = 1000; /* --obj-small */

/* ------------------------------------------------------------------------ */
/* helpers                                                                  */

static void emit_failure(const char *scen, long size, const char *status,
                         const char *what, natsStatus s)
{
    bench_emit_failure(scen, size, status, what, natsStatus_GetText(s),
                       nats_GetLastError(NULL));
}

/* ------------------------------------------------------------------------ */
/* asynchronous error accounting                                            */

/*
 * Each scenario run gets its own context: nats.c delivers connection events
 * on its own thread, possibly after natsConnection_Destroy has returned, so a
 * late event of an earlier run must not be counted in the next one. Contexts
 * are freed only at exit, after nats_CloseAndWait.
 */
typedef struct ectx {
    atomic_long errs;     /* slow consumer, async errors, disconnects */
    atomic_int closing;   /* set while we close connections ourselves */
    struct ectx *next;
} ectx_t;

static ectx_t *g_ctx;     /* current scenario run */
static ectx_t *g_all;

#define ASYNC_ERRS() atomic_load(&g_ctx->errs)
#define ASYNC_RESET() atomic_store(&g_ctx->errs, 0)

static void on_err(natsConnection *nc, natsSubscription *sub, natsStatus err,
                   void *closure)
{
    (void)nc; (void)sub; (void)err;
    ectx_t *c = closure;
    if (!atomic_load(&c->closing))
        atomic_fetch_add(&c->errs, 1);
}

static void on_disconnected(natsConnection *nc, void *closure)
{
    (void)nc;
    ectx_t *c = closure;
    if (!atomic_load(&c->closing))
        atomic_fetch_add(&c->errs, 1);
}

static void reset_async(void)
{
    ectx_t *c = calloc(1, sizeof *c);
    if (c == NULL) {
        fprintf(stderr, "natsc_bench: out of memory\n");
        exit(1);
    }
    c->next = g_all;
    g_all = c;
    g_ctx = c;
}

static void free_ctxs(void)
{
    while (g_all) {
        ectx_t *n = g_all->next;
        free(g_all);
        g_all = n;
    }
    g_ctx = NULL;
}

static natsStatus connect_nc_opt(natsConnection **nc, bool send_asap)
{
    natsOptions *opts = NULL;
    natsStatus s = natsOptions_Create(&opts);
    if (s == NATS_OK)
        s = natsOptions_SetURL(opts, O.url);
    if (s == NATS_OK && send_asap)
        s = natsOptions_SetSendAsap(opts, true);
    if (s == NATS_OK)
        s = natsOptions_SetErrorHandler(opts, on_err, g_ctx);
    if (s == NATS_OK)
        s = natsOptions_SetDisconnectedCB(opts, on_disconnected, g_ctx);
    if (s == NATS_OK)
        s = natsConnection_Connect(nc, opts);
    natsOptions_Destroy(opts);
    return s;
}

static natsStatus connect_nc(natsConnection **nc)
{
    return connect_nc_opt(nc, false);
}

/*
 * nats.c buffers publishes and its flusher thread coalesces writes for about
 * a millisecond, so a plain responder adds ~1 ms to every reply. nats.c's own
 * documentation of natsOptions_SetSendAsap names exactly this case (a
 * connection used solely to send replies), so the req responder uses it.
 * NATSC_RESPONDER_SEND_ASAP=0 restores the all-defaults responder.
 */
static bool responder_send_asap(void)
{
    const char *e = getenv("NATSC_RESPONDER_SEND_ASAP");
    return !(e != NULL && strcmp(e, "0") == 0);
}

static void close_nc(natsConnection *nc)
{
    if (nc == NULL)
        return;
    atomic_store(&g_ctx->closing, 1);
    natsConnection_Close(nc);
    natsConnection_Destroy(nc);
}

/* ------------------------------------------------------------------------ */
/* pub                                                                      */

static void run_pub(long size)
{
    natsConnection *nc = NULL;
    natsStatus s;
    char *data = bench_make_payload(size);
    long errors = 0;

    reset_async();
    s = connect_nc(&nc);
    if (s != NATS_OK) {
        emit_failure("pub", size, "failed", "connect", s);
        goto out;
    }
    bool deadline_ok = true;
    double c0 = bench_cpu_ns();
    double t0 = bench_now_s();
    for (long i = 0; i < O.n; i++) {
        if (natsConnection_Publish(nc, "bench.pub", data, (int)size) != NATS_OK)
            errors++;
        if ((i & 4095) == 4095 && bench_now_s() - t0 > O.max_secs) {
            deadline_ok = false;
            break;
        }
    }
    if (!deadline_ok) {
        bench_emit_status("pub", size, "timeout", "max-secs");
        goto out;
    }
    s = natsConnection_FlushTimeout(nc, bench_idle_ms(&O));
    double t1 = bench_now_s();
    double c1 = bench_cpu_ns();
    if (s != NATS_OK) {
        emit_failure("pub", size, s == NATS_TIMEOUT ? "timeout" : "failed",
                     "flush", s);
        goto out;
    }
    errors += ASYNC_ERRS();
    double secs = t1 - t0;
    printf("scenario=pub client=%s size=%ld n=%ld secs=%.6f msgs_per_s=%.1f "
           "mb_per_s=%.3f errors=%ld flush=pingpong cpu_ns_per_msg=%.1f",
           CLIENT, size, O.n, secs, (double)O.n / secs,
           (double)O.n * (double)size / 1e6 / secs, errors, bench_cpu_per_msg(c0, c1, O.n));
    bench_end_result_line();
    fflush(stdout);
out:
    close_nc(nc);
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
    pthread_mutex_t mu;
    pthread_cond_t cv;
} ps_state_t;

static void ps_on_msg(natsConnection *nc, natsSubscription *sub, natsMsg *msg,
                      void *closure)
{
    (void)nc; (void)sub;
    ps_state_t *st = closure;
    if (natsMsg_GetDataLength(msg) != st->size)
        atomic_fetch_add(&st->badsize, 1);
    natsMsg_Destroy(msg);
    long r = atomic_fetch_add(&st->received, 1) + 1;
    if (r == st->target) {
        double t = bench_now_s();
        double c = bench_cpu_ns();
        pthread_mutex_lock(&st->mu);
        st->t_done = t;
        st->c_done = c;
        pthread_cond_signal(&st->cv);
        pthread_mutex_unlock(&st->mu);
    }
}

static void run_pubsub(long size)
{
    natsConnection *snc = NULL, *pnc = NULL;
    natsSubscription *sub = NULL;
    natsStatus s;
    char *data = bench_make_payload(size);
    long errors = 0;
    ps_state_t st;

    memset(&st, 0, sizeof st);
    st.target = O.n;
    st.size = size;
    pthread_mutex_init(&st.mu, NULL);
    pthread_cond_init(&st.cv, NULL);

    reset_async();
    s = connect_nc(&snc);
    if (s == NATS_OK)
        s = connect_nc(&pnc);
    if (s != NATS_OK) {
        emit_failure("pubsub", size, "failed", "connect", s);
        goto out;
    }
    s = natsConnection_Subscribe(&sub, snc, "bench.ps", ps_on_msg, &st);
    if (s == NATS_OK) /* barrier: SUB registered once the PONG is back */
        s = natsConnection_FlushTimeout(snc, bench_idle_ms(&O));
    if (s != NATS_OK) {
        emit_failure("pubsub", size, "failed", "subscribe", s);
        goto out;
    }

    double c0 = bench_cpu_ns();
    double t0 = bench_now_s();
    for (long i = 0; i < O.n; i++) {
        if (natsConnection_Publish(pnc, "bench.ps", data, (int)size) != NATS_OK)
            errors++;
        if ((i & 4095) == 4095 && bench_now_s() - t0 > O.max_secs)
            break;
    }
    /* make sure everything buffered goes out; the clock stops on receipt */
    if (natsConnection_FlushTimeout(pnc, bench_idle_ms(&O)) != NATS_OK)
        errors++;

    long last_seen = -1;
    double last_progress = bench_now_s();
    bool done = false;
    pthread_mutex_lock(&st.mu);
    for (;;) {
        if (atomic_load(&st.received) >= st.target) {
            done = true;
            break;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 10 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&st.cv, &st.mu, &ts);
        long r = atomic_load(&st.received);
        double t = bench_now_s();
        if (r != last_seen) {
            last_seen = r;
            last_progress = t;
        }
        if (r >= st.target) {
            done = true;
            break;
        }
        if (t - last_progress > O.idle_timeout || t - t0 > O.max_secs)
            break;
    }
    double t_done = st.t_done;
    double c_done = st.c_done;
    pthread_mutex_unlock(&st.mu);
    double c1 = done ? c_done : bench_cpu_ns();

    long received = atomic_load(&st.received);
    if (received > O.n)
        received = O.n;
    double t_end = done ? t_done : last_progress;
    double secs = t_end - t0;
    if (secs <= 0)
        secs = 1e-9;
    errors += ASYNC_ERRS() + atomic_load(&st.badsize);
    printf("scenario=pubsub client=%s size=%ld n=%ld received=%ld lost=%ld "
           "secs=%.6f msgs_per_s=%.1f mb_per_s=%.3f errors=%ld cpu_ns_per_msg=%.1f",
           CLIENT, size, O.n, received, O.n - received, secs,
           (double)received / secs, (double)received * (double)size / 1e6 / secs,
           errors, bench_cpu_per_msg(c0, c1, received));
    bench_end_result_line();
    fflush(stdout);
out:
    if (sub) {
        natsSubscription_Unsubscribe(sub);
        natsSubscription_Destroy(sub);
    }
    close_nc(pnc);
    close_nc(snc);
    pthread_cond_destroy(&st.cv);
    pthread_mutex_destroy(&st.mu);
    free(data);
}

/* ------------------------------------------------------------------------ */
/* req                                                                      */

static void req_on_msg(natsConnection *nc, natsSubscription *sub, natsMsg *msg,
                       void *closure)
{
    (void)sub; (void)closure;
    const char *reply = natsMsg_GetReply(msg);
    if (reply != NULL)
        natsConnection_Publish(nc, reply, natsMsg_GetData(msg),
                               natsMsg_GetDataLength(msg));
    natsMsg_Destroy(msg);
}

static void run_req(long size)
{
    natsConnection *rnc = NULL, *qnc = NULL;
    natsSubscription *sub = NULL;
    natsStatus s;
    char *data = bench_make_payload(size);
    double *lat = calloc((size_t)(O.k > 0 ? O.k : 1), sizeof(double));
    long errors = 0, nlat = 0;
    bool timed_out = false;

    reset_async();
    s = connect_nc_opt(&rnc, responder_send_asap());
    if (s == NATS_OK)
        s = connect_nc(&qnc);
    if (s != NATS_OK) {
        emit_failure("req", size, "failed", "connect", s);
        goto out;
    }
    s = natsConnection_Subscribe(&sub, rnc, "bench.req", req_on_msg, NULL);
    if (s == NATS_OK)
        s = natsConnection_FlushTimeout(rnc, bench_idle_ms(&O));
    if (s != NATS_OK) {
        emit_failure("req", size, "failed", "subscribe", s);
        goto out;
    }
    for (long i = 0; i < O.warmup; i++) {
        natsMsg *m = NULL;
        natsConnection_Request(&m, qnc, "bench.req", data, (int)size, bench_idle_ms(&O));
        natsMsg_Destroy(m);
    }
    ASYNC_RESET();

    double c0 = bench_cpu_ns();
    double t0 = bench_now_s();
    for (long i = 0; i < O.k; i++) {
        natsMsg *m = NULL;
        double a = bench_now_s();
        s = natsConnection_Request(&m, qnc, "bench.req", data, (int)size,
                                   bench_idle_ms(&O));
        double b = bench_now_s();
        if (s != NATS_OK)
            errors++;
        else {
            if (natsMsg_GetDataLength(m) != size)
                errors++;
            lat[nlat++] = (b - a) * 1e6;
        }
        natsMsg_Destroy(m);
        if (b - t0 > O.max_secs) {
            timed_out = true;
            break;
        }
    }
    double secs = bench_now_s() - t0;
    double c1 = bench_cpu_ns();
    if (timed_out) {
        bench_emit_status("req", size, "timeout", "max-secs");
        goto out;
    }
    errors += ASYNC_ERRS();
    bench_latency L = bench_latency_stats(lat, nlat);
    printf("scenario=req client=%s size=%ld n=%ld secs=%.6f msgs_per_s=%.1f "
           "mean_us=%.1f p50_us=%.1f p99_us=%.1f errors=%ld cpu_ns_per_msg=%.1f",
           CLIENT, size, O.k, secs, (double)O.k / secs, L.mean, L.p50, L.p99,
           errors, bench_cpu_per_msg(c0, c1, O.k));
    bench_end_result_line();
    fflush(stdout);
out:
    if (sub) {
        natsSubscription_Unsubscribe(sub);
        natsSubscription_Destroy(sub);
    }
    close_nc(qnc);
    close_nc(rnc);
    free(lat);
    free(data);
}

/* ------------------------------------------------------------------------ */
/* JetStream helpers                                                        */

static natsStatus fresh_bench_stream(jsCtx *js)
{
    jsErrCode jerr = 0;
    natsStatus s = js_DeleteStream(js, "BENCH", NULL, &jerr);
    if (s != NATS_OK && s != NATS_NOT_FOUND)
        return s;

    jsStreamConfig cfg;
    jsStreamInfo *si = NULL;
    const char *subjects[] = {"bench.js.>"};
    jsStreamConfig_Init(&cfg);
    cfg.Name = "BENCH";
    cfg.Subjects = subjects;
    cfg.SubjectsLen = 1;
    cfg.Storage = js_FileStorage;
    cfg.Replicas = 1;
    cfg.Retention = js_LimitsPolicy;
    s = js_AddStream(&si, js, &cfg, NULL, &jerr);
    jsStreamInfo_Destroy(si);
    return s;
}

/* ------------------------------------------------------------------------ */
/* jspub                                                                    */

typedef struct {
    atomic_long acked;
    atomic_long failed;
    _Atomic double t_last;
} jsp_state_t;

static void jsp_on_ack(jsCtx *js, natsMsg *msg, jsPubAck *pa, jsPubAckErr *pae,
                       void *closure)
{
    (void)js;
    jsp_state_t *st = closure;
    if (pa != NULL && pae == NULL)
        atomic_fetch_add(&st->acked, 1);
    else
        atomic_fetch_add(&st->failed, 1);
    atomic_store(&st->t_last, bench_now_s());
    natsMsg_Destroy(msg);
}

static void run_jspub(long size)
{
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    jsOptions jo;
    natsStatus s;
    char *data = bench_make_payload(size);
    long errors = 0, sent = 0;
    jsp_state_t st;

    memset(&st, 0, sizeof st);
    reset_async();
    s = connect_nc(&nc);
    if (s != NATS_OK) {
        emit_failure("jspub", size, "failed", "connect", s);
        goto out;
    }
    jsOptions_Init(&jo);
    jo.Wait = bench_idle_ms(&O);
    jo.PublishAsync.MaxPending = O.window;
    jo.PublishAsync.AckHandler = jsp_on_ack;
    jo.PublishAsync.AckHandlerClosure = &st;
    /* a publish that cannot get a window slot waits up to the idle timeout */
    jo.PublishAsync.StallWait = bench_idle_ms(&O);
    s = natsConnection_JetStream(&js, nc, &jo);
    if (s == NATS_OK)
        s = fresh_bench_stream(js);
    if (s != NATS_OK) {
        emit_failure("jspub", size, "failed", "stream", s);
        goto out;
    }
    ASYNC_RESET();

    double c0 = bench_cpu_ns();
    double t0 = bench_now_s();
    atomic_store(&st.t_last, t0);
    bool stalled = false;
    for (long i = 0; i < O.js_n; i++) {
        s = js_PublishAsync(js, "bench.js.a", data, (int)size, NULL);
        if (s != NATS_OK) {
            errors++;
            if (s == NATS_TIMEOUT) { /* no window slot for idle-timeout */
                stalled = true;
                break;
            }
            continue;
        }
        sent++;
        if ((i & 1023) == 1023 && bench_now_s() - t0 > O.max_secs) {
            stalled = true;
            break;
        }
    }
    jsPubOptions po;
    jsPubOptions_Init(&po);
    double left = O.max_secs - (bench_now_s() - t0);
    po.MaxWait = (int64_t)((left > O.idle_timeout ? left : O.idle_timeout) * 1000);
    s = js_PublishAsyncComplete(js, &po);
    double t1 = bench_now_s();
    double c1 = bench_cpu_ns();
    long acked = atomic_load(&st.acked);
    if (s != NATS_OK || acked < O.js_n) {
        /* ended without all acks: time = last observed ack */
        t1 = atomic_load(&st.t_last);
        (void)stalled;
    }
    errors += atomic_load(&st.failed) + ASYNC_ERRS();
    double secs = t1 - t0;
    if (secs <= 0)
        secs = 1e-9;
    printf("scenario=jspub client=%s size=%ld n=%ld acked=%ld unacked=%ld "
           "secs=%.6f msgs_per_s=%.1f mb_per_s=%.3f window=%ld errors=%ld "
           "cpu_ns_per_msg=%.1f",
           CLIENT, size, O.js_n, acked, O.js_n - acked, secs,
           (double)acked / secs, (double)acked * (double)size / 1e6 / secs,
           O.window, errors, bench_cpu_per_msg(c0, c1, acked));
    bench_end_result_line();
    fflush(stdout);
out:
    if (js) {
        /* drop anything still pending before tearing down */
        natsMsgList pending;
        if (js_PublishAsyncGetPendingList(&pending, js) == NATS_OK)
            natsMsgList_Destroy(&pending);
        jsCtx_Destroy(js);
    }
    close_nc(nc);
    free(data);
}

/* ------------------------------------------------------------------------ */
/* jspub-sync                                                               */

static void run_jspub_sync(long size)
{
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    jsOptions jo;
    natsStatus s;
    char *data = bench_make_payload(size);
    double *lat = calloc((size_t)(O.k > 0 ? O.k : 1), sizeof(double));
    long errors = 0, nlat = 0;
    bool timed_out = false;

    reset_async();
    s = connect_nc(&nc);
    if (s != NATS_OK) {
        emit_failure("jspub-sync", size, "failed", "connect", s);
        goto out;
    }
    jsOptions_Init(&jo);
    jo.Wait = bench_idle_ms(&O);
    s = natsConnection_JetStream(&js, nc, &jo);
    if (s == NATS_OK)
        s = fresh_bench_stream(js);
    if (s != NATS_OK) {
        emit_failure("jspub-sync", size, "failed", "stream", s);
        goto out;
    }
    for (long i = 0; i < O.warmup; i++) {
        jsPubAck *pa = NULL;
        js_Publish(&pa, js, "bench.js.a", data, (int)size, NULL, NULL);
        jsPubAck_Destroy(pa);
    }
    ASYNC_RESET();

    double c0 = bench_cpu_ns();
    double t0 = bench_now_s();
    for (long i = 0; i < O.k; i++) {
        jsPubAck *pa = NULL;
        jsErrCode jerr = 0;
        double a = bench_now_s();
        s = js_Publish(&pa, js, "bench.js.a", data, (int)size, NULL, &jerr);
        double b = bench_now_s();
        if (s != NATS_OK) {
            errors++;
        } else
            lat[nlat++] = (b - a) * 1e6;
        jsPubAck_Destroy(pa);
        if (b - t0 > O.max_secs) {
            timed_out = true;
            break;
        }
    }
    double secs = bench_now_s() - t0;
    double c1 = bench_cpu_ns();
    if (timed_out) {
        bench_emit_status("jspub-sync", size, "timeout", "max-secs");
        goto out;
    }
    errors += ASYNC_ERRS();
    bench_latency L = bench_latency_stats(lat, nlat);
    printf("scenario=jspub-sync client=%s size=%ld n=%ld secs=%.6f "
           "msgs_per_s=%.1f mean_us=%.1f p50_us=%.1f p99_us=%.1f errors=%ld "
           "cpu_ns_per_msg=%.1f",
           CLIENT, size, O.k, secs, (double)O.k / secs, L.mean, L.p50, L.p99,
           errors, bench_cpu_per_msg(c0, c1, O.k));
    bench_end_result_line();
    fflush(stdout);
out:
    jsCtx_Destroy(js);
    close_nc(nc);
    free(lat);
    free(data);
}

/* ------------------------------------------------------------------------ */
/* kv                                                                       */

static bool g_kv_note_printed;
static bool g_req_note_printed;

/* A JetStream context on nc and bucket BENCHKV deleted and created
 * (history 1, file storage). */
static natsStatus fresh_kv(natsConnection *nc, jsCtx **js, kvStore **kv)
{
    jsOptions jo;
    jsOptions_Init(&jo);
    jo.Wait = bench_idle_ms(&O);
    natsStatus s = natsConnection_JetStream(js, nc, &jo);
    if (s == NATS_OK) {
        s = js_DeleteKeyValue(*js, "BENCHKV");
        if (s == NATS_NOT_FOUND)
            s = NATS_OK;
    }
    if (s == NATS_OK) {
        kvConfig kc;
        kvConfig_Init(&kc);
        kc.Bucket = "BENCHKV";
        kc.History = 1;
        kc.StorageType = js_FileStorage;
        /* kvConfig (nats.c 3.4) has no AllowDirect field; js_CreateKeyValue
         * sets AllowDirect on the stream itself. Verified below. */
        s = js_CreateKeyValue(kv, *js, &kc);
    }
    if (s == NATS_OK && !g_kv_note_printed) {
        jsStreamInfo *si = NULL;
        int direct = -1;
        if (js_GetStreamInfo(&si, *js, "KV_BENCHKV", NULL, NULL) == NATS_OK) {
            direct = si->Config->AllowDirect ? 1 : 0;
            jsStreamInfo_Destroy(si);
        }
        printf("# note client=%s kv: kvConfig has no allow_direct field in "
               "nats.c %s; js_CreateKeyValue sets it on the stream itself: "
               "KV_BENCHKV allow_direct=%s (kvStore_Get uses direct get when "
               "true)\n",
               CLIENT, nats_GetVersion(),
               direct < 0 ? "unknown" : (direct ? "true" : "false"));
        fflush(stdout);
        g_kv_note_printed = true;
    }
    return s;
}

static void run_kv(long size)
{
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    kvStore *kv = NULL;
    natsStatus s;
    char *data = bench_make_payload(size);
    long K = O.kv_k;
    double *lat = calloc((size_t)(K > 0 ? K : 1), sizeof(double));
    char key[64];

    reset_async();
    s = connect_nc(&nc);
    if (s != NATS_OK) {
        emit_failure("kv-put", size, "failed", "connect", s);
        emit_failure("kv-get", size, "failed", "connect", s);
        goto out;
    }
    s = fresh_kv(nc, &js, &kv);
    if (s != NATS_OK) {
        emit_failure("kv-put", size, "failed", "bucket", s);
        emit_failure("kv-get", size, "failed", "bucket", s);
        goto out;
    }

    for (long i = 0; i < O.warmup; i++) {
        kvEntry *e = NULL;
        snprintf(key, sizeof key, "warm%ld", i);
        kvStore_Put(NULL, kv, key, data, (int)size);
        kvStore_Get(&e, kv, key);
        kvEntry_Destroy(e);
    }
    ASYNC_RESET();

    /* puts */
    long errors = 0, nlat = 0;
    bool timed_out = false;
    double c0 = bench_cpu_ns();
    double t0 = bench_now_s();
    for (long i = 0; i < K; i++) {
        uint64_t rev = 0;
        snprintf(key, sizeof key, "k%ld", i);
        double a = bench_now_s();
        s = kvStore_Put(&rev, kv, key, data, (int)size);
        double b = bench_now_s();
        if (s != NATS_OK) {
            errors++;
        } else
            lat[nlat++] = (b - a) * 1e6;
        if (b - t0 > O.max_secs) {
            timed_out = true;
            break;
        }
    }
    double secs = bench_now_s() - t0;
    double c1 = bench_cpu_ns();
    if (timed_out)
        bench_emit_status("kv-put", size, "timeout", "max-secs");
    else {
        errors += ASYNC_ERRS();
        bench_latency L = bench_latency_stats(lat, nlat);
        printf("scenario=kv-put client=%s size=%ld n=%ld secs=%.6f "
               "ops_per_s=%.1f mean_us=%.1f p50_us=%.1f p99_us=%.1f "
               "errors=%ld cpu_ns_per_msg=%.1f",
               CLIENT, size, K, secs, (double)K / secs, L.mean, L.p50, L.p99,
               errors, bench_cpu_per_msg(c0, c1, K));
        bench_end_result_line();
        fflush(stdout);
    }

    /* gets */
    ASYNC_RESET();
    errors = 0;
    nlat = 0;
    timed_out = false;
    c0 = bench_cpu_ns();
    t0 = bench_now_s();
    for (long i = 0; i < K; i++) {
        kvEntry *e = NULL;
        snprintf(key, sizeof key, "k%ld", i);
        double a = bench_now_s();
        s = kvStore_Get(&e, kv, key);
        double b = bench_now_s();
        if (s != NATS_OK) {
            errors++;
        } else {
            if (kvEntry_ValueLen(e) != size)
                errors++;
            lat[nlat++] = (b - a) * 1e6;
        }
        kvEntry_Destroy(e);
        if (b - t0 > O.max_secs) {
            timed_out = true;
            break;
        }
    }
    secs = bench_now_s() - t0;
    c1 = bench_cpu_ns();
    if (timed_out)
        bench_emit_status("kv-get", size, "timeout", "max-secs");
    else {
        errors += ASYNC_ERRS();
        bench_latency L = bench_latency_stats(lat, nlat);
        printf("scenario=kv-get client=%s size=%ld n=%ld secs=%.6f "
               "ops_per_s=%.1f mean_us=%.1f p50_us=%.1f p99_us=%.1f "
               "errors=%ld cpu_ns_per_msg=%.1f",
               CLIENT, size, K, secs, (double)K / secs, L.mean, L.p50, L.p99,
               errors, bench_cpu_per_msg(c0, c1, K));
        bench_end_result_line();
        fflush(stdout);
    }
out:
    kvStore_Destroy(kv);
    jsCtx_Destroy(js);
    close_nc(nc);
    free(lat);
    free(data);
}

/* ------------------------------------------------------------------------ */
/* kv-par                                                                   */

static bool g_kvpar_note_printed;

/*
 * nats.c has no asynchronous KV get, so kv-par is K sequential kvStore_Get
 * calls (par=1). threads_peak is sampled in the loop itself every 2 ms (a
 * sampling thread would add one to the count).
 */
static void run_kv_par(long size)
{
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    kvStore *kv = NULL;
    natsStatus s;
    char *data = bench_make_payload(size);
    long K = O.kv_k;
    char key[64];

    if (!g_kvpar_note_printed) {
        printf("# note=kv-par client=%s nats.c %s has no asynchronous KV get: the "
               "kv-par row is K sequential kvStore_Get calls (par=1; --par %ld not "
               "applicable), the same work as kv-get\n",
               CLIENT, nats_GetVersion(), g_par);
        fflush(stdout);
        g_kvpar_note_printed = true;
    }
    reset_async();
    s = connect_nc(&nc);
    if (s != NATS_OK) {
        emit_failure("kv-par", size, "failed", "connect", s);
        goto out;
    }
    s = fresh_kv(nc, &js, &kv);
    if (s != NATS_OK) {
        emit_failure("kv-par", size, "failed", "bucket", s);
        goto out;
    }
    for (long i = 0; i < K; i++) {
        snprintf(key, sizeof key, "k%ld", i);
        s = kvStore_Put(NULL, kv, key, data, (int)size);
        if (s != NATS_OK) {
            emit_failure("kv-par", size, "failed", "put", s);
            goto out;
        }
    }
    ASYNC_RESET();

    long errors = 0;
    long peak = bench_proc_status("Threads");
    double c0 = bench_cpu_ns();
    double t0 = bench_now_s(), last_sample = t0;
    bool timed_out = false;
    for (long i = 0; i < K; i++) {
        kvEntry *e = NULL;
        snprintf(key, sizeof key, "k%ld", i);
        s = kvStore_Get(&e, kv, key);
        if (s != NATS_OK || kvEntry_ValueLen(e) != size)
            errors++;
        kvEntry_Destroy(e);
        double b = bench_now_s();
        if (b - last_sample >= 0.002) {
            long t = bench_proc_status("Threads");
            if (t > peak)
                peak = t;
            last_sample = b;
        }
        if (b - t0 > O.max_secs) {
            timed_out = true;
            break;
        }
    }
    double secs = bench_now_s() - t0;
    double c1 = bench_cpu_ns();
    long t = bench_proc_status("Threads");
    if (t > peak)
        peak = t;
    if (timed_out) {
        bench_emit_status("kv-par", size, "timeout", "max-secs");
        goto out;
    }
    errors += ASYNC_ERRS();
    printf("scenario=kv-par client=%s size=%ld n=%ld par=1 secs=%.6f "
           "ops_per_s=%.1f threads_peak=%ld errors=%ld cpu_ns_per_msg=%.1f",
           CLIENT, size, K, secs, (double)K / secs, peak, errors,
           bench_cpu_per_msg(c0, c1, K));
    bench_end_result_line();
    fflush(stdout);
out:
    kvStore_Destroy(kv);
    jsCtx_Destroy(js);
    close_nc(nc);
    free(data);
}

/* ------------------------------------------------------------------------ */
/* js-consume                                                               */

/* messages per natsSubscription_Fetch (the batch of nats.go's Consume) */
#define FETCH_BATCH 500

static bool g_consume_note_printed;

static void run_js_consume(long size)
{
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    natsSubscription *sub = NULL;
    jsOptions jo;
    natsStatus s;
    jsErrCode jerr = 0;
    char *data = bench_make_payload(size);
    long N = O.js_n;

    if (!g_consume_note_printed) {
        printf("# note=js-consume client=%s nats.c %s has no continuous-pull "
               "(consume) API: js-consume is a natsSubscription_Fetch loop on a "
               "pull subscription (batch %d), natsMsg_Ack per message\n",
               CLIENT, nats_GetVersion(), FETCH_BATCH);
        fflush(stdout);
        g_consume_note_printed = true;
    }
    reset_async();
    s = connect_nc(&nc);
    if (s != NATS_OK) {
        emit_failure("js-consume", size, "failed", "connect", s);
        goto out;
    }
    jsOptions_Init(&jo);
    jo.Wait = bench_idle_ms(&O);
    jo.PublishAsync.MaxPending = O.window;
    jo.PublishAsync.StallWait = bench_idle_ms(&O);
    s = natsConnection_JetStream(&js, nc, &jo);
    if (s == NATS_OK)
        s = fresh_bench_stream(js);
    if (s != NATS_OK) {
        emit_failure("js-consume", size, "failed", "stream", s);
        goto out;
    }
    /* fill (untimed) */
    for (long i = 0; i < N && s == NATS_OK; i++)
        s = js_PublishAsync(js, "bench.js.a", data, (int)size, NULL);
    if (s == NATS_OK) {
        jsPubOptions po;
        jsPubOptions_Init(&po);
        po.MaxWait = (int64_t)(O.max_secs * 1000);
        s = js_PublishAsyncComplete(js, &po);
    }
    if (s == NATS_OK) {
        jsStreamInfo *si = NULL;
        s = js_GetStreamInfo(&si, js, "BENCH", NULL, &jerr);
        if (s == NATS_OK && si->State.Msgs != (uint64_t)N)
            s = NATS_ERR;
        jsStreamInfo_Destroy(si);
    }
    if (s != NATS_OK) {
        emit_failure("js-consume", size, "failed", "fill", s);
        goto out;
    }
    {
        jsConsumerConfig cc;
        jsConsumerInfo *ci = NULL;
        jsConsumerConfig_Init(&cc);
        cc.Durable = "BENCHC";
        cc.AckPolicy = js_AckExplicit;
        cc.FilterSubject = "bench.js.>";
        s = js_AddConsumer(&ci, js, "BENCH", &cc, NULL, &jerr);
        jsConsumerInfo_Destroy(ci);
    }
    if (s == NATS_OK)
        s = js_PullSubscribe(&sub, js, "bench.js.>", "BENCHC", NULL, NULL, &jerr);
    if (s != NATS_OK) {
        emit_failure("js-consume", size, "failed", "consumer", s);
        goto out;
    }
    ASYNC_RESET();

    long received = 0, redelivered = 0, errors = 0;
    double c0 = bench_cpu_ns();
    double t0 = bench_now_s(), last_progress = t0, c_progress = c0;
    while (received < N) {
        natsMsgList list = {NULL, 0};
        long want = N - received;
        s = natsSubscription_Fetch(&list, sub, (int)(want < FETCH_BATCH ? want : FETCH_BATCH),
                                   bench_idle_ms(&O), &jerr);
        if (s != NATS_OK && s != NATS_TIMEOUT)
            errors++;
        for (int j = 0; j < list.Count; j++) {
            natsMsg *m = list.Msgs[j];
            jsMsgMetaData *md = NULL;
            if (natsMsg_GetDataLength(m) != size)
                errors++;
            if (natsMsg_GetMetaData(&md, m) == NATS_OK) {
                if (md->NumDelivered > 1)
                    redelivered++;
                jsMsgMetaData_Destroy(md);
            }
            if (natsMsg_Ack(m, NULL) != NATS_OK) /* plain ack, not AckSync */
                errors++;
        }
        double t = bench_now_s();
        if (list.Count > 0) {
            received += list.Count;
            last_progress = t;
            c_progress = bench_cpu_ns(); /* once per batch: where the clock stops */
        }
        natsMsgList_Destroy(&list);
        if (t - last_progress > O.idle_timeout || t - t0 > O.max_secs)
            break;
    }
    double secs = last_progress - t0;
    if (secs <= 0)
        secs = 1e-9;
    if (received > N)
        received = N;

    /* untimed: wait until the server has every ack */
    long ack_pending = -1;
    double deadline = bench_now_s() + O.idle_timeout;
    for (;;) {
        jsConsumerInfo *ci = NULL;
        if (js_GetConsumerInfo(&ci, js, "BENCH", "BENCHC", NULL, &jerr) == NATS_OK) {
            ack_pending = (long)ci->NumAckPending;
            jsConsumerInfo_Destroy(ci);
        }
        if (ack_pending == 0 || bench_now_s() > deadline)
            break;
        nats_Sleep(5);
    }
    errors += ASYNC_ERRS();
    printf("scenario=js-consume client=%s size=%ld n=%ld received=%ld secs=%.6f "
           "msgs_per_s=%.1f mb_per_s=%.3f redelivered=%ld ack_pending=%ld "
           "errors=%ld cpu_ns_per_msg=%.1f",
           CLIENT, size, N, received, secs, (double)received / secs,
           (double)received * (double)size / 1e6 / secs, redelivered, ack_pending,
           errors, bench_cpu_per_msg(c0, c_progress, received));
    bench_end_result_line();
    fflush(stdout);
out:
    natsSubscription_Destroy(sub);
    if (js) {
        natsMsgList pending;
        if (js_PublishAsyncGetPendingList(&pending, js) == NATS_OK)
            natsMsgList_Destroy(&pending);
        jsCtx_Destroy(js);
    }
    close_nc(nc);
    free(data);
}

/* ------------------------------------------------------------------------ */
/* obj-put / obj-get                                                        */

/* nats.c 3.4 has no Object Store API: one unsupported line per run (the
 * --obj-mb object and the --obj-small objects of 1 KiB). */
static bool g_obj_note_printed;

static void run_obj(const char *scenario)
{
    if (!g_obj_note_printed) {
        printf("# note=obj client=%s nats.c %s has no Object Store API: obj-put "
               "and obj-get are not run\n", CLIENT, nats_GetVersion());
        g_obj_note_printed = true;
    }
    bench_emit_status(scenario, g_obj_mb * 1048576L, "failed",
                      "unsupported:nats.c_has_no_Object_Store_API");
    bench_emit_status(scenario, 1024, "failed",
                      "unsupported:nats.c_has_no_Object_Store_API");
}

/* ------------------------------------------------------------------------ */
/* main                                                                     */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: natsc_bench [--url URL] [--scenarios pub,pubsub,req,jspub,"
            "jspub-sync,kv,kv-par,js-consume,obj-put,obj-get]\n"
            "                   [--sizes 16,1024] [--n N] [--js-n N] [--k K] "
            "[--kv-k K]\n"
            "                   [--window W] [--par P] [--obj-mb MiB] "
            "[--obj-small N] [--obj-mode memory|stream]\n"
            "                   [--warmup W] [--idle-timeout S] [--max-secs S]\n");
}

static bool parse_extra(const char *name, const char *v)
{
    if (!strcmp(name, "--par")) g_par = bench_parse_long(name, v);
    else if (!strcmp(name, "--obj-mb")) g_obj_mb = bench_parse_long(name, v);
    else if (!strcmp(name, "--obj-small")) g_obj_small = bench_parse_long(name, v);
    else if (!strcmp(name, "--obj-mode")) {
        /* memory|stream: accepted for the common CLI; nothing runs here */
        if (strcmp(v, "memory") && strcmp(v, "stream")) {
            fprintf(stderr, "natsc_bench: bad value for %s: %s\n", name, v);
            exit(2);
        }
    }
    else return false;
    return true;
}

int main(int argc, char **argv)
{
    bench_set_identity("natsc_bench", CLIENT);
    bench_options_init(&O);
    free(O.scenarios); /* the spec's full list by default */
    O.scenarios = strdup("pub,pubsub,req,jspub,jspub-sync,kv,kv-par,js-consume,"
                         "obj-put,obj-get");
    int rc = bench_parse_args(argc, argv, &O, usage, parse_extra);
    if (rc >= 0)
        return rc;
    if (O.window < 1) O.window = 1;

    long sizes[64];
    int nsizes = bench_parse_sizes(&O, sizes, 64);

    if (nats_Open(-1) != NATS_OK) {
        fprintf(stderr, "natsc_bench: nats_Open failed\n");
        return 1;
    }
    printf("# client=%s version=%s url=%s\n", CLIENT, nats_GetVersion(), O.url);
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
            if (!strcmp(sc, "pub")) run_pub(size);
            else if (!strcmp(sc, "pubsub")) run_pubsub(size);
            else if (!strcmp(sc, "req")) {
                if (!g_req_note_printed) {
                    printf("# note client=%s req: responder connection uses "
                           "natsOptions_SetSendAsap=%s (requester: defaults)\n",
                           CLIENT, responder_send_asap() ? "true" : "false");
                    g_req_note_printed = true;
                }
                run_req(size);
            }
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
    if (nats_CloseAndWait(2000) == NATS_OK)
        free_ctxs(); /* no library thread can call back any more */
    return 0;
}
