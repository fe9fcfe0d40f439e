/*
 * A client in a 3-node nats-server cluster (routes on loopback ports):
 * discovery of the other nodes (and the pool that lists them), replacing
 * the pool, moving to another node when its node dies,
 * a lame-duck move without losing a steady publisher's messages, and the
 * order and count of lifecycle events (none after natsio_client_free).
 *
 * Every case starts its own cluster: the faults it injects (SIGKILL,
 * SIGSTOP, lame duck) leave the nodes unusable for the next case.
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

#define NODES CLUSTER_NODES

/* ":PORT" of a node's client port, for matching URLs. */
static const char *port_suffix(char *buf, size_t cap, const nt_server *s) {
    snprintf(buf, cap, ":%d", nt_server_port(s));
    return buf;
}

/* ---- event log ------------------------------------------------------------ */

#define MAX_EVENTS 64

typedef struct {
    pthread_mutex_t lock;
    int count;
    natsio_event_kind kind[MAX_EVENTS];
    natsio_status status[MAX_EVENTS];
    char text[MAX_EVENTS][256];
    atomic_int calls;    /* every call, also those past MAX_EVENTS */
    atomic_int released; /* calls of the release function */
} event_log;

static void event_log_free(void *arg) {
    event_log *log = (event_log *)arg;
    pthread_mutex_destroy(&log->lock);
    free(log);
}

static event_log *event_log_new(void) {
    event_log *log = (event_log *)calloc(1, sizeof(*log));
    if (!log) {
        nt_fail_at(__FILE__, __LINE__, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&log->lock, NULL);
    /* Registered first, so it runs after the clients using it are freed. */
    nt_cleanup(event_log_free, log);
    return log;
}

static void on_event(void *user_data, natsio_event_kind kind, natsio_status status, const char *text) {
    event_log *log = (event_log *)user_data;
    pthread_mutex_lock(&log->lock);
    if (log->count < MAX_EVENTS) {
        log->kind[log->count] = kind;
        log->status[log->count] = status;
        snprintf(log->text[log->count], sizeof log->text[0], "%s", text ? text : "");
        log->count++;
    }
    pthread_mutex_unlock(&log->lock);
    atomic_fetch_add(&log->calls, 1);
}

static void on_event_release(void *user_data) {
    atomic_fetch_add(&((event_log *)user_data)->released, 1);
}

static int events_of(event_log *log, natsio_event_kind kind) {
    int n = 0;
    pthread_mutex_lock(&log->lock);
    for (int i = 0; i < log->count; i++) n += log->kind[i] == kind;
    pthread_mutex_unlock(&log->lock);
    return n;
}

/* The log's kinds, SERVERS_DISCOVERED and RECONNECT_FAILED left out (the
 * first may come at any time while nodes join, the second once per failed
 * attempt, as many as timing makes), as a string like
 * "CONNECTED,DISCONNECTED". */
static const char *kind_name(natsio_event_kind k) {
    switch (k) {
    case NATSIO_EVENT_CONNECTED: return "CONNECTED";
    case NATSIO_EVENT_DISCONNECTED: return "DISCONNECTED";
    case NATSIO_EVENT_RECONNECTED: return "RECONNECTED";
    case NATSIO_EVENT_LAME_DUCK: return "LAME_DUCK";
    case NATSIO_EVENT_SERVERS_DISCOVERED: return "SERVERS_DISCOVERED";
    case NATSIO_EVENT_CLOSED: return "CLOSED";
    case NATSIO_EVENT_RECONNECT_FAILED: return "RECONNECT_FAILED";
    }
    return "?";
}

static void lifecycle_sequence(event_log *log, char *out, size_t cap) {
    out[0] = '\0';
    pthread_mutex_lock(&log->lock);
    for (int i = 0; i < log->count; i++) {
        if (log->kind[i] == NATSIO_EVENT_SERVERS_DISCOVERED || log->kind[i] == NATSIO_EVENT_RECONNECT_FAILED)
            continue;
        if (out[0]) strncat(out, ",", cap - strlen(out) - 1);
        strncat(out, kind_name(log->kind[i]), cap - strlen(out) - 1);
    }
    pthread_mutex_unlock(&log->lock);
}

/* Every event with its text, on stderr: what a failed case saw. */
static void print_events(event_log *log) {
    pthread_mutex_lock(&log->lock);
    for (int i = 0; i < log->count; i++)
        fprintf(stderr, "  event %d: %s %s\n", i, kind_name(log->kind[i]), log->text[i]);
    pthread_mutex_unlock(&log->lock);
}

typedef struct {
    event_log *log;
    natsio_event_kind kind;
    int at_least;
} event_wait;

static bool event_count_reached(void *arg) {
    event_wait *w = (event_wait *)arg;
    return events_of(w->log, w->kind) >= w->at_least;
}

static bool wait_events(event_log *log, natsio_event_kind kind, int at_least, int64_t timeout_ms) {
    event_wait w = {log, kind, at_least};
    return nt_wait_until(event_count_reached, &w, timeout_ms);
}

/* ---- clients ------------------------------------------------------------ */

/* Options for the client under test: only `url` configured, servers tried in
 * order, short waits so moves are quick, and the event log attached. */
static natsio_options *moving_client_options_owned(const char *url, event_log *log) {
    natsio_options *o = NULL;
    if (natsio_options_new(&o) != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "natsio_options_new failed");
        return NULL;
    }
    bool ok = natsio_options_set_url(o, url) == NATSIO_OK &&
              natsio_options_set_no_randomize(o, true) == NATSIO_OK &&
              natsio_options_set_max_reconnect_attempts(o, -1) == NATSIO_OK &&
              natsio_options_set_reconnect_wait(o, 50, 200) == NATSIO_OK &&
              natsio_options_set_reconnect_jitter(o, 10, 10) == NATSIO_OK &&
              natsio_options_set_connect_timeout_ms(o, 1000) == NATSIO_OK &&
              natsio_options_set_name(o, "mover") == NATSIO_OK;
    if (ok && log)
        ok = natsio_options_set_event_callback(o, on_event, log, on_event_release) == NATSIO_OK;
    if (!ok) {
        nt_fail_at(__FILE__, __LINE__, "setting options: %s", natsio_last_error());
        natsio_options_free(o);
        return NULL;
    }
    return o;
}

