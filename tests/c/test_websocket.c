/*
 * The WebSocket transport (ws:// and wss://) through the C ABI: messaging
 * against nats-server's websocket listener (plain and with the test CA),
 * a ws client and a nats:// client talking, reconnect after a server
 * restart, a mixed server list failing over from ws to nats:// and back,
 * servers discovered over ws keeping the scheme, and handshake failures,
 * each a NATSIO_ERR_WEBSOCKET with its reason and neither a crash nor a
 * hang: a path the server answers 404, a plain HTTP server, a NATS port,
 * and scripted fake servers for what nats-server never sends (a frame with
 * an RSV bit set, a frame over 64 MiB), plus a ping the client must answer.
 *
 * The core suites (test_pubsub, test_request, test_jetstream, test_kv) also
 * run whole over ws and wss: ctest's *_ws and *_wss entries (NT_TRANSPORT).
 */
#define _POSIX_C_SOURCE 200809L

#include "harness.h"
#include "util.h"

#include <natsio.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- servers ------------------------------------------------------------ */

static char *tls_file(char *buf, size_t cap, const char *name) {
    char rel[128];
    snprintf(rel, sizeof rel, "tls/%s", name);
    nt_fixture_path(buf, cap, rel);
    return buf;
}

/* A server with a plain websocket listener on *ws_port (and `extra`). */
static nt_server *start_ws_server(int *ws_port, const char *extra) {
    *ws_port = nt_free_port();
    char config[1024];
    snprintf(config, sizeof config, "websocket {\n listen: \"127.0.0.1:%d\"\n no_tls: true\n}\n%s", *ws_port,
             extra ? extra : "");
    return start_server(config);
}

static const char *ws_url(char *buf, size_t cap, int port) {
    snprintf(buf, cap, "ws://127.0.0.1:%d", port);
    return buf;
}

/* ---- messaging ---------------------------------------------------------- */

static void test_ws_pubsub_request_and_large_payloads(void) {
    int port = 0;
    nt_server *s = start_ws_server(&port, NULL);
    NT_CHECK(s != NULL);
    char url[64];
    natsio_client *c = connect_url(ws_url(url, sizeof url, port));
    NT_CHECK(c != NULL);
    char *connected = NULL;
    NT_CHECK_INT_EQ(natsio_client_connected_url(c, &connected), NATSIO_OK);
    NT_CHECK_STR_EQ(connected, url);
    natsio_string_free(connected);

    NT_CHECK(message_round_trip(c, "ws.hello", "over websocket"));
    /* Payloads that need 16- and 64-bit frame lengths, and arrive in many
     * reads: every byte checked. */
    natsio_sub *sub = subscribe_and_flush(c, "ws.big");
    NT_CHECK(sub != NULL);
    static const size_t sizes[] = {125, 126, 65535, 65536, 900 * 1024};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        char *payload = malloc(sizes[i]);
        for (size_t j = 0; j < sizes[i]; j++) payload[j] = (char)(j * 7 + i);
        NT_CHECK_INT_EQ(natsio_client_publish(c, "ws.big", payload, sizes[i]), NATSIO_OK);
        natsio_msg *m = NULL;
        NT_CHECK_INT_EQ(natsio_sub_next(sub, 5000, &m), NATSIO_OK);
        NT_CHECK_MEM_EQ(natsio_msg_data(m), natsio_msg_data_len(m), payload, sizes[i]);
        natsio_msg_free(m);
        free(payload);
    }
    /* Many small publishes: batched into frames, all delivered in order. */
    natsio_sub *many = subscribe_and_flush(c, "ws.many");
    NT_CHECK(many != NULL);
    for (int i = 0; i < 2000; i++) {
        char num[16];
        int n = snprintf(num, sizeof num, "%d", i);
        NT_CHECK_INT_EQ(natsio_client_publish(c, "ws.many", num, (size_t)n), NATSIO_OK);
    }
    for (int i = 0; i < 2000; i++) {
        natsio_msg *m = NULL;
        NT_CHECK_INT_EQ(natsio_sub_next(many, 5000, &m), NATSIO_OK);
        NT_CHECK_INT_EQ(atoi(natsio_msg_data(m)), i);
        natsio_msg_free(m);
    }

    NT_CHECK(start_responder(c, "ws.echo", echo_cb) != NULL);
    natsio_msg *reply = NULL;
    NT_CHECK_INT_EQ(natsio_client_request(c, "ws.echo", NULL, "ping", 4, 5000, &reply), NATSIO_OK);
    NT_CHECK_MEM_EQ(natsio_msg_data(reply), natsio_msg_data_len(reply), "ping", 4);
    natsio_msg_free(reply);
    NT_CHECK_INT_EQ(natsio_client_drain(c, 5000), NATSIO_OK);
}

