/*
 * Soak of a 3-node JetStream cluster (not run by CI; scripts/soak-cluster.sh
 * builds and runs it): mixed load for SOAK_SECONDS (default 180) with a
 * fault every few seconds, rotating through a stream-leader step-down, a
 * consumer-leader step-down, a stream-leader kill (restarted at once) and a
 * lame duck of the node the publisher is on (restarted once it has left).
 *
 * Load: a publisher (synchronous JetStream publishes with msg-ids, errors
 * republished with the same id), a consumer (consume with explicit acks),
 * and a KV writer with a watcher on another client. Each second it samples
 * the process's RSS and thread count (/proc/self/status).
 *
 * Prints the figures and exits 1 if anything was lost or seen twice
 * without a reason: the stream must hold every id once; the consumer must
 * have seen every stream sequence (redeliveries are counted as the reason
 * for repeats); the watcher must have seen every revision once in order.
 */
#define _POSIX_C_SOURCE 200809L

#include "cluster.h"
#include "harness.h"
#include "util.h"

#include <natsio.h>

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static atomic_bool g_stop;

static natsio_client *soak_client(cluster *cl, int first) {
    char urls[256] = "";
    for (int k = 0; k < CLUSTER_NODES; k++) {
        if (urls[0]) strncat(urls, ",", sizeof urls - strlen(urls) - 1);
        strncat(urls, nt_server_url(cl->node[(first + k) % CLUSTER_NODES]), sizeof urls - strlen(urls) - 1);
    }
    natsio_options *o = NULL;
    natsio_options_new(&o);
    natsio_options_set_url(o, urls);
    natsio_options_set_no_randomize(o, true);
    natsio_options_set_max_reconnect_attempts(o, -1);
    natsio_options_set_reconnect_wait(o, 50, 200);
    natsio_options_set_connect_timeout_ms(o, 1000);
    natsio_client *c = NULL;
    natsio_client_connect(o, &c);
    natsio_options_free(o);
    return c;
}

static natsio_js *soak_js(natsio_client *c) {
    natsio_js_options jo;
    natsio_js_options_init(&jo);
    jo.timeout_ms = 5000;
    natsio_js *js = NULL;
    natsio_client_jetstream(c, &jo, &js);
    return js;
}

/* ---- publisher ---- */

typedef struct {
    natsio_js *js;
    atomic_long published; /* ids acked */
    long errors;
} publisher;

static void *publish_loop(void *arg) {
    publisher *p = (publisher *)arg;
    for (long n = 0; !atomic_load(&g_stop); n++) {
        char id[32];
        snprintf(id, sizeof id, "%ld", n);
        natsio_js_publish_options po;
        natsio_js_publish_options_init(&po);
        po.msg_id = id;
        for (;;) {
            natsio_pub_ack *ack = NULL;
            natsio_status st = natsio_js_publish(p->js, "soak.data", id, strlen(id), &po, &ack);
            natsio_pub_ack_free(ack);
            if (st == NATSIO_OK) break;
            p->errors++;
            if (atomic_load(&g_stop)) {
                /* Keep trying after the stop: the id must land once. */
                nt_sleep_ms(100);
            }
        }
        atomic_store(&p->published, n + 1);
    }
    return NULL;
}

/* ---- consumer ---- */

#define MAX_SEQ 2000000

typedef struct {
    natsio_js *js;
    unsigned char *seen; /* by stream sequence */
    atomic_long unique;
    atomic_long target; /* the stream's last sequence, once known */
    long deliveries, redelivered, repeats_without_redelivery, ack_failures;
} consumer;

static void *consume_loop(void *arg) {
    consumer *k = (consumer *)arg;
    natsio_consume_options co;
    natsio_consume_options_init(&co);
    co.max_messages = 100;
    co.idle_heartbeat_ms = 1000;
    co.expires_ms = 5000;
    natsio_js_messages *it = NULL;
    if (natsio_js_consume(k->js, "SOAK", "work", &co, &it) != NATSIO_OK) return NULL;
    /* After the stop: until every stored message came, 60 s at most. */
    int64_t stopped_at = 0;
    for (;;) {
        if (atomic_load(&g_stop)) {
            long target = atomic_load(&k->target);
            if (stopped_at == 0) stopped_at = nt_now_ms();
            if ((target > 0 && atomic_load(&k->unique) >= target) || nt_now_ms() - stopped_at > 60000) break;
        }
        natsio_msg *m = NULL;
        if (natsio_js_messages_next(it, 500, &m) != NATSIO_OK) continue;
        natsio_js_msg_metadata md;
        memset(&md, 0, sizeof md);
        natsio_msg_js_metadata(m, &md);
        k->deliveries++;
        if (md.num_delivered > 1) k->redelivered++;
        if (md.stream_seq < MAX_SEQ) {
            if (!k->seen[md.stream_seq]) {
                k->seen[md.stream_seq] = 1;
                atomic_fetch_add(&k->unique, 1);
            } else if (md.num_delivered <= 1) {
                k->repeats_without_redelivery++;
            }
        }
        if (natsio_msg_ack_sync(m, 2000) != NATSIO_OK) k->ack_failures++;
        natsio_msg_free(m);
    }
    natsio_js_messages_stop(it);
    natsio_js_messages_free(it);
    return NULL;
}