/* As above, freed when the case ends. */
static natsio_options *moving_client_options(const char *url, event_log *log) {
    natsio_options *o = moving_client_options_owned(url, log);
    if (o) nt_cleanup(options_free_cb, o);
    return o;
}

/* A client pinned to one node: it ignores discovered servers and never
 * moves, so it observes the cluster from a fixed place. */
static natsio_client *connect_pinned(const nt_server *node) {
    natsio_options *o = NULL;
    if (natsio_options_new(&o) != NATSIO_OK) return NULL;
    natsio_options_set_url(o, nt_server_url(node));
    natsio_options_set_ignore_discovered_servers(o, true);
    natsio_options_set_name(o, "watcher");
    natsio_client *c = connect_with(o);
    natsio_options_free(o);
    return c;
}

/* Interest crosses routes asynchronously: publish `probe` from `pub` until
 * `sub` (subscribed elsewhere, to a wildcard covering it) receives one. */
static bool await_route_interest(natsio_client *pub, natsio_sub *sub, const char *probe) {
    int64_t deadline = nt_now_ms() + 15000;
    while (nt_now_ms() < deadline) {
        if (natsio_client_publish(pub, probe, "p", 1) != NATSIO_OK) return false;
        natsio_client_flush(pub, 2000);
        natsio_msg *m = NULL;
        if (natsio_sub_next(sub, 50, &m) == NATSIO_OK) {
            bool hit = strcmp(natsio_msg_subject(m), probe) == 0;
            natsio_msg_free(m);
            if (hit) return true;
        }
    }
    return false;
}

/* Reads `n` messages on `subject` (skipping probes on other subjects) and
 * checks their payloads are prefix0..prefix(n-1) in order. Returns how many
 * matched before the first mismatch or timeout. */
static int read_sequence(natsio_sub *sub, const char *subject, const char *prefix, int n) {
    int matched = 0;
    while (matched < n) {
        natsio_msg *m = NULL;
        natsio_status st = natsio_sub_next(sub, 5000, &m);
        if (st != NATSIO_OK) {
            nt_fail_at(__FILE__, __LINE__, "message %s%d of %d: %s", prefix, matched, n,
                       natsio_status_str(st));
            return matched;
        }
        if (strcmp(natsio_msg_subject(m), subject) != 0) {
            natsio_msg_free(m);
            continue;
        }
        char want[32];
        snprintf(want, sizeof want, "%s%d", prefix, matched);
        bool ok = natsio_msg_data_len(m) == strlen(want) && memcmp(natsio_msg_data(m), want, strlen(want)) == 0;
        if (!ok) {
            nt_fail_at(__FILE__, __LINE__, "expected payload %s, got %.*s", want, (int)natsio_msg_data_len(m),
                       natsio_msg_data(m));
            natsio_msg_free(m);
            return matched;
        }
        natsio_msg_free(m);
        matched++;
    }
    return matched;
}

static bool publish_sequence(natsio_client *c, const char *subject, const char *prefix, int n) {
    for (int i = 0; i < n; i++) {
        char payload[32];
        int len = snprintf(payload, sizeof payload, "%s%d", prefix, i);
        natsio_status st = natsio_client_publish(c, subject, payload, (size_t)len);
        if (st != NATSIO_OK) {
            nt_fail_at(__FILE__, __LINE__, "publish %s: %s (%s)", payload, natsio_status_str(st),
                       natsio_last_error());
            return false;
        }
    }
    return true;
}

/* Nothing more than expected: no further message on `subject` within 200 ms. */
static bool no_more_on(natsio_sub *sub, const char *subject) {
    int64_t deadline = nt_now_ms() + 200;
    while (nt_now_ms() < deadline) {
        natsio_msg *m = NULL;
        if (natsio_sub_next(sub, 50, &m) != NATSIO_OK) continue;
        bool extra = strcmp(natsio_msg_subject(m), subject) == 0;
        natsio_msg_free(m);
        if (extra) return false;
    }
    return true;
}

/* True when one of the servers in the client's pool contains `needle`. */
static bool servers_list_has(natsio_client *c, const char *needle) {
    natsio_string_list *servers = NULL;
    if (natsio_client_servers(c, &servers) != NATSIO_OK) return false;
    bool found = false;
    for (size_t i = 0; i < natsio_string_list_count(servers); i++)
        found = found || strstr(natsio_string_list_get(servers, i), needle) != NULL;
    natsio_string_list_free(servers);
    return found;
}

