/* See cluster.h. */
#define _POSIX_C_SOURCE 200809L

#include "cluster.h"
#include "util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

static void cluster_cleanup(void *arg) {
    cluster *cl = (cluster *)arg;
    for (int i = 0; i < CLUSTER_NODES; i++) nt_server_stop(cl->node[i]);
    free(cl);
}

cluster *cluster_plan(const char *extra) {
    cluster *cl = (cluster *)calloc(1, sizeof(*cl));
    if (!cl) {
        nt_fail_at(__FILE__, __LINE__, "out of memory");
        return NULL;
    }
    nt_cleanup(cluster_cleanup, cl);
    for (int i = 0; i < CLUSTER_NODES; i++) {
        cl->route_port[i] = nt_free_port();
        cl->monitor_port[i] = nt_free_port();
    }
    for (int i = 0; i < CLUSTER_NODES; i++) {
        char routes[256] = "";
        for (int j = 0; j < CLUSTER_NODES; j++) {
            if (j == i) continue;
            char one[64];
            snprintf(one, sizeof one, "%s\"nats-route://127.0.0.1:%d\"", routes[0] ? ", " : "",
                     cl->route_port[j]);
            strncat(routes, one, sizeof routes - strlen(routes) - 1);
        }
        snprintf(cl->config[i], sizeof cl->config[i],
                 "server_name: \"n%d\"\n"
                 "http: \"127.0.0.1:%d\"\n"
                 "cluster {\n"
                 "  name: \"t\"\n"
                 "  listen: \"127.0.0.1:%d\"\n"
                 "  routes: [%s]\n"
                 "}\n"
                 "%s\n",
                 i, cl->monitor_port[i], cl->route_port[i], routes, extra ? extra : "");
    }
    return cl;
}

bool cluster_start_node(cluster *cl, int i) {
    cl->node[i] = nt_server_start(cl->config[i]);
    if (!cl->node[i]) {
        nt_fail_at(__FILE__, __LINE__, "node %d did not start", i);
        return false;
    }
    return true;
}

/* A client on node i that never moves; NULL if it cannot connect. */
static natsio_client *pinned(cluster *cl, int i) {
    natsio_options *o = NULL;
    if (natsio_options_new(&o) != NATSIO_OK) return NULL;
    natsio_options_set_url(o, nt_server_url(cl->node[i]));
    natsio_options_set_ignore_discovered_servers(o, true);
    natsio_options_set_allow_reconnect(o, false);
    natsio_options_set_connect_timeout_ms(o, 2000);
    natsio_client *c = NULL;
    if (natsio_client_connect(o, &c) != NATSIO_OK) c = NULL;
    natsio_options_free(o);
    return c;
}

natsio_client *cluster_pinned_client(cluster *cl, int i) {
    natsio_client *c = pinned(cl, i);
    if (!c) {
        nt_fail_at(__FILE__, __LINE__, "cannot connect to node %d: %s", i, natsio_last_error());
        return NULL;
    }
    nt_cleanup(client_free_cb, c);
    return c;
}

static bool info_lists_all_nodes(natsio_client *c, cluster *cl) {
    char *info = NULL;
    if (natsio_client_server_info(c, &info) != NATSIO_OK) return false;
    bool all = true;
    for (int i = 0; i < CLUSTER_NODES; i++) {
        char port[24];
        snprintf(port, sizeof port, "127.0.0.1:%d\"", nt_server_port(cl->node[i]));
        all = all && strstr(info, port) != NULL;
    }
    natsio_string_free(info);
    return all;
}

/* Node i's INFO lists every node: its routes are up. */
static bool await_routes_of(cluster *cl, int i, int64_t deadline) {
    natsio_client *c = pinned(cl, i);
    if (!c) return false;
    while (!info_lists_all_nodes(c, cl) && nt_now_ms() < deadline) nt_sleep_ms(20);
    bool ok = info_lists_all_nodes(c, cl);
    natsio_client_free(c);
    return ok;
}

static bool cluster_await_mesh(cluster *cl) {
    int64_t deadline = nt_now_ms() + 15000;
    for (int i = 0; i < CLUSTER_NODES; i++)
        if (!await_routes_of(cl, i, deadline)) return false;
    return true;
}

cluster *cluster_start(const char *extra) {
    cluster *cl = cluster_plan(extra);
    if (!cl) return NULL;
    for (int i = 0; i < CLUSTER_NODES; i++)
        if (!cluster_start_node(cl, i)) return NULL;
    if (!cluster_await_mesh(cl)) {
        nt_fail_at(__FILE__, __LINE__, "the cluster did not form within 15 s");
        return NULL;
    }
    return cl;
}

/* A JetStream API request through node i: the reply's JSON (free with
 * free()), or NULL when nobody answered in time. */
