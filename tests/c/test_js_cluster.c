/*
 * JetStream in a 3-node cluster (cluster.h): R3 streams, consumers and
 * Key-Value buckets across leader step-downs, leader kills and restarts.
 * Every case counts exactly (each message once, every publish ends with an
 * ack or an error) and prints its figures on stdout.
 *
 * Every case starts its own cluster: the faults it injects leave nodes
 * down or restarted.
 */
#define _POSIX_C_SOURCE 200809L

#include "cluster.h"
#include "harness.h"
#include "util.h"

#include <natsio.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The JetStream API timeout of the clients under test. */
#define JS_TIMEOUT_MS 5000

/* A client that may move between the nodes (all three configured), short
 * reconnect waits; freed when the case ends. */
static natsio_client *moving_client(cluster *cl, int first) {
    char urls[256] = "";
    for (int k = 0; k < CLUSTER_NODES; k++) {
        int i = (first + k) % CLUSTER_NODES;
        if (urls[0]) strncat(urls, ",", sizeof urls - strlen(urls) - 1);
        strncat(urls, nt_server_url(cl->node[i]), sizeof urls - strlen(urls) - 1);
    }
    natsio_options *o = new_options();
    if (!o) return NULL;
    bool ok = natsio_options_set_url(o, urls) == NATSIO_OK && natsio_options_set_no_randomize(o, true) == NATSIO_OK &&
              natsio_options_set_max_reconnect_attempts(o, -1) == NATSIO_OK &&
              natsio_options_set_reconnect_wait(o, 50, 200) == NATSIO_OK &&
              natsio_options_set_connect_timeout_ms(o, 1000) == NATSIO_OK;
    if (!ok) {
        nt_fail_at(__FILE__, __LINE__, "options: %s", natsio_last_error());
        return NULL;
    }
    return connect_with(o);
}

static natsio_js *js_with_timeout(natsio_client *c, int64_t timeout_ms) {
    natsio_js_options jo;
    natsio_js_options_init(&jo);
    jo.timeout_ms = timeout_ms;
    return new_jetstream(c, &jo);
}

static bool cluster_stream_create(natsio_js *js, const char *config) {
    char *info = NULL;
    natsio_status st = natsio_js_stream_create(js, config, NATSIO_CREATE_OR_UPDATE, &info);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "stream create: %s (%s)", natsio_status_str(st), natsio_last_error());
        return false;
    }
    natsio_string_free(info);
    return true;
}

/* A node other than `a` and `b` (which may be equal). */
static int other_node(int a, int b) {
    for (int i = 0; i < CLUSTER_NODES; i++)
        if (i != a && i != b) return i;
    return -1;
}

/* ---- KV writes during a leader election fail fast ------------------------ */

/* The stream leader of an R3 bucket is killed while a client on another
 * node keeps putting. Puts made while the stream has no leader fail with
 * NO_STREAM_RESPONSE after the publish's own retries, promptly: not after
 * the caller's whole timeout (a diagnostic stream-info call used to wait
 * it out). Then the puts succeed again on the new leader. */