typedef struct {
    natsio_client *client;
    const char *needle[2];
} servers_wait;

static bool servers_known(void *arg) {
    servers_wait *w = (servers_wait *)arg;
    return servers_list_has(w->client, w->needle[0]) && servers_list_has(w->client, w->needle[1]);
}

/* Which node the client is connected to, or -1. */
static int current_node(natsio_client *c, cluster *cl) {
    char *url = NULL;
    if (natsio_client_connected_url(c, &url) != NATSIO_OK) return -1;
    int found = -1;
    for (int i = 0; i < NODES; i++) {
        char port[16];
        size_t len = strlen(url);
        port_suffix(port, sizeof port, cl->node[i]);
        size_t plen = strlen(port);
        if (len >= plen && strcmp(url + len - plen, port) == 0) found = i;
    }
    natsio_string_free(url);
    return found;
}

/* Replacing the pool (nats.go's SetServerPool) keeps the connection; the
 * next reconnect tries the new servers in order (a dead one first, counted
 * in its reconnects) and a server kept across a replacement keeps its
 * count. Bad lists change nothing. */
static void test_set_server_pool_moves_on_the_next_reconnect(void) {
    nt_server *a = start_server(NULL);
    nt_server *b = start_server(NULL);
    NT_CHECK(a != NULL && b != NULL);
    char dead[64], port_a[16], port_b[16], port_dead[16];
    int dead_port = nt_free_port();
    snprintf(dead, sizeof dead, "nats://127.0.0.1:%d", dead_port);
    snprintf(port_dead, sizeof port_dead, ":%d", dead_port);
    port_suffix(port_a, sizeof port_a, a);
    port_suffix(port_b, sizeof port_b, b);
    event_log *log = event_log_new();
    NT_CHECK(log != NULL);
    natsio_options *o = moving_client_options(nt_server_url(a), log);
    NT_CHECK(o != NULL);
    natsio_client *c = connect_with(o);
    NT_CHECK(c != NULL);

    natsio_server_list *pool = kept_server_pool(c);
    NT_CHECK(pool != NULL);
    NT_CHECK_INT_EQ(natsio_server_list_count(pool), 1);
    const natsio_server *first = natsio_server_list_get(pool, 0);
    NT_CHECK_STR_EQ(natsio_server_url(first), nt_server_url(a));
    NT_CHECK(natsio_server_did_connect(first) && !natsio_server_is_discovered(first));
    NT_CHECK_INT_EQ(natsio_server_reconnects(first), 0);
    NT_CHECK(natsio_server_list_get(pool, 1) == NULL);

    const char *next[] = {dead, nt_server_url(b)};
    NT_CHECK_INT_EQ(natsio_client_set_server_pool(c, next, 2), NATSIO_OK);
    /* The connection to A stays up; the pool is the new list, in order. */
    connected_to_wait at_a = {c, port_a};
    NT_CHECK(client_connected_to(&at_a));
    NT_CHECK_INT_EQ(natsio_client_flush(c, 2000), NATSIO_OK);
    pool = kept_server_pool(c);
    NT_CHECK(pool != NULL && natsio_server_list_count(pool) == 2);
    NT_CHECK_STR_EQ(natsio_server_url(natsio_server_list_get(pool, 0)), dead);
    NT_CHECK_STR_EQ(natsio_server_url(natsio_server_list_get(pool, 1)), nt_server_url(b));
    NT_CHECK(!natsio_server_did_connect(natsio_server_list_get(pool, 1)));

    /* The next reconnect: the dead server first, then B. */
    NT_CHECK_INT_EQ(natsio_client_force_reconnect(c), NATSIO_OK);
    connected_to_wait at_b = {c, port_b};
    NT_CHECK_MSG(nt_wait_until(client_connected_to, &at_b, 10000), "never moved to B");
    pool = kept_server_pool(c);
    const natsio_server *d = pool_server(pool, port_dead);
    const natsio_server *sb = pool_server(pool, port_b);
    NT_CHECK(d != NULL && sb != NULL);
    NT_CHECK_MSG(natsio_server_reconnects(d) >= 1, "dead server's reconnects: %u", natsio_server_reconnects(d));
    NT_CHECK(!natsio_server_did_connect(d));
    NT_CHECK(natsio_server_did_connect(sb));
    NT_CHECK_INT_EQ(natsio_server_reconnects(sb), 0);
    uint32_t dead_tries = natsio_server_reconnects(d);
    /* Each failed attempt was told (nats.go's ReconnectErrCB), naming the
     * server, between the disconnect and the reconnect. */
    NT_CHECK(wait_events(log, NATSIO_EVENT_RECONNECTED, 1, 5000));
    pthread_mutex_lock(&log->lock);
    int failed = 0, disconnected_at = -1, reconnected_at = -1;
    bool named = true, in_between = true;
    for (int i = 0; i < log->count; i++) {
        if (log->kind[i] == NATSIO_EVENT_DISCONNECTED && disconnected_at < 0) disconnected_at = i;
        if (log->kind[i] == NATSIO_EVENT_RECONNECTED && reconnected_at < 0) reconnected_at = i;
        if (log->kind[i] != NATSIO_EVENT_RECONNECT_FAILED) continue;
        failed++;
        named = named && strstr(log->text[i], dead) != NULL && log->status[i] != NATSIO_OK;
        in_between = in_between && disconnected_at >= 0 && reconnected_at < 0;
    }
    pthread_mutex_unlock(&log->lock);
    if (!named || !in_between) print_events(log);
    NT_CHECK(named && in_between);
    NT_CHECK_MSG(failed >= 1 && (uint32_t)failed == dead_tries, "%d RECONNECT_FAILED events, %u reconnects", failed,
                 dead_tries);

    /* Kept servers keep their bookkeeping, whatever the order or spelling. */
    char dead_bare[64];
    snprintf(dead_bare, sizeof dead_bare, "127.0.0.1:%d", dead_port);
    const char *again[] = {nt_server_url(b), dead_bare, nt_server_url(a)};
    NT_CHECK_INT_EQ(natsio_client_set_server_pool(c, again, 3), NATSIO_OK);
    pool = kept_server_pool(c);
    NT_CHECK(pool != NULL && natsio_server_list_count(pool) == 3);
    NT_CHECK(natsio_server_did_connect(natsio_server_list_get(pool, 0)));
    NT_CHECK_STR_EQ(natsio_server_url(natsio_server_list_get(pool, 1)), dead_bare);
    NT_CHECK(natsio_server_reconnects(natsio_server_list_get(pool, 1)) >= dead_tries);
    /* A was dropped by the earlier replacement: it comes back new. */
    NT_CHECK(!natsio_server_did_connect(natsio_server_list_get(pool, 2)));

    /* Bad lists fail and change nothing. */
    const char *bad[] = {nt_server_url(a), "nats://127.0.0.1:notaport"};
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_client_set_server_pool(c, bad, 2));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_client_set_server_pool(c, again, 0));
    EXPECT_NULL_ARG("urls", natsio_client_set_server_pool(c, NULL, 1));
    const char *null_item[] = {nt_server_url(a), NULL};
    EXPECT_NULL_ARG("url", natsio_client_set_server_pool(c, null_item, 2));
    EXPECT_NULL_ARG("c", natsio_client_set_server_pool(NULL, again, 1));
    natsio_server_list *none = SENTINEL;
    EXPECT_NULL_ARG("c", natsio_client_server_pool(NULL, &none));
    NT_CHECK(none == SENTINEL);
    EXPECT_NULL_ARG("list_out", natsio_client_server_pool(c, NULL));
    pool = kept_server_pool(c);
    NT_CHECK(pool != NULL && natsio_server_list_count(pool) == 3);
    /* NULL-tolerant getters. */
    NT_CHECK(natsio_server_list_count(NULL) == 0 && natsio_server_list_get(NULL, 0) == NULL);
    NT_CHECK(natsio_server_url(NULL) == NULL && natsio_server_reconnects(NULL) == 0);
    NT_CHECK(!natsio_server_did_connect(NULL) && !natsio_server_is_discovered(NULL));
    natsio_server_list_free(NULL);

    /* Closed: the pool is still readable, no longer replaceable. */
    natsio_client_close(c);
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_client_set_server_pool(c, again, 3));
    NT_CHECK(kept_server_pool(c) != NULL);
}