static char *api_request(cluster *cl, int i, const char *subject, const char *body, int64_t timeout_ms) {
    natsio_client *c = pinned(cl, i);
    if (!c) return NULL;
    natsio_msg *reply = NULL;
    char *json = NULL;
    if (natsio_client_request(c, subject, NULL, body, body ? strlen(body) : 0, timeout_ms, &reply) == NATSIO_OK) {
        size_t len = natsio_msg_data_len(reply);
        json = (char *)malloc(len + 1);
        if (json) {
            memcpy(json, natsio_msg_data(reply), len);
            json[len] = '\0';
        }
        natsio_msg_free(reply);
    }
    natsio_client_free(c);
    return json;
}

/* A running node, preferring `avoid`'s neighbours; -1 if none runs. */
static int running_node(cluster *cl, int avoid) {
    for (int k = 1; k <= CLUSTER_NODES; k++) {
        int i = (avoid + k) % CLUSTER_NODES;
        if (cl->node[i] && nt_server_running(cl->node[i])) return i;
    }
    return -1;
}

bool cluster_await_meta_leader(cluster *cl, int64_t timeout_ms) {
    int64_t deadline = nt_now_ms() + timeout_ms;
    for (int i = 0; i < CLUSTER_NODES; i++) {
        if (!cl->node[i] || !nt_server_running(cl->node[i])) continue;
        bool ok = false;
        while (!ok && nt_now_ms() < deadline) {
            char *json = api_request(cl, i, "$JS.API.INFO", NULL, 1000);
            ok = json && !strstr(json, "\"error\"");
            free(json);
            if (!ok) nt_sleep_ms(50);
        }
        if (!ok) return false;
    }
    return true;
}

static int occurrences(const char *s, const char *needle);

/* GET `path` from node i's monitoring port: the body (free with free()),
 * or NULL. */
static char *monitor_get(cluster *cl, int i, const char *path) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return NULL;
    struct timeval tv = {.tv_sec = 1};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)cl->monitor_port[i])};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    char *buf = NULL;
    size_t len = 0, cap = 0;
    char req[256];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", path);
    bool ok = connect(fd, (struct sockaddr *)&addr, sizeof addr) == 0 && write(fd, req, (size_t)n) == n;
    while (ok) { /* HTTP/1.0: the body ends at EOF */
        if (cap - len < 4096) {
            char *grown = (char *)realloc(buf, cap + 65536);
            if (!grown) break;
            buf = grown;
            cap += 65536;
        }
        ssize_t got = read(fd, buf + len, cap - len - 1);
        if (got <= 0) {
            ok = got == 0;
            break;
        }
        len += (size_t)got;
    }
    close(fd);
    char *body = ok && buf ? (buf[len] = '\0', strstr(buf, "\r\n\r\n")) : NULL;
    char *out = body ? strdup(body + 4) : NULL;
    free(buf);
    return out;
}

/* Whether node i leads the meta group and reports `others` peers
 * current in it. */
static bool meta_leader_with_current(cluster *cl, int i, int others) {
    char *jsz = monitor_get(cl, i, "/jsz"); /* pretty-printed */
    const char *meta = jsz ? strstr(jsz, "\"meta_cluster\"") : NULL;
    char me[32];
    snprintf(me, sizeof me, "\"leader\": \"n%d\"", i);
    bool ok = meta && strstr(meta, me) && occurrences(meta, "\"current\": true") >= others;
    free(jsz);
    return ok;
}

bool cluster_await_meta_current(cluster *cl, int64_t timeout_ms) {
    int64_t deadline = nt_now_ms() + timeout_ms;
    while (nt_now_ms() < deadline) {
        int running = 0;
        for (int i = 0; i < CLUSTER_NODES; i++) running += cl->node[i] && nt_server_running(cl->node[i]);
        for (int i = 0; i < CLUSTER_NODES; i++)
            if (cl->node[i] && nt_server_running(cl->node[i]) && meta_leader_with_current(cl, i, running - 1))
                return true;
        nt_sleep_ms(50);
    }
    return false;
}

cluster *cluster_start_js(const char *extra) {
    cluster *cl = cluster_start(extra);
    if (!cl) return NULL;
    if (!cluster_await_meta_leader(cl, 30000)) {
        nt_fail_at(__FILE__, __LINE__, "no JetStream meta leader within 30 s");
        return NULL;
    }
    /* Every peer current in the meta group: an R3 create placed before that
     * can be refused (a case once began with a failed KV create). */
    if (!cluster_await_meta_current(cl, 30000)) {
        nt_fail_at(__FILE__, __LINE__, "the meta group's peers were not all current within 30 s");
        return NULL;
    }
    return cl;
}

int cluster_node_named(const char *name) {
    if (!name || name[0] != 'n' || name[1] < '0' || name[1] >= '0' + CLUSTER_NODES || name[2]) return -1;
    return name[1] - '0';
}

int cluster_node_of(cluster *cl, natsio_client *c) {
    char *url = NULL;
    if (natsio_client_connected_url(c, &url) != NATSIO_OK) return -1;
    int found = -1;
    for (int i = 0; i < CLUSTER_NODES; i++) {
        char port[16];
        snprintf(port, sizeof port, ":%d", nt_server_port(cl->node[i]));
        size_t len = strlen(url), plen = strlen(port);
        if (len >= plen && strcmp(url + len - plen, port) == 0) found = i;
    }
    natsio_string_free(url);
    return found;
}