/* A ws client and a nats:// client of one server see each other. */
static void test_ws_and_tcp_clients_exchange_messages(void) {
    int port = 0;
    nt_server *s = start_ws_server(&port, NULL);
    NT_CHECK(s != NULL);
    char url[64];
    natsio_client *ws = connect_url(ws_url(url, sizeof url, port));
    natsio_client *tcp = connect_url(nt_server_url(s));
    NT_CHECK(ws != NULL && tcp != NULL);
    natsio_sub *on_ws = subscribe_and_flush(ws, "mix.to_ws");
    natsio_sub *on_tcp = subscribe_and_flush(tcp, "mix.to_tcp");
    NT_CHECK(on_ws != NULL && on_tcp != NULL);
    NT_CHECK_INT_EQ(natsio_client_publish(tcp, "mix.to_ws", "a", 1), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_publish(ws, "mix.to_tcp", "b", 1), NATSIO_OK);
    natsio_msg *m = NULL;
    NT_CHECK_INT_EQ(natsio_sub_next(on_ws, 5000, &m), NATSIO_OK);
    NT_CHECK_MEM_EQ(natsio_msg_data(m), natsio_msg_data_len(m), "a", 1);
    natsio_msg_free(m);
    NT_CHECK_INT_EQ(natsio_sub_next(on_tcp, 5000, &m), NATSIO_OK);
    NT_CHECK_MEM_EQ(natsio_msg_data(m), natsio_msg_data_len(m), "b", 1);
    natsio_msg_free(m);
}

/* wss: TLS first with the configured CA; a foreign CA is refused. */
static void test_wss_verifies_with_the_configured_ca(void) {
    char cert[1024], key[1024], ca[1024], other[1024];
    int port = nt_free_port();
    char config[4096];
    snprintf(config, sizeof config,
             "websocket {\n listen: \"127.0.0.1:%d\"\n tls {\n  cert_file: \"%s\"\n  key_file: \"%s\"\n }\n}\n", port,
             tls_file(cert, sizeof cert, "server-cert.pem"), tls_file(key, sizeof key, "server-key.pem"));
    nt_server *s = start_server(config);
    NT_CHECK(s != NULL);
    char url[64];
    snprintf(url, sizeof url, "wss://127.0.0.1:%d", port);

    natsio_options *o = options_for_url(url, 5000);
    NT_CHECK_INT_EQ(natsio_options_set_tls(o, tls_file(ca, sizeof ca, "ca.pem"), NULL, NULL), NATSIO_OK);
    natsio_client *c = connect_with(o);
    NT_CHECK(c != NULL);
    NT_CHECK(message_round_trip(c, "wss.hello", "over wss"));

    natsio_options *wrong = options_for_url(url, 5000);
    NT_CHECK_INT_EQ(natsio_options_set_tls(wrong, tls_file(other, sizeof other, "other-ca.pem"), NULL, NULL),
                    NATSIO_OK);
    natsio_client *refused = NULL;
    natsio_status st = natsio_client_connect(wrong, &refused);
    NT_CHECK(st != NATSIO_OK);
    NT_CHECK(contains_ci(natsio_last_error(), "TLS"));
}

/* Authentication runs inside the websocket as over TCP: credentials in
 * the URL or the options, a wrong password refused by the server. */
static void test_ws_authentication(void) {
    int port = 0;
    nt_server *s = start_ws_server(&port, "authorization {\n users: [ { user: alice, password: s3cret } ]\n}\n");
    NT_CHECK(s != NULL);
    char url[128];
    snprintf(url, sizeof url, "ws://alice:s3cret@127.0.0.1:%d", port);
    natsio_client *in_url = connect_url(url);
    NT_CHECK(in_url != NULL);
    NT_CHECK(message_round_trip(in_url, "ws.auth.url", "hello"));

    natsio_options *o = options_for_url(ws_url(url, sizeof url, port), 5000);
    NT_CHECK_INT_EQ(natsio_options_set_user_password(o, "alice", "s3cret"), NATSIO_OK);
    natsio_client *in_options = connect_with(o);
    NT_CHECK(in_options != NULL);
    NT_CHECK(message_round_trip(in_options, "ws.auth.options", "hello"));

    natsio_options *wrong = options_for_url(ws_url(url, sizeof url, port), 5000);
    NT_CHECK_INT_EQ(natsio_options_set_user_password(wrong, "alice", "nope"), NATSIO_OK);
    natsio_client *refused = NULL;
    NT_CHECK_INT_EQ(natsio_client_connect(wrong, &refused), NATSIO_ERR_AUTHORIZATION);
}