/* ---- cases ------------------------------------------------------------ */

/* The client is given node A only. Nodes B and C join the cluster after it
 * connected: A announces them in an INFO update, the client adds them to its
 * pool and reports them with SERVERS_DISCOVERED. */
static void test_discovers_nodes_joining_later(void) {
    cluster *cl = cluster_plan(NULL);
    NT_CHECK(cl != NULL);
    NT_CHECK(cluster_start_node(cl, 0));
    event_log *log = event_log_new();
    NT_CHECK(log != NULL);
    natsio_options *o = moving_client_options(nt_server_url(cl->node[0]), log);
    NT_CHECK(o != NULL);
    natsio_client *c = connect_with(o);
    NT_CHECK(c != NULL);

    char port_a[16], port_b[16], port_c[16];
    port_suffix(port_a, sizeof port_a, cl->node[0]);
    NT_CHECK(servers_list_has(c, port_a));

    NT_CHECK(cluster_start_node(cl, 1));
    NT_CHECK(cluster_start_node(cl, 2));
    port_suffix(port_b, sizeof port_b, cl->node[1]);
    port_suffix(port_c, sizeof port_c, cl->node[2]);
    servers_wait w = {c, {port_b, port_c}};
    if (!nt_wait_until(servers_known, &w, 15000)) {
        natsio_string_list *servers = NULL;
        char *info = NULL, joined[512] = "?";
        if (natsio_client_servers(c, &servers) == NATSIO_OK) string_list_join(servers, joined, sizeof joined);
        natsio_client_server_info(c, &info);
        nt_fail_at(__FILE__, __LINE__, "B (%s) and C (%s) never appeared in natsio_client_servers: \"%s\"; INFO: %s",
                   port_b, port_c, joined, info ? info : "?");
        natsio_string_list_free(servers);
        natsio_string_free(info);
        return;
    }

    /* SERVERS_DISCOVERED named the new URLs (in one or two events). */
    NT_CHECK(wait_events(log, NATSIO_EVENT_SERVERS_DISCOVERED, 1, 2000));
    int64_t deadline = nt_now_ms() + 2000;
    bool b_named = false, c_named = false;
    while (!(b_named && c_named) && nt_now_ms() < deadline) {
        pthread_mutex_lock(&log->lock);
        for (int i = 0; i < log->count; i++) {
            if (log->kind[i] != NATSIO_EVENT_SERVERS_DISCOVERED) continue;
            b_named = b_named || strstr(log->text[i], port_b) != NULL;
            c_named = c_named || strstr(log->text[i], port_c) != NULL;
            NT_CHECK_MSG(strstr(log->text[i], port_a) == NULL, "A reported as discovered: %s", log->text[i]);
        }
        pthread_mutex_unlock(&log->lock);
        nt_sleep_ms(10);
    }
    NT_CHECK_MSG(b_named && c_named, "SERVERS_DISCOVERED did not name both new nodes");

    /* The pool tells configured A from the discovered nodes. */
    natsio_server_list *pool = kept_server_pool(c);
    NT_CHECK(pool != NULL);
    const natsio_server *sa = pool_server(pool, port_a), *sb = pool_server(pool, port_b), *sc = pool_server(pool, port_c);
    NT_CHECK(sa != NULL && sb != NULL && sc != NULL);
    NT_CHECK(!natsio_server_is_discovered(sa) && natsio_server_did_connect(sa));
    NT_CHECK(natsio_server_is_discovered(sb) && !natsio_server_did_connect(sb));
    NT_CHECK(natsio_server_is_discovered(sc) && !natsio_server_did_connect(sc));

    /* Discovery did not disturb the connection. */
    char seq[256];
    lifecycle_sequence(log, seq, sizeof seq);
    NT_CHECK_STR_EQ(seq, "CONNECTED");
    NT_CHECK_INT_EQ(current_node(c, cl), 0);
    NT_CHECK_INT_EQ(natsio_client_flush(c, 2000), NATSIO_OK);
}