/* ---- KV writer and watcher ---- */

typedef struct {
    natsio_kv *kv;
    atomic_long puts;
    long errors;
} kv_writer;

static void *kv_write_loop(void *arg) {
    kv_writer *w = (kv_writer *)arg;
    for (long n = 0; !atomic_load(&g_stop); n++) {
        char key[32];
        snprintf(key, sizeof key, "k%ld", n);
        uint64_t rev = 0;
        if (natsio_kv_put(w->kv, key, "v", 1, NULL, &rev) != NATSIO_OK) w->errors++;
        atomic_fetch_add(&w->puts, 1);
        nt_sleep_ms(2);
    }
    return NULL;
}

typedef struct {
    natsio_kv_watcher *watcher;
    uint64_t expected;
    long gaps, repeats;
    atomic_bool done;
} kv_watch;

static void *kv_watch_loop(void *arg) {
    kv_watch *w = (kv_watch *)arg;
    w->expected = 1;
    while (!atomic_load(&w->done)) {
        natsio_kv_entry *e = NULL;
        if (natsio_kv_watcher_next(w->watcher, 500, &e) != NATSIO_OK || !e) continue;
        if (natsio_kv_entry_operation(e) != NATSIO_KV_INITIAL_DONE) {
            uint64_t rev = natsio_kv_entry_revision(e);
            if (rev < w->expected) w->repeats++;
            else if (rev > w->expected) w->gaps++;
            if (rev >= w->expected) w->expected = rev + 1;
        }
        natsio_kv_entry_free(e);
    }
    return NULL;
}

/* ---- process figures ---- */

static void sample(long *rss_kb, long *threads) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    *rss_kb = *threads = -1;
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "VmRSS:", 6) == 0) *rss_kb = atol(line + 6);
        if (strncmp(line, "Threads:", 8) == 0) *threads = atol(line + 8);
    }
    if (f) fclose(f);
}

/* Least-squares slope of y over x. */
static double slope(const double *x, const long *y, int n) {
    if (n < 2) return 0;
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++) {
        sx += x[i];
        sy += (double)y[i];
        sxx += x[i] * x[i];
        sxy += x[i] * (double)y[i];
    }
    return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

/* RSS and thread count each second on a thread of their own (the fault
 * loop blocks for seconds at a time), with when each was taken. */
#define MAX_SAMPLES 4096
typedef struct {
    double at_s[MAX_SAMPLES];
    long rss[MAX_SAMPLES], threads[MAX_SAMPLES];
    int count;
} samples;

static void *sample_loop(void *arg) {
    samples *sm = (samples *)arg;
    int64_t start = nt_now_ms(), next = start;
    while (!atomic_load(&g_stop) && sm->count < MAX_SAMPLES) {
        sample(&sm->rss[sm->count], &sm->threads[sm->count]);
        sm->at_s[sm->count] = (double)(nt_now_ms() - start) / 1000.0;
        sm->count++;
        next += 1000;
        while (!atomic_load(&g_stop) && nt_now_ms() < next) nt_sleep_ms(50);
    }
    return NULL;
}

static int64_t json_number(const char *json, const char *key) {
    int64_t v = -1;
    json_int(json, key, &v);
    return v;
}