/* NKey authentication: the nonce is signed inside the websocket. */
static void test_ws_nkey_authentication(void) {
    char seed[NT_NKEY_SEED_CAP], pub[NT_NKEY_PUBLIC_CAP];
    NT_CHECK(nt_nkey_create('U', seed) && nt_nkey_public(seed, pub));
    char auth[256];
    snprintf(auth, sizeof auth, "authorization {\n users: [ { nkey: %s } ]\n}\n", pub);
    int port = 0;
    nt_server *s = start_ws_server(&port, auth);
    NT_CHECK(s != NULL);
    char url[64];
    natsio_options *o = options_for_url(ws_url(url, sizeof url, port), 5000);
    NT_CHECK_INT_EQ(natsio_options_set_nkey_seed(o, seed), NATSIO_OK);
    natsio_client *c = connect_with(o);
    NT_CHECK(c != NULL);
    NT_CHECK(message_round_trip(c, "ws.nkey", "signed"));
}

/* ---- reconnect and failover --------------------------------------------- */

static natsio_options *fast_reconnect_options(const char *const *urls, size_t n, callback_log *log) {
    natsio_options *o = new_options();
    if (!o) return NULL;
    natsio_status st = natsio_options_set_servers(o, urls, n);
    if (st == NATSIO_OK) st = natsio_options_set_no_randomize(o, true);
    if (st == NATSIO_OK) st = natsio_options_set_reconnect_wait(o, 50, 200);
    if (st == NATSIO_OK) st = natsio_options_set_reconnect_jitter(o, 10, 10);
    if (st == NATSIO_OK) st = natsio_options_set_max_reconnect_attempts(o, -1);
    if (st == NATSIO_OK) st = natsio_options_set_connect_timeout_ms(o, 2000);
    if (st != NATSIO_OK || (log && !log_callbacks(o, log))) {
        nt_fail_at(__FILE__, __LINE__, "options: %s", natsio_last_error());
        return NULL;
    }
    return o;
}

/* A restart over ws: the publish made while disconnected is buffered and
 * delivered once reconnected, after the subscription is restored. */
static void test_ws_reconnects_after_server_restart(void) {
    int port = 0;
    nt_server *s = start_ws_server(&port, NULL);
    NT_CHECK(s != NULL);
    char url[64];
    const char *urls[] = {ws_url(url, sizeof url, port)};
    callback_log *log = new_callback_log();
    natsio_client *c = connect_with(fast_reconnect_options(urls, 1, log));
    NT_CHECK(c != NULL);
    natsio_sub *sub = subscribe_and_flush(c, "ws.restart");
    NT_CHECK(sub != NULL);

    nt_server_kill(s);
    NT_CHECK(wait_log_events(log, NATSIO_EVENT_DISCONNECTED, 1, 15000));
    NT_CHECK_INT_EQ(natsio_client_publish(c, "ws.restart", "buffered", 8), NATSIO_OK);
    NT_CHECK_INT_EQ(nt_server_restart(s), 0);
    NT_CHECK(wait_log_events(log, NATSIO_EVENT_RECONNECTED, 1, 15000));
    NT_CHECK(wait_status(c, NATSIO_CONN_CONNECTED, 5000));
    natsio_msg *m = NULL;
    NT_CHECK_INT_EQ(natsio_sub_next(sub, 5000, &m), NATSIO_OK);
    NT_CHECK_MEM_EQ(natsio_msg_data(m), natsio_msg_data_len(m), "buffered", 8);
    natsio_msg_free(m);
    NT_CHECK_INT_EQ(natsio_client_publish(c, "ws.restart", "again", 5), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_sub_next(sub, 5000, &m), NATSIO_OK);
    NT_CHECK_MEM_EQ(natsio_msg_data(m), natsio_msg_data_len(m), "again", 5);
    natsio_msg_free(m);
    natsio_client_stats stats;
    NT_CHECK_INT_EQ(natsio_client_get_stats(c, &stats), NATSIO_OK);
    NT_CHECK_INT_EQ(stats.reconnects, 1);
}

typedef struct {
    natsio_client *client;
    const char *prefix;
} url_wait;