/* With ignore_discovered_servers the pool stays as configured. */
static void test_ignore_discovered_servers_keeps_the_pool(void) {
    cluster *cl = cluster_start(NULL);
    NT_CHECK(cl != NULL);
    natsio_options *o = moving_client_options(nt_server_url(cl->node[0]), NULL);
    NT_CHECK(o != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_ignore_discovered_servers(o, true), NATSIO_OK);
    natsio_client *c = connect_with(o);
    NT_CHECK(c != NULL);
    /* The INFO of a formed cluster lists the other nodes: wait for it. */
    int64_t deadline = nt_now_ms() + 10000;
    char port_b[16];
    port_suffix(port_b, sizeof port_b, cl->node[1]);
    bool announced = false;
    while (!announced && nt_now_ms() < deadline) {
        char *info = NULL;
        if (natsio_client_server_info(c, &info) == NATSIO_OK) {
            announced = strstr(info, port_b) != NULL;
            natsio_string_free(info);
        }
        if (!announced) nt_sleep_ms(20);
    }
    NT_CHECK_MSG(announced, "node A's INFO never listed node B");
    natsio_string_list *servers = NULL;
    NT_CHECK_INT_EQ(natsio_client_servers(c, &servers), NATSIO_OK);
    kept_list(servers);
    char port_a[16];
    port_suffix(port_a, sizeof port_a, cl->node[0]);
    char joined[512];
    string_list_join(servers, joined, sizeof joined);
    NT_CHECK_MSG(natsio_string_list_count(servers) == 1 && strstr(natsio_string_list_get(servers, 0), port_a) != NULL,
                 "pool changed despite ignore_discovered_servers: %s", joined);
}

/* The client's node dies while the other two are unresponsive, so the
 * publishes that follow are made while disconnected; then they come back,
 * the client moves to one of them and everything arrives, exactly once and
 * in order, at a subscriber on another node and at the client's own
 * (re-created) subscription. */