/* Counts the occurrences of `needle` in `s`. */
static int occurrences(const char *s, const char *needle) {
    int n = 0;
    for (const char *p = s; (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
    return n;
}

/* The leader named in an info reply, with at least `followers` current
 * replicas; -1 otherwise. */
static int leader_in(const char *json, int followers) {
    char name[32];
    if (!json || strstr(json, "\"error\"") || !json_str(json, "leader", name, sizeof name)) return -1;
    if (occurrences(json, "\"current\":true") < followers) return -1;
    return cluster_node_named(name);
}

static int await_leader(cluster *cl, const char *subject, int followers, int not_this, int64_t timeout_ms) {
    int64_t deadline = nt_now_ms() + timeout_ms;
    int ask = 0;
    while (nt_now_ms() < deadline) {
        ask = running_node(cl, ask);
        if (ask < 0) return -1;
        char *json = api_request(cl, ask, subject, NULL, 1000);
        int leader = leader_in(json, followers);
        free(json);
        if (leader >= 0 && leader != not_this && nt_server_running(cl->node[leader])) return leader;
        nt_sleep_ms(25);
    }
    return -1;
}

int cluster_stream_leader(cluster *cl, const char *stream, int replicas, int64_t timeout_ms) {
    char subject[256];
    snprintf(subject, sizeof subject, "$JS.API.STREAM.INFO.%s", stream);
    return await_leader(cl, subject, replicas - 1, -1, timeout_ms);
}

int cluster_consumer_leader(cluster *cl, const char *stream, const char *consumer, int replicas,
                            int64_t timeout_ms) {
    char subject[256];
    snprintf(subject, sizeof subject, "$JS.API.CONSUMER.INFO.%s.%s", stream, consumer);
    return await_leader(cl, subject, replicas - 1, -1, timeout_ms);
}

/* Asks for a step-down until one is accepted, then waits for a leader
 * other than `old`. */
static int stepdown(cluster *cl, const char *api, const char *info, int followers, int old, int64_t timeout_ms) {
    int64_t deadline = nt_now_ms() + timeout_ms;
    bool accepted = false;
    int ask = old;
    while (!accepted && nt_now_ms() < deadline) {
        ask = running_node(cl, ask);
        if (ask < 0) return -1;
        char *json = api_request(cl, ask, api, NULL, 2000);
        accepted = json && strstr(json, "\"success\":true");
        free(json);
        if (!accepted) nt_sleep_ms(50);
    }
    if (!accepted) return -1;
    int64_t left = deadline - nt_now_ms();
    return await_leader(cl, info, followers, old, left > 0 ? left : 0);
}

int cluster_stream_stepdown(cluster *cl, const char *stream, int replicas, int64_t timeout_ms) {
    int old = cluster_stream_leader(cl, stream, replicas, timeout_ms);
    if (old < 0) return -1;
    char api[256], info[256];
    snprintf(api, sizeof api, "$JS.API.STREAM.LEADER.STEPDOWN.%s", stream);
    snprintf(info, sizeof info, "$JS.API.STREAM.INFO.%s", stream);
    return stepdown(cl, api, info, replicas - 1, old, timeout_ms);
}

int cluster_consumer_stepdown(cluster *cl, const char *stream, const char *consumer, int replicas,
                              int64_t timeout_ms) {
    int old = cluster_consumer_leader(cl, stream, consumer, replicas, timeout_ms);
    if (old < 0) return -1;
    char api[256], info[256];
    snprintf(api, sizeof api, "$JS.API.CONSUMER.LEADER.STEPDOWN.%s.%s", stream, consumer);
    snprintf(info, sizeof info, "$JS.API.CONSUMER.INFO.%s.%s", stream, consumer);
    return stepdown(cl, api, info, replicas - 1, old, timeout_ms);
}

void cluster_kill_node(cluster *cl, int i) { nt_server_kill(cl->node[i]); }

bool cluster_restart_node(cluster *cl, int i, int64_t timeout_ms) {
    if (nt_server_restart(cl->node[i]) != 0) return false;
    int64_t deadline = nt_now_ms() + timeout_ms;
    if (!await_routes_of(cl, i, deadline)) return false;
    int64_t left = deadline - nt_now_ms();
    if (!cluster_await_meta_leader(cl, left > 0 ? left : 0)) return false;
    left = deadline - nt_now_ms();
    return cluster_await_meta_current(cl, left > 0 ? left : 0);
}

bool cluster_lame_duck(cluster *cl, int i) { return nt_server_signal(cl->node[i], SIGUSR2) == 0; }

bool cluster_pause(cluster *cl, int i) { return nt_server_pause(cl->node[i]) == 0; }

void cluster_resume(cluster *cl, int i) { nt_server_resume(cl->node[i]); }