static bool connected_url_starts(void *arg) {
    url_wait *w = (url_wait *)arg;
    if (natsio_client_status(w->client) != NATSIO_CONN_CONNECTED) return false;
    char *url = NULL;
    if (natsio_client_connected_url(w->client, &url) != NATSIO_OK) return false;
    bool ok = strncmp(url, w->prefix, strlen(w->prefix)) == 0;
    natsio_string_free(url);
    return ok;
}

/* [ws://A, nats://B]: A down at the start, so B; then A up and B down, so
 * A over ws; the messages go through each time. */
static void test_mixed_list_fails_over_between_ws_and_nats(void) {
    int ws_port = 0;
    nt_server *a = start_ws_server(&ws_port, NULL);
    nt_server *b = start_server(NULL);
    NT_CHECK(a != NULL && b != NULL);
    nt_server_kill(a);
    char url_a[64];
    const char *urls[] = {ws_url(url_a, sizeof url_a, ws_port), nt_server_url(b)};
    callback_log *log = new_callback_log();
    natsio_client *c = connect_with(fast_reconnect_options(urls, 2, log));
    NT_CHECK(c != NULL);
    url_wait on_nats = {c, "nats://"};
    NT_CHECK(connected_url_starts(&on_nats));
    NT_CHECK(message_round_trip(c, "mixed.first", "via nats"));

    NT_CHECK_INT_EQ(nt_server_restart(a), 0);
    nt_server_kill(b);
    url_wait on_ws = {c, "ws://"};
    NT_CHECK(nt_wait_until(connected_url_starts, &on_ws, 15000));
    NT_CHECK(message_round_trip(c, "mixed.second", "via ws"));

    NT_CHECK_INT_EQ(nt_server_restart(b), 0);
    nt_server_kill(a);
    NT_CHECK(nt_wait_until(connected_url_starts, &on_nats, 15000));
    NT_CHECK(message_round_trip(c, "mixed.third", "via nats again"));
}

/* A client connected over ws learns the cluster's websocket URLs and keeps
 * the ws scheme for them. */
static void test_servers_discovered_over_ws_keep_the_scheme(void) {
    int route_a = nt_free_port(), route_b = nt_free_port();
    int ws_a = nt_free_port(), ws_b = nt_free_port();
    char config[1024];
    snprintf(config, sizeof config,
             "server_name: a\ncluster {\n name: ws\n listen: \"127.0.0.1:%d\"\n routes: [\"nats-route://127.0.0.1:%d\"]\n}\n"
             "websocket {\n listen: \"127.0.0.1:%d\"\n no_tls: true\n}\n",
             route_a, route_b, ws_a);
    nt_server *a = start_server(config);
    NT_CHECK(a != NULL);
    char url[64];
    const char *urls[] = {ws_url(url, sizeof url, ws_a)};
    callback_log *log = new_callback_log();
    natsio_client *c = connect_with(fast_reconnect_options(urls, 1, log));
    NT_CHECK(c != NULL);

    snprintf(config, sizeof config,
             "server_name: b\ncluster {\n name: ws\n listen: \"127.0.0.1:%d\"\n routes: [\"nats-route://127.0.0.1:%d\"]\n}\n"
             "websocket {\n listen: \"127.0.0.1:%d\"\n no_tls: true\n}\n",
             route_b, route_a, ws_b);
    nt_server *b = start_server(config);
    NT_CHECK(b != NULL);
    NT_CHECK(wait_log_events(log, NATSIO_EVENT_SERVERS_DISCOVERED, 1, 15000));
    /* Then the client moves there when A goes away, over ws. */
    nt_server_kill(a);
    char want[64];
    snprintf(want, sizeof want, "ws://127.0.0.1:%d", ws_b);
    url_wait on_b = {c, want};
    NT_CHECK(nt_wait_until(connected_url_starts, &on_b, 15000));
    NT_CHECK(message_round_trip(c, "discovered.ws", "via b"));
}

/* ---- handshake failures -------------------------------------------------- */

/* Connecting to `url` fails with NATSIO_ERR_WEBSOCKET, whose detail names
 * `why`, well within the connect timeout. */
static void expect_ws_failure(const char *url, const char *why) {
    natsio_options *o = options_for_url(url, 5000);
    NT_CHECK_INT_EQ(natsio_options_set_allow_reconnect(o, false), NATSIO_OK);
    int64_t start = nt_now_ms();
    natsio_client *c = NULL;
    natsio_status st = natsio_client_connect(o, &c);
    if (st == NATSIO_OK) natsio_client_free(c);
    NT_CHECK_INT_EQ(st, NATSIO_ERR_WEBSOCKET);
    NT_CHECK(natsio_status_is(st, NATSIO_ERR_PROTOCOL));
    if (!contains_ci(natsio_last_error(), why))
        NT_FAIL("detail %s lacks %s", natsio_last_error(), why);
    NT_CHECK(nt_now_ms() - start < 4000);
}