static void test_node_killed_client_moves_without_loss(void) {
    cluster *cl = cluster_start(NULL);
    NT_CHECK(cl != NULL);
    event_log *log = event_log_new();
    NT_CHECK(log != NULL);
    natsio_options *o = moving_client_options(nt_server_url(cl->node[0]), log);
    NT_CHECK(o != NULL);
    natsio_client *mover = connect_with(o);
    NT_CHECK(mover != NULL);
    char port_b[16], port_c[16];
    port_suffix(port_b, sizeof port_b, cl->node[1]);
    port_suffix(port_c, sizeof port_c, cl->node[2]);
    servers_wait w = {mover, {port_b, port_c}};
    NT_CHECK_MSG(nt_wait_until(servers_known, &w, 15000), "B and C were not discovered");

    natsio_client *watcher = connect_pinned(cl->node[1]);
    NT_CHECK(watcher != NULL);
    natsio_sub *far = subscribe(watcher, "cl.kill.>", NULL);
    natsio_sub *own = subscribe(mover, "cl.kill.>", NULL);
    NT_CHECK(far && own);
    NT_CHECK_INT_EQ(natsio_client_flush(watcher, 2000), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_flush(mover, 2000), NATSIO_OK);
    NT_CHECK_MSG(await_route_interest(mover, far, "cl.kill.probe"), "interest never crossed the route");

    NT_CHECK(publish_sequence(mover, "cl.kill.data", "b", 100));
    NT_CHECK_INT_EQ(natsio_client_flush(mover, 2000), NATSIO_OK);
    /* Received on B before A dies: A forwarded them over the route. */
    NT_CHECK_INT_EQ(read_sequence(far, "cl.kill.data", "b", 100), 100);
    NT_CHECK_INT_EQ(read_sequence(own, "cl.kill.data", "b", 100), 100);

    NT_CHECK_MSG(cluster_pause(cl, 1) && cluster_pause(cl, 2), "B and C did not stop");
    nt_server_kill(cl->node[0]);
    bool reconnecting = wait_status(mover, NATSIO_CONN_RECONNECTING, 5000);
    /* The events tell a loss never seen from a move made too soon. */
    if (!reconnecting) print_events(log);
    NT_CHECK_MSG(reconnecting, "status %d, not RECONNECTING", (int)natsio_client_status(mover));
    NT_CHECK(wait_events(log, NATSIO_EVENT_DISCONNECTED, 1, 2000));
    NT_CHECK(publish_sequence(mover, "cl.kill.data", "d", 50));
    /* B and C are frozen: these 50 were made while disconnected. */
    NT_CHECK_INT_EQ(natsio_client_status(mover), NATSIO_CONN_RECONNECTING);
    cluster_resume(cl, 1);
    cluster_resume(cl, 2);

    NT_CHECK_MSG(wait_status(mover, NATSIO_CONN_CONNECTED, 15000), "did not reconnect (status %d)",
                 (int)natsio_client_status(mover));
    int now_on = current_node(mover, cl);
    NT_CHECK_MSG(now_on == 1 || now_on == 2, "connected to node %d after A died", now_on);
    NT_CHECK(publish_sequence(mover, "cl.kill.data", "a", 50));
    NT_CHECK_INT_EQ(natsio_client_flush(mover, 5000), NATSIO_OK);

    NT_CHECK_INT_EQ(read_sequence(far, "cl.kill.data", "d", 50), 50);
    NT_CHECK_INT_EQ(read_sequence(far, "cl.kill.data", "a", 50), 50);
    NT_CHECK_INT_EQ(read_sequence(own, "cl.kill.data", "d", 50), 50);
    NT_CHECK_INT_EQ(read_sequence(own, "cl.kill.data", "a", 50), 50);
    NT_CHECK(no_more_on(far, "cl.kill.data"));
    NT_CHECK(no_more_on(own, "cl.kill.data"));

    natsio_client_stats stats;
    NT_CHECK_INT_EQ(natsio_client_get_stats(mover, &stats), NATSIO_OK);
    NT_CHECK_INT_EQ(stats.reconnects, 1);
    char seq[256];
    lifecycle_sequence(log, seq, sizeof seq);
    NT_CHECK_STR_EQ(seq, "CONNECTED,DISCONNECTED,RECONNECTED");
    /* RECONNECTED names the new node. */
    pthread_mutex_lock(&log->lock);
    const char *last = log->text[log->count - 1];
    bool names_new = strstr(last, now_on == 1 ? port_b : port_c) != NULL;
    pthread_mutex_unlock(&log->lock);
    NT_CHECK(names_new);
}

#define LDM_MAX 20000

/* A repeat's diagnosis: the arrivals around both of its deliveries (a
 * replayed run and a single stray tell different causes) and the events. */
static void print_arrivals(const char *name, const int *order, int arrivals, int repeated, event_log *log) {
    int first = 0;
    while (order[first] != repeated) first++;
    for (int at = first;; at = arrivals - 1) {
        int from = at > 15 ? at - 15 : 0, to = at + 15 < arrivals ? at + 15 : arrivals - 1;
        printf("%s: arrivals %d..%d around %d:", name, from, to, at);
        for (int i = from; i <= to; i++) printf(" %d", order[i]);
        printf("\n");
        if (at == arrivals - 1) break;
    }
    print_events(log);
}

/* Lame duck on the client's node: the client gets LAME_DUCK, keeps
 * publishing and receiving there while it connects to another node, then
 * lets the old connection go after reading it to its end. A steady
 * publisher (flushing every 10 messages) loses nothing: a subscriber on a
 * third node receives every accepted publish exactly once, and the
 * client's own subscription (which moves with it) every one at least once,
 * a repeat only where the cluster's routing explains it (see below). */