static void soak(void) {
    int seconds = getenv("SOAK_SECONDS") ? atoi(getenv("SOAK_SECONDS")) : 180;
    nt_set_case_timeout((unsigned)seconds + 180);
    cluster *cl = cluster_start_js("lame_duck_duration: \"30s\"\nlame_duck_grace_period: \"1s\"");
    NT_CHECK(cl != NULL);
    natsio_client *admin = soak_client(cl, 0), *pc = soak_client(cl, 1), *cc = soak_client(cl, 2),
                  *wc = soak_client(cl, 0), *rc = soak_client(cl, 1);
    NT_CHECK(admin && pc && cc && wc && rc);
    natsio_js *ajs = soak_js(admin);
    char *info = NULL;
    NT_CHECK_INT_EQ(natsio_js_stream_create(ajs,
                                            "{\"name\":\"SOAK\",\"subjects\":[\"soak.>\"],\"num_replicas\":3,"
                                            "\"duplicate_window\":\"10m\"}",
                                            NATSIO_CREATE_OR_UPDATE, &info),
                    NATSIO_OK);
    natsio_string_free(info);
    NT_CHECK_INT_EQ(natsio_js_consumer_create(ajs, "SOAK",
                                              "{\"durable_name\":\"work\",\"ack_policy\":\"explicit\","
                                              "\"ack_wait\":\"5s\",\"num_replicas\":3}",
                                              NATSIO_CREATE_OR_UPDATE, &info),
                    NATSIO_OK);
    natsio_string_free(info);
    natsio_kv *wkv = NULL, *rkv = NULL;
    NT_CHECK_INT_EQ(natsio_js_kv_create(ajs, "{\"bucket\":\"soak\",\"replicas\":3}", NATSIO_CREATE_OR_UPDATE, &wkv),
                    NATSIO_OK);
    natsio_kv_free(wkv);
    natsio_js *pjs = soak_js(pc), *cjs = soak_js(cc), *wjs = soak_js(wc), *rjs = soak_js(rc);
    NT_CHECK_INT_EQ(natsio_js_kv_bind(wjs, "soak", &wkv), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_js_kv_bind(rjs, "soak", &rkv), NATSIO_OK);
    NT_CHECK(cluster_stream_leader(cl, "SOAK", 3, 20000) >= 0);
    NT_CHECK(cluster_stream_leader(cl, "KV_soak", 3, 20000) >= 0);

    kv_watch kw = {0};
    NT_CHECK_INT_EQ(natsio_kv_watch(rkv, NULL, 0, NULL, &kw.watcher), NATSIO_OK);
    publisher p = {.js = pjs};
    consumer k = {.js = cjs, .seen = (unsigned char *)calloc(MAX_SEQ, 1)};
    kv_writer w = {.kv = wkv};
    NT_CHECK(k.seen != NULL);
    static samples sm;
    pthread_t tp, tk, tw, tr, ts;
    pthread_create(&ts, NULL, sample_loop, &sm);
    pthread_create(&tp, NULL, publish_loop, &p);
    pthread_create(&tk, NULL, consume_loop, &k);
    pthread_create(&tw, NULL, kv_write_loop, &w);
    pthread_create(&tr, NULL, kv_watch_loop, &kw);

    int faults = 0, fault_failures = 0;
    int64_t start = nt_now_ms(), next_fault = start + 5000;
    const char *kinds[4] = {"stream step-down", "consumer step-down", "stream leader kill", "lame duck"};
    int kind_count[4] = {0};
    while (nt_now_ms() - start < (int64_t)seconds * 1000) {
        nt_sleep_ms(200);
        if (nt_now_ms() < next_fault) continue;
        int kind = faults % 4;
        bool ok = true;
        if (kind == 0) {
            ok = cluster_stream_stepdown(cl, "SOAK", 3, 20000) >= 0;
        } else if (kind == 1) {
            ok = cluster_consumer_stepdown(cl, "SOAK", "work", 3, 20000) >= 0;
        } else if (kind == 2) {
            int l = cluster_stream_leader(cl, "SOAK", 3, 20000);
            ok = l >= 0;
            if (ok) {
                cluster_kill_node(cl, l);
                ok = cluster_restart_node(cl, l, 30000) && cluster_stream_leader(cl, "SOAK", 3, 30000) >= 0;
            }
        } else {
            int n = cluster_node_of(cl, pc);
            ok = n >= 0 && cluster_lame_duck(cl, n);
            /* The node shuts down once its clients left: restart it. */
            int64_t until = nt_now_ms() + 40000;
            while (ok && nt_server_running(cl->node[n]) && nt_now_ms() < until) nt_sleep_ms(100);
            ok = ok && cluster_restart_node(cl, n, 30000) && cluster_stream_leader(cl, "SOAK", 3, 30000) >= 0;
        }
        faults++;
        kind_count[kind]++;
        if (!ok) fault_failures++;
        next_fault = nt_now_ms() + 3000;
    }
    atomic_store(&g_stop, true);
    pthread_join(ts, NULL);
    pthread_join(tp, NULL);
    pthread_join(tw, NULL);

    /* The stream holds every id once. */
    int64_t msgs = -1, last_seq = -1;
    int64_t ask_until = nt_now_ms() + 30000;
    while (last_seq < 0 && nt_now_ms() < ask_until) {
        if (natsio_js_stream_info(ajs, "SOAK", NULL, &info) == NATSIO_OK) {
            msgs = json_number(info, "messages");
            last_seq = json_number(info, "last_seq");
            natsio_string_free(info);
        }
    }
    atomic_store(&k.target, (long)last_seq);
    pthread_join(tk, NULL);
    long published = atomic_load(&p.published);
    long unseen = 0;
    for (int64_t s = 1; s <= last_seq && s < MAX_SEQ; s++) unseen += !k.seen[s];
    /* The watcher catches up with the bucket. */
    int64_t kv_last = -1;
    ask_until = nt_now_ms() + 30000;
    while (kv_last < 0 && nt_now_ms() < ask_until) {
        if (natsio_js_stream_info(ajs, "KV_soak", NULL, &info) == NATSIO_OK) {
            kv_last = json_number(info, "last_seq");
            natsio_string_free(info);
        }
    }
    int64_t until = nt_now_ms() + 20000;
    while ((int64_t)kw.expected <= kv_last && nt_now_ms() < until) nt_sleep_ms(50);
    atomic_store(&kw.done, true);
    pthread_join(tr, NULL);
    natsio_kv_watcher_stop(kw.watcher);
    natsio_kv_watcher_free(kw.watcher);

    printf("soak: %d s, %d faults (%d %s, %d %s, %d %s, %d %s; %d not injected)\n", seconds, faults, kind_count[0],
           kinds[0], kind_count[1], kinds[1], kind_count[2], kinds[2], kind_count[3], kinds[3], fault_failures);
    printf("  publishes: %ld acked ids (%ld errors republished); stream holds %lld messages, last seq %lld\n",
           published, p.errors, (long long)msgs, (long long)last_seq);
    printf("  consumer: %ld deliveries, %ld unique, %ld unseen, %ld redelivered, %ld repeats without redelivery, %ld "
           "failed acks\n",
           k.deliveries, atomic_load(&k.unique), unseen, k.redelivered, k.repeats_without_redelivery, k.ack_failures);
    printf("  kv: %ld puts (%ld errors); watcher to revision %llu of %lld, %ld gaps, %ld repeats\n",
           atomic_load(&w.puts), w.errors, (unsigned long long)(kw.expected - 1), (long long)kv_last, kw.gaps,
           kw.repeats);
    /* The second half's slope: past the warm-up (buffers and pages reaching
     * their working size), a leak still climbs. */
    int n = sm.count, half = n / 2;
    printf("  process: RSS %ld -> %ld kB (slope %.1f kB/s, second half %.1f kB/s), threads %ld -> %ld (slope %.3f "
           "/s), %d samples over %.0f s\n",
           sm.rss[0], sm.rss[n - 1], slope(sm.at_s, sm.rss, n), slope(sm.at_s + half, sm.rss + half, n - half),
           sm.threads[0], sm.threads[n - 1], slope(sm.at_s, sm.threads, n), n, sm.at_s[n - 1]);
    free(k.seen);
    natsio_kv_free(wkv);
    natsio_kv_free(rkv);
    natsio_js_free(ajs);
    natsio_js_free(pjs);
    natsio_js_free(cjs);
    natsio_js_free(wjs);
    natsio_js_free(rjs);
    natsio_client_free(admin);
    natsio_client_free(pc);
    natsio_client_free(cc);
    natsio_client_free(wc);
    natsio_client_free(rc);
    NT_CHECK_INT_EQ(msgs, published);
    NT_CHECK_INT_EQ(unseen, 0);
    NT_CHECK_INT_EQ(k.repeats_without_redelivery, 0);
    NT_CHECK_INT_EQ(kw.gaps, 0);
    NT_CHECK_INT_EQ(kw.repeats, 0);
    NT_CHECK_INT_EQ((int64_t)kw.expected - 1, kv_last);
}

int main(int argc, char **argv) {
    static const nt_case cases[] = {NT_CASE(soak)};
    return nt_main(argc, argv, cases, NT_COUNT(cases));
}