static void test_path_answered_404_is_a_websocket_error(void) {
    int port = 0;
    nt_server *s = start_ws_server(&port, NULL);
    NT_CHECK(s != NULL);
    /* nats-server answers 404 to its MQTT websocket path when MQTT is off. */
    char url[96];
    snprintf(url, sizeof url, "ws://127.0.0.1:%d/mqtt", port);
    expect_ws_failure(url, "404");
}

static void test_plain_http_server_is_a_websocket_error(void) {
    int http = nt_free_port();
    char config[128];
    snprintf(config, sizeof config, "http: \"127.0.0.1:%d\"\n", http);
    nt_server *s = start_server(config);
    NT_CHECK(s != NULL);
    /* The monitoring port: a real HTTP server, not a websocket endpoint. */
    char url[64];
    expect_ws_failure(ws_url(url, sizeof url, http), "not 101");
}

static void test_nats_port_is_a_websocket_error(void) {
    nt_server *s = start_server(NULL);
    NT_CHECK(s != NULL);
    char url[64];
    expect_ws_failure(ws_url(url, sizeof url, nt_server_port(s)), "not an HTTP response");
}

/* ---- scripted fake websocket servers ------------------------------------ */

/* SHA-1 (FIPS 180-1) for the fake server's Sec-WebSocket-Accept. */
static uint32_t rol(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

static void sha1(const unsigned char *msg, size_t len, unsigned char out[20]) {
    uint32_t h[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
    size_t total = ((len + 8) / 64 + 1) * 64;
    unsigned char *buf = calloc(total, 1);
    memcpy(buf, msg, len);
    buf[len] = 0x80;
    uint64_t bits = (uint64_t)len * 8;
    for (int i = 0; i < 8; i++) buf[total - 1 - i] = (unsigned char)(bits >> (8 * i));
    for (size_t off = 0; off < total; off += 64) {
        uint32_t w[80];
        for (int i = 0; i < 16; i++)
            w[i] = (uint32_t)buf[off + 4 * i] << 24 | (uint32_t)buf[off + 4 * i + 1] << 16 |
                   (uint32_t)buf[off + 4 * i + 2] << 8 | buf[off + 4 * i + 3];
        for (int i = 16; i < 80; i++) w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
        uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
        for (int i = 0; i < 80; i++) {
            uint32_t f, k;
            if (i < 20) f = (b & c) | (~b & d), k = 0x5A827999;
            else if (i < 40) f = b ^ c ^ d, k = 0x6ED9EBA1;
            else if (i < 60) f = (b & c) | (b & d) | (c & d), k = 0x8F1BBCDC;
            else f = b ^ c ^ d, k = 0xCA62C1D6;
            uint32_t t = rol(a, 5) + f + e + k + w[i];
            e = d, d = c, c = rol(b, 30), b = a, a = t;
        }
        h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e;
    }
    free(buf);
    for (int i = 0; i < 20; i++) out[i] = (unsigned char)(h[i / 4] >> (24 - 8 * (i % 4)));
}

static void base64(const unsigned char *in, size_t len, char *out) {
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0;
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < len ? (uint32_t)in[i + 1] << 8 : 0) |
                     (i + 2 < len ? in[i + 2] : 0);
        out[o++] = tab[v >> 18 & 63];
        out[o++] = tab[v >> 12 & 63];
        out[o++] = i + 1 < len ? tab[v >> 6 & 63] : '=';
        out[o++] = i + 2 < len ? tab[v & 63] : '=';
    }
    out[o] = '\0';
}

typedef enum {
    FAKE_RSV_BIT,
    FAKE_OVERSIZED,
    FAKE_PING_THEN_CLOSE,
    /* A working server as far as the handshake goes: INFO, then PONG to
     * the client's CONNECT + PING; records whether the client masked. */
    FAKE_SERVES,
    FAKE_SERVES_AGREEING_TO_NO_MASKING,
} fake_script;

typedef struct {
    int listen_fd;
    int port;
    fake_script script;
    pthread_t thread;
    atomic_int pong_ok;   /* the client answered the ping with its payload, masked */
    atomic_int finished;
    atomic_int client_masked; /* FAKE_SERVES: 1 masked, 0 unmasked, -1 no CONNECT seen */
    char request[4096];       /* the upgrade request as received */
} fake_ws;

static bool send_all(int fd, const void *buf, size_t len) {
    const char *p = buf;
    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        p += n;
        len -= (size_t)n;
    }
    return true;
}