static void test_lame_duck_moves_steady_publisher_without_loss(void) {
    /* lame_duck_duration must be >= 30s; the grace period before the server
     * starts closing clients is short, but the client moves on INFO ldm. */
    cluster *cl = cluster_start("lame_duck_duration: \"30s\"\nlame_duck_grace_period: \"1s\"");
    NT_CHECK(cl != NULL);
    event_log *log = event_log_new();
    NT_CHECK(log != NULL);
    natsio_options *o = moving_client_options(nt_server_url(cl->node[0]), log);
    NT_CHECK(o != NULL);
    natsio_client *mover = connect_with(o);
    NT_CHECK(mover != NULL);
    char port_a[16], port_b[16], port_c[16];
    port_suffix(port_a, sizeof port_a, cl->node[0]);
    port_suffix(port_b, sizeof port_b, cl->node[1]);
    port_suffix(port_c, sizeof port_c, cl->node[2]);
    servers_wait w = {mover, {port_b, port_c}};
    NT_CHECK_MSG(nt_wait_until(servers_known, &w, 15000), "B and C were not discovered");

    /* The far subscriber's node: the client may move there (or to B). */
    const int far_node = 2;
    natsio_client *watcher = connect_pinned(cl->node[far_node]);
    NT_CHECK(watcher != NULL);
    natsio_sub *far = subscribe(watcher, "cl.ldm.>", NULL);
    NT_CHECK(far != NULL);
    NT_CHECK_INT_EQ(natsio_client_flush(watcher, 2000), NATSIO_OK);
    NT_CHECK_MSG(await_route_interest(mover, far, "cl.ldm.probe"), "interest never crossed the route");
    natsio_sub *own = subscribe(mover, "cl.ldm.>", NULL);
    NT_CHECK(own != NULL);
    NT_CHECK_INT_EQ(natsio_client_flush(mover, 2000), NATSIO_OK);

    int published = 0;
    int after_move = 0;
    int published_at_move = 0;
    bool signalled = false;
    int64_t deadline = nt_now_ms() + 20000;
    while (published < LDM_MAX && nt_now_ms() < deadline) {
        char payload[16];
        int len = snprintf(payload, sizeof payload, "%d", published);
        natsio_status st = natsio_client_publish(mover, "cl.ldm.data", payload, (size_t)len);
        NT_CHECK_MSG(st == NATSIO_OK, "publish %d: %s (%s)", published, natsio_status_str(st), natsio_last_error());
        published++;
        if (published % 10 == 0) {
            st = natsio_client_flush(mover, 10000);
            NT_CHECK_MSG(st == NATSIO_OK, "flush after %d: %s (%s)", published, natsio_status_str(st),
                         natsio_last_error());
        }
        if (published == 200) {
            NT_CHECK_INT_EQ(nt_server_signal(cl->node[0], SIGUSR2), 0);
            signalled = true;
        }
        if (signalled && events_of(log, NATSIO_EVENT_RECONNECTED) > 0) {
            if (after_move == 0) published_at_move = published;
            if (++after_move >= 200) break;
        }
        nt_sleep_ms(1);
    }
    NT_CHECK_MSG(after_move >= 200, "no move within 20 s (events: %d)", atomic_load(&log->calls));
    NT_CHECK_INT_EQ(natsio_client_flush(mover, 5000), NATSIO_OK);

    int now_on = current_node(mover, cl);
    /* Every accepted publish arrives exactly once at the far subscriber
     * (order across the two paths, via A's route and via the new node, is
     * not guaranteed there), and at least once at the client's own.
     *
     * The own subscription may see a message twice, as nats.go's may when
     * it reconnects in a cluster: A delivers a publish it read before the
     * move to the client's old connection (read to its end before the
     * move) and routes it to the far subscriber's node; when that is the
     * node the client moved to and the routed copy reaches it after the
     * client's subscription did, that node delivers it too. Such a repeat
     * is told by its source: published before the move (on A), received
     * once by the far subscriber. A publish sent twice would reach the far
     * one twice; one sent after the move cannot come back through A. */
    natsio_sub *subs[2] = {far, own};
    const char *names[2] = {"far", "own"};
    int repeats[2] = {0, 0};
    for (int s = 0; s < 2; s++) {
        static unsigned char seen[LDM_MAX];
        static int order[2 * LDM_MAX];
        memset(seen, 0, sizeof seen);
        int received = 0, arrivals = 0;
        while (received < published) {
            natsio_msg *m = NULL;
            natsio_status st = natsio_sub_next(subs[s], 5000, &m);
            NT_CHECK_MSG(st == NATSIO_OK, "%s: received %d of %d: %s", names[s], received, published,
                         natsio_status_str(st));
            if (strcmp(natsio_msg_subject(m), "cl.ldm.data") != 0) {
                natsio_msg_free(m);
                continue;
            }
            char num[16];
            snprintf(num, sizeof num, "%.*s", (int)natsio_msg_data_len(m), natsio_msg_data(m));
            natsio_msg_free(m);
            int n = atoi(num);
            NT_CHECK_MSG(n >= 0 && n < published, "%s: unexpected payload %s", names[s], num);
            order[arrivals++] = n;
            if (!seen[n]) {
                seen[n] = 1;
                received++;
                continue;
            }
            repeats[s]++;
            /* (The far subscriber, read first, had each exactly once.) */
            bool routed_back = s == 1 && n < published_at_move && now_on == far_node;
            printf("%s: %d received again (%s); SIGUSR2 after 200 published, RECONNECTED seen after %d, now on "
                   "node %d\n",
                   names[s], n, routed_back ? "A's routed copy, delivered by the new node too" : "unexplained",
                   published_at_move, now_on);
            if (!routed_back) print_arrivals(names[s], order, arrivals, n, log);
            NT_CHECK_MSG(routed_back, "%s: message %d received twice", names[s], n);
        }
        NT_CHECK(no_more_on(subs[s], "cl.ldm.data"));
        printf("lame duck: %s subscriber received %d of %d published, 0 lost, %d received again (the client moved "
               "to node %d, after %d published)\n",
               names[s], received, published, repeats[s], now_on, published_at_move);
    }
    NT_CHECK_INT_EQ(repeats[0], 0);

    NT_CHECK_MSG(now_on == 1 || now_on == 2, "on node %d after lame duck of A", now_on);
    char seq[256];
    lifecycle_sequence(log, seq, sizeof seq);
    NT_CHECK_STR_EQ(seq, "CONNECTED,LAME_DUCK,DISCONNECTED,RECONNECTED");
    pthread_mutex_lock(&log->lock);
    bool names_a = false;
    for (int i = 0; i < log->count; i++)
        if (log->kind[i] == NATSIO_EVENT_LAME_DUCK) names_a = strstr(log->text[i], port_a) != NULL;
    pthread_mutex_unlock(&log->lock);
    NT_CHECK_MSG(names_a, "LAME_DUCK does not name node A");
}