static void test_kv_put_during_leader_kill_fails_fast(void) {
    cluster *cl = cluster_start_js(NULL);
    NT_CHECK(cl != NULL);
    natsio_client *admin = cluster_pinned_client(cl, 0);
    NT_CHECK(admin != NULL);
    natsio_js *ajs = js_with_timeout(admin, JS_TIMEOUT_MS);
    NT_CHECK(ajs != NULL);
    natsio_kv *akv = NULL;
    NT_CHECK_INT_EQ(natsio_js_kv_create(ajs, "{\"bucket\":\"fast\",\"replicas\":3}", NATSIO_CREATE_OR_UPDATE, &akv),
                    NATSIO_OK);
    natsio_kv_free(akv);
    int leader = cluster_stream_leader(cl, "KV_fast", 3, 20000);
    NT_CHECK_MSG(leader >= 0, "KV_fast has no leader with two current followers");
    int client_node = other_node(leader, leader);
    natsio_client *c = cluster_pinned_client(cl, client_node);
    NT_CHECK(c != NULL);
    natsio_js *js = js_with_timeout(c, JS_TIMEOUT_MS);
    NT_CHECK(js != NULL);
    natsio_kv *kv = NULL;
    NT_CHECK_INT_EQ(natsio_js_kv_bind(js, "fast", &kv), NATSIO_OK);
    nt_cleanup(kv_free_cb, kv);
    uint64_t rev = 0;
    NT_CHECK_INT_EQ(natsio_kv_put(kv, "k", "0", 1, &rev), NATSIO_OK);

    cluster_kill_node(cl, leader);
    int64_t killed_at = nt_now_ms();
    int ok_after = 0, no_response = 0, timeouts = 0, other = 0, puts = 0;
    int64_t slowest_failure = 0;
    natsio_status other_status = NATSIO_OK;
    while (ok_after < 5 && nt_now_ms() - killed_at < 60000) {
        int64_t t0 = nt_now_ms();
        natsio_status st = natsio_kv_put(kv, "k", "x", 1, &rev);
        int64_t took = nt_now_ms() - t0;
        puts++;
        if (st == NATSIO_OK) {
            if (no_response + timeouts + other > 0) ok_after++;
            continue;
        }
        if (took > slowest_failure) slowest_failure = took;
        if (st == NATSIO_ERR_NO_STREAM_RESPONSE) no_response++;
        else if (st == NATSIO_ERR_TIMEOUT) timeouts++;
        else {
            other++;
            other_status = st;
        }
    }
    int new_leader = cluster_stream_leader(cl, "KV_fast", 2, 20000);
    printf("kv put across a leader kill: %d puts, %d no stream response, %d timeouts, %d other, slowest failure "
           "%lld ms, new leader n%d after %lld ms\n",
           puts, no_response, timeouts, other, (long long)slowest_failure, new_leader,
           (long long)(nt_now_ms() - killed_at));
    NT_CHECK_MSG(other == 0, "unexpected status %s", natsio_status_str(other_status));
    NT_CHECK_MSG(ok_after == 5, "puts did not succeed again within 60 s");
    NT_CHECK_MSG(no_response > 0, "no put met the leaderless window");
    /* A put in flight to the killed leader may wait out its timeout; no
     * other may. */
    NT_CHECK_MSG(timeouts <= 1, "%d puts timed out", timeouts);
    if (timeouts == 0)
        NT_CHECK_MSG(slowest_failure < JS_TIMEOUT_MS / 2, "a failed put took %lld ms of the %d ms timeout",
                     (long long)slowest_failure, JS_TIMEOUT_MS);
}

/* ---- R3 publishes across step-downs and a leader kill --------------------- */

/* At least this many rounds, and on until the faults are done. */
#define PUB_ROUNDS 400
#define PUB_ROUNDS_MAX 20000

typedef struct {
    cluster *cl;
    atomic_int progress; /* publishes made so far */
    atomic_bool done;
    atomic_bool faults_done;
    int stepdowns;
    int killed;
    bool failed;
} fault_plan;

/* Three stream-leader step-downs, then a kill of the leader, each once the
 * publisher has made another 50 publishes. */
static void *inject_stream_faults(void *arg) {
    fault_plan *p = (fault_plan *)arg;
    p->killed = -1;
    for (int step = 0; step < 4 && !atomic_load(&p->done); step++) {
        int at = atomic_load(&p->progress) + 50;
        while (atomic_load(&p->progress) < at && !atomic_load(&p->done)) nt_sleep_ms(2);
        if (step < 3) {
            if (cluster_stream_stepdown(p->cl, "ORDERS", 3, 20000) < 0) p->failed = true;
            else p->stepdowns++;
        } else {
            int leader = cluster_stream_leader(p->cl, "ORDERS", 3, 20000);
            if (leader < 0) p->failed = true;
            else {
                cluster_kill_node(p->cl, leader);
                p->killed = leader;
            }
        }
    }
    atomic_store(&p->faults_done, true);
    return NULL;
}

static natsio_status publish_with_id(natsio_js *js, const char *id, natsio_token **async_out) {
    natsio_js_publish_options po;
    natsio_js_publish_options_init(&po);
    po.msg_id = id;
    if (async_out) return natsio_js_publish_async(js, "orders.new", id, strlen(id), &po, async_out);
    natsio_pub_ack *ack = NULL;
    natsio_status st = natsio_js_publish(js, "orders.new", id, strlen(id), &po, &ack);
    natsio_pub_ack_free(ack);
    return st;
}

/* Sync and async publishes (each with its msg-id) while the stream leader
 * steps down three times and is then killed: every publish ends with an
 * ack or an error within its timeout, none hangs; republishing the errored
 * ones (same msg-id) leaves every message in the stream exactly once. */