/* Reads exactly len bytes (5 s at most). */
static bool recv_exact(int fd, unsigned char *buf, size_t len) {
    size_t got = 0;
    while (got < len) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 5000) <= 0) return false;
        ssize_t n = recv(fd, buf + got, len - got, 0);
        if (n <= 0) return false;
        got += (size_t)n;
    }
    return true;
}

static void *fake_ws_run(void *arg) {
    fake_ws *f = (fake_ws *)arg;
    struct pollfd lp = {f->listen_fd, POLLIN, 0};
    if (poll(&lp, 1, 10000) <= 0) goto out;
    int fd = accept(f->listen_fd, NULL, NULL);
    if (fd < 0) goto out;
    char req[4096] = {0};
    size_t len = 0;
    while (len < sizeof req - 1 && !strstr(req, "\r\n\r\n")) {
        if (!recv_exact(fd, (unsigned char *)req + len, 1)) break;
        req[++len] = '\0';
    }
    memcpy(f->request, req, sizeof f->request);
    const char *k = strstr(req, "Sec-WebSocket-Key: ");
    if (!k) {
        close(fd);
        goto out;
    }
    k += strlen("Sec-WebSocket-Key: ");
    char keyed[128];
    size_t klen = strcspn(k, "\r");
    snprintf(keyed, sizeof keyed, "%.*s258EAFA5-E914-47DA-95CA-C5AB0DC85B11", (int)klen, k);
    unsigned char digest[20];
    sha1((const unsigned char *)keyed, strlen(keyed), digest);
    char accept_key[32];
    base64(digest, 20, accept_key);
    char resp[256];
    int n = snprintf(resp, sizeof resp,
                     "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     "Sec-WebSocket-Accept: %s\r\n%s\r\n",
                     accept_key,
                     f->script == FAKE_SERVES_AGREEING_TO_NO_MASKING ? "Nats-No-Masking: true\r\n" : "");
    send_all(fd, resp, (size_t)n);
    static const char info[] = "INFO {\"server_id\":\"fake\",\"max_payload\":1048576}\r\n";
    unsigned char frame[16];
    switch (f->script) {
    case FAKE_RSV_BIT:
        /* What a compressing server sends: FIN, RSV1, binary. */
        frame[0] = 0xC2;
        frame[1] = (unsigned char)(sizeof info - 1);
        send_all(fd, frame, 2);
        send_all(fd, info, sizeof info - 1);
        break;
    case FAKE_OVERSIZED: {
        /* A header announcing 64 MiB + 1; no payload follows. */
        uint64_t big = 64ull * 1024 * 1024 + 1;
        frame[0] = 0x82;
        frame[1] = 127;
        for (int i = 0; i < 8; i++) frame[2 + i] = (unsigned char)(big >> (56 - 8 * i));
        send_all(fd, frame, 10);
        break;
    }
    case FAKE_SERVES:
    case FAKE_SERVES_AGREEING_TO_NO_MASKING: {
        frame[0] = 0x82;
        frame[1] = (unsigned char)(sizeof info - 1);
        send_all(fd, frame, 2);
        send_all(fd, info, sizeof info - 1);
        /* The client's first frame: CONNECT {...} PING. */
        unsigned char head[2], ext[8], key[4] = {0, 0, 0, 0};
        if (!recv_exact(fd, head, 2)) break;
        uint64_t plen = head[1] & 0x7F;
        if (plen == 126 && recv_exact(fd, ext, 2)) plen = (uint64_t)ext[0] << 8 | ext[1];
        else if (plen == 127) break;
        bool masked = (head[1] & 0x80) != 0;
        if (masked && !recv_exact(fd, key, 4)) break;
        unsigned char body[65536];
        if (plen > sizeof body || !recv_exact(fd, body, (size_t)plen)) break;
        for (uint64_t i = 0; i < plen; i++) body[i] ^= key[i % 4];
        if (plen > 8 && memcmp(body, "CONNECT ", 8) == 0) atomic_store(&f->client_masked, masked ? 1 : 0);
        static const unsigned char pong[] = {0x82, 6, 'P', 'O', 'N', 'G', '\r', '\n'};
        send_all(fd, pong, sizeof pong);
        break;
    }
    case FAKE_PING_THEN_CLOSE: {
        static const unsigned char ping[] = {0x89, 3, 'a', 'b', 'c'};
        send_all(fd, ping, sizeof ping);
        unsigned char pong[9];
        if (recv_exact(fd, pong, sizeof pong) && pong[0] == 0x8A && pong[1] == (0x80 | 3)) {
            unsigned char body[3];
            for (int i = 0; i < 3; i++) body[i] = pong[6 + i] ^ pong[2 + i % 4];
            if (memcmp(body, "abc", 3) == 0) atomic_store(&f->pong_ok, 1);
        }
        /* Close with 1011 (internal error) and a reason. */
        static const unsigned char close_frame[] = {0x88, 6, 0x03, 0xF3, 'o', 'o', 'p', 's'};
        send_all(fd, close_frame, sizeof close_frame);
        break;
    }
    }
    /* Hold the connection until the client gives up on it. */
    unsigned char sink[4096];
    struct pollfd p = {fd, POLLIN, 0};
    while (poll(&p, 1, 5000) > 0 && recv(fd, sink, sizeof sink, 0) > 0) {
    }
    close(fd);
out:
    atomic_store(&f->finished, 1);
    return NULL;
}