/* Exact event sequence over two moves (force_reconnect, then a killed
 * node), CLOSED last, the release function called, and nothing after
 * natsio_client_free returns even as the remaining nodes die. */
static void test_events_in_order_and_none_after_free(void) {
    cluster *cl = cluster_start(NULL);
    NT_CHECK(cl != NULL);
    event_log *log = event_log_new();
    NT_CHECK(log != NULL);
    natsio_options *o = moving_client_options_owned(nt_server_url(cl->node[0]), log);
    NT_CHECK(o != NULL);
    natsio_client *c = NULL; /* freed by this case: nothing may follow natsio_client_free */
    if (natsio_client_connect(o, &c) != NATSIO_OK) natsio_options_free(o);
    NT_CHECK_MSG(c != NULL, "connect: %s", natsio_last_error());
    char port_b[16], port_c[16];
    port_suffix(port_b, sizeof port_b, cl->node[1]);
    port_suffix(port_c, sizeof port_c, cl->node[2]);
    servers_wait w = {c, {port_b, port_c}};
    if (!nt_wait_until(servers_known, &w, 15000)) {
        natsio_client_free(c);
        natsio_options_free(o);
        NT_FAIL("B and C were not discovered");
    }
    natsio_sub *sub = NULL;
    natsio_status st = natsio_client_subscribe(c, "cl.ev", NULL, NULL, &sub);
    if (st != NATSIO_OK) {
        natsio_client_free(c);
        natsio_options_free(o);
        NT_FAIL("subscribe: %s", natsio_status_str(st));
    }
    nt_cleanup(sub_free_cb, sub);

    /* Move 1: force_reconnect goes to another node of the pool. */
    bool ok = natsio_client_force_reconnect(c) == NATSIO_OK && wait_events(log, NATSIO_EVENT_RECONNECTED, 1, 10000);
    int first_move = current_node(c, cl);
    /* Move 2: the node it is on dies. */
    if (ok && first_move > 0) {
        nt_server_kill(cl->node[first_move]);
        ok = wait_events(log, NATSIO_EVENT_RECONNECTED, 2, 10000) && wait_status(c, NATSIO_CONN_CONNECTED, 5000);
    }
    int second_move = current_node(c, cl);
    bool delivers = false;
    if (ok) {
        natsio_client_publish(c, "cl.ev", "x", 1);
        natsio_msg *m = NULL;
        delivers = natsio_sub_next(sub, 5000, &m) == NATSIO_OK;
        natsio_msg_free(m);
    }
    natsio_client_stats stats;
    memset(&stats, 0, sizeof stats);
    natsio_client_get_stats(c, &stats);

    natsio_options_free(o); /* the client keeps the callback alive */
    natsio_client_free(c);
    int calls_at_free = atomic_load(&log->calls);
    char seq[256];
    lifecycle_sequence(log, seq, sizeof seq);

    NT_CHECK_MSG(ok, "moves did not complete: %s", seq);
    NT_CHECK_MSG(first_move == 1 || first_move == 2, "force_reconnect stayed on node %d", first_move);
    NT_CHECK_MSG(second_move >= 0 && second_move != first_move, "second move went to node %d", second_move);
    NT_CHECK(delivers);
    NT_CHECK_INT_EQ(stats.reconnects, 2);
    NT_CHECK_STR_EQ(seq, "CONNECTED,DISCONNECTED,RECONNECTED,DISCONNECTED,RECONNECTED,CLOSED");

    /* Release comes once nothing uses the callback any more. */
    int64_t deadline = nt_now_ms() + 2000;
    while (atomic_load(&log->released) == 0 && nt_now_ms() < deadline) nt_sleep_ms(5);
    NT_CHECK_INT_EQ(atomic_load(&log->released), 1);

    /* Kill every node: a live client would see DISCONNECTED now. */
    for (int i = 0; i < NODES; i++) nt_server_kill(cl->node[i]);
    nt_sleep_ms(300);
    NT_CHECK_INT_EQ(atomic_load(&log->calls), calls_at_free);
    NT_CHECK_INT_EQ(atomic_load(&log->released), 1);
}

int main(int argc, char **argv) {
    static const nt_case cases[] = {
        NT_CASE(test_discovers_nodes_joining_later),
        NT_CASE(test_ignore_discovered_servers_keeps_the_pool),
        NT_CASE(test_node_killed_client_moves_without_loss),
        NT_CASE(test_lame_duck_moves_steady_publisher_without_loss),
        NT_CASE(test_events_in_order_and_none_after_free),
        NT_CASE(test_set_server_pool_moves_on_the_next_reconnect),
    };
    return nt_main(argc, argv, cases, NT_COUNT(cases));
}