static void test_r3_publishes_across_stepdowns_and_leader_kill(void) {
    cluster *cl = cluster_start_js(NULL);
    NT_CHECK(cl != NULL);
    natsio_client *c = moving_client(cl, 0);
    NT_CHECK(c != NULL);
    natsio_js *js = js_with_timeout(c, JS_TIMEOUT_MS);
    NT_CHECK(js != NULL);
    NT_CHECK(cluster_stream_create(js, "{\"name\":\"ORDERS\",\"subjects\":[\"orders.>\"],\"num_replicas\":3,"
                               "\"duplicate_window\":\"2m\"}"));
    NT_CHECK(cluster_stream_leader(cl, "ORDERS", 3, 20000) >= 0);

    fault_plan plan = {.cl = cl};
    pthread_t faults;
    NT_CHECK(pthread_create(&faults, NULL, inject_stream_faults, &plan) == 0);
    static char ids[2 * PUB_ROUNDS_MAX][16];
    static bool acked[2 * PUB_ROUNDS_MAX];
    memset(acked, 0, sizeof acked);
    int errors = 0, async_errors = 0;
    int64_t slowest = 0;
    int64_t t_start = nt_now_ms();
    int rounds = 0;
    for (int r = 0; r < PUB_ROUNDS_MAX && (r < PUB_ROUNDS || !atomic_load(&plan.faults_done)); r++) {
        rounds = r + 1;
        /* One sync and one async publish per round. */
        snprintf(ids[2 * r], sizeof ids[0], "s-%d", r);
        snprintf(ids[2 * r + 1], sizeof ids[0], "a-%d", r);
        natsio_token *t = NULL;
        int64_t t0 = nt_now_ms();
        natsio_status st = publish_with_id(js, ids[2 * r + 1], &t);
        if (st == NATSIO_OK) {
            st = token_outcome(t, JS_TIMEOUT_MS + 2000);
            natsio_token_free(t);
            if (st == NATSIO_ERR_TIMEOUT) st = NATSIO_ERR_ASYNC_PUBLISH_TIMEOUT;
        }
        acked[2 * r + 1] = st == NATSIO_OK;
        async_errors += st != NATSIO_OK;
        natsio_status sst = publish_with_id(js, ids[2 * r], NULL);
        acked[2 * r] = sst == NATSIO_OK;
        errors += sst != NATSIO_OK;
        int64_t took = nt_now_ms() - t0;
        if (took > slowest) slowest = took;
        atomic_store(&plan.progress, r + 1);
    }
    atomic_store(&plan.done, true);
    pthread_join(faults, NULL);
    NT_CHECK_MSG(!plan.failed, "a fault could not be injected");
    NT_CHECK_INT_EQ(plan.stepdowns, 3);
    NT_CHECK(plan.killed >= 0);
    /* Two publishes per round, each bounded by its timeout: none hung. */
    NT_CHECK_MSG(slowest <= 2 * (JS_TIMEOUT_MS + 2000), "a round took %lld ms", (long long)slowest);

    /* Republish what failed, with the same msg-id, until acked. */
    int republished = 0;
    for (int i = 0; i < 2 * rounds; i++) {
        for (int attempt = 0; !acked[i] && attempt < 20; attempt++) {
            acked[i] = publish_with_id(js, ids[i], NULL) == NATSIO_OK;
            republished++;
        }
        NT_CHECK_MSG(acked[i], "%s never acked", ids[i]);
    }

    /* The stream holds each message exactly once. */
    char *info = NULL;
    NT_CHECK_INT_EQ(natsio_js_stream_info(js, "ORDERS", &info), NATSIO_OK);
    int64_t msgs = -1;
    bool have = json_int(info, "messages", &msgs);
    natsio_string_free(info);
    NT_CHECK(have);
    static unsigned char seen[2 * PUB_ROUNDS_MAX];
    memset(seen, 0, sizeof seen);
    int dups = 0;
    for (uint64_t seq = 1; seq <= (uint64_t)msgs; seq++) {
        natsio_stored_msg *m = NULL;
        natsio_status st = natsio_js_stream_get_msg(js, "ORDERS", seq, NULL, &m);
        NT_CHECK_MSG(st == NATSIO_OK, "get seq %llu: %s", (unsigned long long)seq, natsio_status_str(st));
        char id[16];
        snprintf(id, sizeof id, "%.*s", (int)natsio_stored_msg_data_len(m), natsio_stored_msg_data(m));
        natsio_stored_msg_free(m);
        int n = atoi(id + 2);
        int i = 2 * n + (id[0] == 'a');
        NT_CHECK_MSG(n >= 0 && n < rounds && (id[0] == 'a' || id[0] == 's'), "unexpected %s", id);
        if (seen[i]) dups++;
        seen[i] = 1;
    }
    printf("R3 publishes: %d sync + %d async in %lld ms across 3 step-downs and a kill of n%d: %d sync and %d async "
           "errors, %d republished, slowest round %lld ms, stream holds %lld, duplicates %d\n",
           rounds, rounds, (long long)(nt_now_ms() - t_start), plan.killed, errors, async_errors, republished,
           (long long)slowest, (long long)msgs, dups);
    NT_CHECK_INT_EQ(dups, 0);
    NT_CHECK_INT_EQ(msgs, 2 * rounds);
}

int main(int argc, char **argv) {
    static const nt_case cases[] = {
        NT_CASE(test_kv_put_during_leader_kill_fails_fast),
        NT_CASE(test_r3_publishes_across_stepdowns_and_leader_kill),
    };
    return nt_main(argc, argv, cases, NT_COUNT(cases));
}