static void fake_ws_stop(void *arg) {
    fake_ws *f = (fake_ws *)arg;
    pthread_join(f->thread, NULL);
    close(f->listen_fd);
    free(f);
}

static fake_ws *fake_ws_start(fake_script script) {
    fake_ws *f = calloc(1, sizeof *f);
    f->script = script;
    atomic_store(&f->client_masked, -1);
    f->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof a;
    if (bind(f->listen_fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(f->listen_fd, 4) != 0 ||
        getsockname(f->listen_fd, (struct sockaddr *)&a, &alen) != 0 ||
        pthread_create(&f->thread, NULL, fake_ws_run, f) != 0) {
        close(f->listen_fd);
        free(f);
        nt_fail_at(__FILE__, __LINE__, "fake server: %s", strerror(errno));
        return NULL;
    }
    f->port = ntohs(a.sin_port);
    nt_cleanup(fake_ws_stop, f);
    return f;
}

static void test_rsv_bit_is_a_websocket_error(void) {
    fake_ws *f = fake_ws_start(FAKE_RSV_BIT);
    NT_CHECK(f != NULL);
    char url[64];
    expect_ws_failure(ws_url(url, sizeof url, f->port), "RSV");
}

static void test_frame_over_64_mib_is_refused(void) {
    fake_ws *f = fake_ws_start(FAKE_OVERSIZED);
    NT_CHECK(f != NULL);
    char url[64];
    expect_ws_failure(ws_url(url, sizeof url, f->port), "exceeds the limit");
}

static void test_ping_is_answered_and_close_status_reported(void) {
    fake_ws *f = fake_ws_start(FAKE_PING_THEN_CLOSE);
    NT_CHECK(f != NULL);
    char url[64];
    expect_ws_failure(ws_url(url, sizeof url, f->port), "status 1011: oops");
    NT_CHECK_INT_EQ(atomic_load(&f->pong_ok), 1);
}

/* Extra headers and the URL's path and query go into the upgrade request;
 * frames are masked unless the server agrees to Nats-No-Masking. */
static void test_upgrade_request_headers_path_and_masking(void) {
    fake_ws *f = fake_ws_start(FAKE_SERVES);
    NT_CHECK(f != NULL);
    char url[128];
    snprintf(url, sizeof url, "ws://127.0.0.1:%d/gateway/nats?tenant=a", f->port);
    natsio_options *o = options_for_url(url, 5000);
    NT_CHECK_INT_EQ(natsio_options_add_ws_header(o, "X-Api-Key", "secret key"), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_options_set_allow_reconnect(o, false), NATSIO_OK);
    natsio_client *c = connect_with(o);
    NT_CHECK(c != NULL);
    NT_CHECK(strncmp(f->request, "GET /gateway/nats?tenant=a HTTP/1.1\r\n", 37) == 0);
    char host[64];
    snprintf(host, sizeof host, "\r\nHost: 127.0.0.1:%d\r\n", f->port);
    NT_CHECK(strstr(f->request, host) != NULL);
    NT_CHECK(strstr(f->request, "\r\nX-Api-Key: secret key\r\n") != NULL);
    NT_CHECK(strstr(f->request, "Nats-No-Masking") == NULL);
    NT_CHECK_INT_EQ(atomic_load(&f->client_masked), 1);

    /* Asked for and agreed to: unmasked. */
    fake_ws *agreeing = fake_ws_start(FAKE_SERVES_AGREEING_TO_NO_MASKING);
    NT_CHECK(agreeing != NULL);
    natsio_options *nm = options_for_url(ws_url(url, sizeof url, agreeing->port), 5000);
    NT_CHECK_INT_EQ(natsio_options_set_ws_no_masking(nm, true), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_options_set_allow_reconnect(nm, false), NATSIO_OK);
    natsio_client *unmasked = connect_with(nm);
    NT_CHECK(unmasked != NULL);
    NT_CHECK(strstr(agreeing->request, "\r\nNats-No-Masking: true\r\n") != NULL);
    NT_CHECK_INT_EQ(atomic_load(&agreeing->client_masked), 0);
}

/* nats-server agrees to no masking; messages flow both ways. */
static void test_no_masking_with_nats_server(void) {
    int port = 0;
    nt_server *s = start_ws_server(&port, NULL);
    NT_CHECK(s != NULL);
    char url[64];
    natsio_options *o = options_for_url(ws_url(url, sizeof url, port), 5000);
    NT_CHECK_INT_EQ(natsio_options_set_ws_no_masking(o, true), NATSIO_OK);
    natsio_client *c = connect_with(o);
    NT_CHECK(c != NULL);
    NT_CHECK(message_round_trip(c, "ws.nomask", "unmasked frames"));
    NT_CHECK(start_responder(c, "ws.nomask.echo", echo_cb) != NULL);
    natsio_msg *reply = NULL;
    NT_CHECK_INT_EQ(natsio_client_request(c, "ws.nomask.echo", NULL, "x", 1, 5000, &reply), NATSIO_OK);
    natsio_msg_free(reply);
}

static void test_bad_ws_headers_are_config_errors(void) {
    natsio_options *o = new_options();
    NT_CHECK(o != NULL);
    NT_CHECK_INT_EQ(natsio_options_add_ws_header(NULL, "a", "b"), NATSIO_ERR_NULL_ARGUMENT);
    NT_CHECK_INT_EQ(natsio_options_add_ws_header(o, NULL, "b"), NATSIO_ERR_NULL_ARGUMENT);
    NT_CHECK_INT_EQ(natsio_options_add_ws_header(o, "a", NULL), NATSIO_ERR_NULL_ARGUMENT);
    NT_CHECK_INT_EQ(natsio_options_add_ws_header(o, "X-\xff", "b"), NATSIO_ERR_INVALID_UTF8);
    NT_CHECK_INT_EQ(natsio_options_add_ws_header(o, "X-A", "v\r\nInjected: 1"), NATSIO_ERR_CONFIG);
    NT_CHECK(contains_ci(natsio_last_error(), "control character"));
    NT_CHECK_INT_EQ(natsio_options_add_ws_header(o, "Bad Name", "v"), NATSIO_ERR_CONFIG);
    NT_CHECK_INT_EQ(natsio_options_add_ws_header(o, "sec-websocket-key", "v"), NATSIO_ERR_CONFIG);
    NT_CHECK_INT_EQ(natsio_options_set_ws_no_masking(NULL, true), NATSIO_ERR_NULL_ARGUMENT);
    /* A path belongs to WebSocket URLs only. */
    NT_CHECK_INT_EQ(natsio_options_set_url(o, "nats://127.0.0.1:4222/path"), NATSIO_ERR_CONFIG);
    NT_CHECK_INT_EQ(natsio_options_set_url(o, "wss://h/path,nats://h2,ws://h3:8080"), NATSIO_OK);
}

int main(int argc, char **argv) {
    static const nt_case cases[] = {
        NT_CASE(test_ws_pubsub_request_and_large_payloads),
        NT_CASE(test_ws_and_tcp_clients_exchange_messages),
        NT_CASE(test_wss_verifies_with_the_configured_ca),
        NT_CASE(test_ws_authentication),
        NT_CASE(test_ws_nkey_authentication),
        NT_CASE(test_ws_reconnects_after_server_restart),
        NT_CASE(test_mixed_list_fails_over_between_ws_and_nats),
        NT_CASE(test_servers_discovered_over_ws_keep_the_scheme),
        NT_CASE(test_path_answered_404_is_a_websocket_error),
        NT_CASE(test_plain_http_server_is_a_websocket_error),
        NT_CASE(test_nats_port_is_a_websocket_error),
        NT_CASE(test_rsv_bit_is_a_websocket_error),
        NT_CASE(test_frame_over_64_mib_is_refused),
        NT_CASE(test_ping_is_answered_and_close_status_reported),
        NT_CASE(test_upgrade_request_headers_path_and_masking),
        NT_CASE(test_no_masking_with_nats_server),
        NT_CASE(test_bad_ws_headers_are_config_errors),
    };
    return nt_main(argc, argv, cases, NT_COUNT(cases));
}
