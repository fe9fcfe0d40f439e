/*
 * TLS through the C ABI against nats-server with the committed test CA
 * (tests/fixtures/tls, see gen.sh there): verification against the right CA,
 * rejection of a wrong CA and of the system roots, mutual TLS, hostname
 * override, TLS-first handshake, never downgrading a tls:// URL, and option
 * validation. Certificates are always verified: there is no insecure mode.
 *
 * URLs use 127.0.0.1 (an IP SAN of the server certificate), never a name to
 * resolve: no DNS in the tests.
 */
#define _POSIX_C_SOURCE 200809L

#include "harness.h"
#include "util.h"

#include <natsio.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------ */

/* Absolute path of a TLS fixture, in one of a few rotating buffers so
 * several can be passed to one call. */
static const char *tls_file(const char *name) {
    static char buffers[4][1024];
    static int next;
    char *buf = buffers[next++ % 4];
    char rel[128];
    snprintf(rel, sizeof rel, "tls/%s", name);
    return nt_fixture_path(buf, sizeof buffers[0], rel);
}

/* Bounds of a TLS handshake, the server's (seconds) and the clients' connect
 * timeout (ms): generous, for an event that comes. Under valgrind beside
 * other busy work a handshake took over 2 s, and the server's 2 s closed
 * the connection mid-handshake (Broken pipe). */
#define HANDSHAKE_S 30
#define HANDSHAKE_MS (HANDSHAKE_S * 1000)

/* A TLS server: `verify` requires client certificates from the test CA;
 * `handshake_first` expects TLS before INFO. */
static nt_server *start_tls_server(bool verify, bool handshake_first) {
    char config[4096];
    snprintf(config, sizeof config,
             "tls {\n"
             "  cert_file: \"%s\"\n"
             "  key_file: \"%s\"\n"
             "  ca_file: \"%s\"\n"
             "  verify: %s\n"
             "  handshake_first: %s\n"
             "  timeout: %d\n"
             "}\n",
             tls_file("server-cert.pem"), tls_file("server-key.pem"), tls_file("ca.pem"), verify ? "true" : "false",
             handshake_first ? "true" : "false", HANDSHAKE_S);
    return start_server(config);
}

/* "<scheme>://<host>:<port>" of a server. */
static const char *url_of(const nt_server *s, const char *scheme, const char *host) {
    static char buffers[4][128];
    static int next;
    char *buf = buffers[next++ % 4];
    snprintf(buf, sizeof buffers[0], "%s://%s:%d", scheme, host, nt_server_port(s));
    return buf;
}

/* Connects and proves the connection works; returns the client (freed at
 * case end) or NULL after recording the failure. */
static natsio_client *connect_and_use(const natsio_options *o) {
    natsio_client *c = NULL;
    natsio_status st = natsio_client_connect(o, &c);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "connect: %s (%s)", natsio_status_str(st), natsio_last_error());
        return NULL;
    }
    nt_cleanup(client_free_cb, c);
    if (!message_round_trip(c, "tls.check", "secret")) {
        nt_fail_at(__FILE__, __LINE__, "connected, but no round trip: %s", natsio_last_error());
        return NULL;
    }
    return c;
}

/* Expects the connection to be refused with status `want`, the output
 * untouched, and a detail text containing `mention` (case-insensitive).
 * The header has no TLS status: a failed handshake or a TLS alert is
 * NATSIO_ERR_IO, and the detail carries the reason (rustls' names for
 * certificate errors and alerts, pinned by Cargo.lock). */
#define CHECK_CONNECT_REFUSED(opts, want, mention)                                                              \
    do {                                                                                                        \
        natsio_client *sentinel_ = (natsio_client *)(opts);                                                     \
        natsio_client *c_ = sentinel_;                                                                          \
        natsio_status st_ = natsio_client_connect((opts), &c_);                                                 \
        if (st_ == NATSIO_OK) {                                                                                 \
            nt_cleanup(client_free_cb, c_);                                                                     \
            NT_FAIL("connect succeeded, expected %s", natsio_status_str(want));                                 \
        }                                                                                                       \
        const char *detail_ = natsio_last_error();                                                              \
        const char *mention_ = (mention);                                                                       \
        NT_CHECK_MSG(st_ == (want), "connect: %s (%s), expected %s", natsio_status_str(st_), detail_,           \
                     natsio_status_str(want));                                                                  \
        NT_CHECK(c_ == sentinel_);                                                                              \
        NT_CHECK_MSG(contains_ci(detail_, mention_), "%s: detail \"%s\" lacks \"%s\"",                      \
                     natsio_status_str(st_), detail_, mention_);                                                \
    } while (0)

/* ---- cases ------------------------------------------------------------ */

static void test_tls_url_with_the_right_ca(void) {
    nt_server *s = start_tls_server(false, false);
    NT_CHECK(s != NULL);
    natsio_options *o = options_for_url(url_of(s, "tls", "127.0.0.1"), HANDSHAKE_MS);
    NT_CHECK(o != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_tls(o, tls_file("ca.pem"), NULL, NULL), NATSIO_OK);
    natsio_client *c = connect_and_use(o);
    NT_CHECK(c != NULL);
    char *info = NULL;
    NT_CHECK_INT_EQ(natsio_client_server_info(c, &info), NATSIO_OK);
    bool tls_required = strstr(info, "\"tls_required\":true") != NULL;
    natsio_string_free(info);
    NT_CHECK_MSG(tls_required, "server INFO does not say tls_required");
}

/* A restart of the server: the client reconnects over TLS again (the
 * handshake and verification run anew, the files re-read), re-subscribes and
 * sends what was published while it was away. */
static void test_reconnect_over_tls(void) {
    nt_server *s = start_tls_server(true, false);
    NT_CHECK(s != NULL);
    natsio_options *o = options_for_url(url_of(s, "tls", "127.0.0.1"), HANDSHAKE_MS);
    NT_CHECK(o != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_tls(o, tls_file("ca.pem"), tls_file("client-cert.pem"), tls_file("client-key.pem")),
                    NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_options_set_reconnect_wait(o, 50, 200), NATSIO_OK);
    natsio_client *c = connect_and_use(o);
    NT_CHECK(c != NULL);
    natsio_sub *sub = subscribe_and_flush(c, "tls.again");
    NT_CHECK(sub != NULL);
    NT_CHECK_INT_EQ(nt_server_restart(s), 0);
    NT_CHECK_INT_EQ(natsio_client_publish(c, "tls.again", "after", 5), NATSIO_OK);
    NT_CHECK_MSG(nt_wait_until(client_connected, c, 10000), "not reconnected: %s", natsio_last_error());
    natsio_msg *m = NULL;
    NT_CHECK_INT_EQ(natsio_sub_next(sub, 5000, &m), NATSIO_OK);
    NT_CHECK_MEM_EQ(natsio_msg_data(m), natsio_msg_data_len(m), "after", 5);
    natsio_msg_free(m);
    natsio_client_stats st;
    NT_CHECK_INT_EQ(natsio_client_get_stats(c, &st), NATSIO_OK);
    NT_CHECK_INT_EQ(st.reconnects, 1);
    char *url = NULL;
    NT_CHECK_INT_EQ(natsio_client_connected_url(c, &url), NATSIO_OK);
    NT_CHECK_MSG(strncmp(url, "tls://", 6) == 0, "reconnected to %s", url);
    natsio_string_free(url);
}

/* A nats:// URL to a server that requires TLS upgrades to TLS when TLS is
 * configured (the certificate is verified as usual). */
static void test_server_required_tls_upgrades_a_nats_url(void) {
    nt_server *s = start_tls_server(false, false);
    NT_CHECK(s != NULL);
    natsio_options *o = options_for_url(url_of(s, "nats", "127.0.0.1"), HANDSHAKE_MS);
    NT_CHECK(o != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_tls(o, tls_file("ca.pem"), NULL, NULL), NATSIO_OK);
    NT_CHECK(connect_and_use(o) != NULL);
}

static void test_wrong_ca_is_rejected(void) {
    nt_server *s = start_tls_server(false, false);
    NT_CHECK(s != NULL);
    natsio_options *o = options_for_url(url_of(s, "tls", "127.0.0.1"), HANDSHAKE_MS);
    NT_CHECK(o != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_tls(o, tls_file("other-ca.pem"), NULL, NULL), NATSIO_OK);
    CHECK_CONNECT_REFUSED(o, NATSIO_ERR_IO, "UnknownIssuer");
}

/* Without a CA file the system trust roots apply, and they do not know the
 * test CA: rejected, whether TLS is configured without a CA or only asked
 * for by the tls:// scheme, or required by the server. */
static void test_system_roots_reject_the_test_ca(void) {
    nt_server *s = start_tls_server(false, false);
    NT_CHECK(s != NULL);
    natsio_options *configured = options_for_url(url_of(s, "tls", "127.0.0.1"), HANDSHAKE_MS);
    NT_CHECK(configured != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_tls(configured, NULL, NULL, NULL), NATSIO_OK);
    CHECK_CONNECT_REFUSED(configured, NATSIO_ERR_IO, "UnknownIssuer");

    natsio_options *by_scheme = options_for_url(url_of(s, "tls", "127.0.0.1"), HANDSHAKE_MS);
    NT_CHECK(by_scheme != NULL);
    CHECK_CONNECT_REFUSED(by_scheme, NATSIO_ERR_IO, "UnknownIssuer");

    natsio_options *by_server = options_for_url(url_of(s, "nats", "127.0.0.1"), HANDSHAKE_MS);
    NT_CHECK(by_server != NULL);
    CHECK_CONNECT_REFUSED(by_server, NATSIO_ERR_IO, "UnknownIssuer");
}

static void test_mutual_tls_required_and_satisfied(void) {
    nt_server *s = start_tls_server(true, false);
    NT_CHECK(s != NULL);
    natsio_options *o = options_for_url(url_of(s, "tls", "127.0.0.1"), HANDSHAKE_MS);
    NT_CHECK(o != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_tls(o, tls_file("ca.pem"), tls_file("client-cert.pem"), tls_file("client-key.pem")),
                    NATSIO_OK);
    NT_CHECK(connect_and_use(o) != NULL);
}

/* A fixture's contents in a heap buffer (freed at the end of the test). */
static char *read_tls_file(const char *name, size_t *len_out) {
    FILE *f = fopen(tls_file(name), "rb");
    if (!f) return NULL;
    char *buf = malloc(16384);
    size_t n = buf ? fread(buf, 1, 16384, f) : 0;
    fclose(f);
    if (buf) nt_cleanup(free, buf);
    *len_out = n;
    return buf;
}

static void test_mutual_tls_from_memory(void) {
    nt_server *s = start_tls_server(true, false);
    NT_CHECK(s != NULL);
    size_t ca_len = 0, cert_len = 0, key_len = 0, other_len = 0;
    char *ca = read_tls_file("ca.pem", &ca_len);
    char *cert = read_tls_file("client-cert.pem", &cert_len);
    char *key = read_tls_file("client-key.pem", &key_len);
    char *other = read_tls_file("other-ca.pem", &other_len);
    NT_CHECK(ca && cert && key && other && ca_len && cert_len && key_len && other_len);
    natsio_options *o = options_for_url(url_of(s, "tls", "127.0.0.1"), HANDSHAKE_MS);
    NT_CHECK(o != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_tls_pem(o, ca, ca_len, cert, cert_len, key, key_len), NATSIO_OK);
    /* The buffers are copied: scribbling on them changes nothing. */
    memset(key, 'x', key_len);
    NT_CHECK(connect_and_use(o) != NULL);

    /* Without the client's certificate the server refuses; with another
     * CA the client refuses the server. */
    natsio_options *without = options_for_url(url_of(s, "tls", "127.0.0.1"), HANDSHAKE_MS);
    NT_CHECK(without != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_tls_pem(without, ca, ca_len, NULL, 0, NULL, 0), NATSIO_OK);
    CHECK_CONNECT_REFUSED(without, NATSIO_ERR_IO, "CertificateRequired");
    natsio_options *foreign = options_for_url(url_of(s, "tls", "127.0.0.1"), HANDSHAKE_MS);
    NT_CHECK(foreign != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_tls_pem(foreign, other, other_len, NULL, 0, NULL, 0), NATSIO_OK);
    CHECK_CONNECT_REFUSED(foreign, NATSIO_ERR_IO, "UnknownIssuer");

    /* Invalid input: a key that is no PEM, a certificate without its key,
     * a NULL buffer with a length. */
    NT_CHECK_INT_EQ(natsio_options_set_tls_pem(foreign, ca, ca_len, cert, cert_len, key, key_len), NATSIO_ERR_CONFIG);
    NT_CHECK_INT_EQ(natsio_options_set_tls_pem(foreign, ca, ca_len, cert, cert_len, NULL, 0), NATSIO_ERR_CONFIG);
    NT_CHECK_INT_EQ(natsio_options_set_tls_pem(foreign, NULL, 5, NULL, 0, NULL, 0), NATSIO_ERR_NULL_ARGUMENT);
    NT_CHECK_INT_EQ(natsio_options_set_tls_pem(NULL, ca, ca_len, NULL, 0, NULL, 0), NATSIO_ERR_NULL_ARGUMENT);
}

static void test_mutual_tls_required_and_missing_or_wrong(void) {
    nt_server *s = start_tls_server(true, false);
    NT_CHECK(s != NULL);
    natsio_options *without = options_for_url(url_of(s, "tls", "127.0.0.1"), HANDSHAKE_MS);
    NT_CHECK(without != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_tls(without, tls_file("ca.pem"), NULL, NULL), NATSIO_OK);
    /* In TLS 1.3 the client's handshake ends before the server checks its
     * certificate: the server's alert arrives on the first read. */
    CHECK_CONNECT_REFUSED(without, NATSIO_ERR_IO, "CertificateRequired");

    /* A certificate from a CA the server does not trust. */
    natsio_options *foreign = options_for_url(url_of(s, "tls", "127.0.0.1"), HANDSHAKE_MS);
    NT_CHECK(foreign != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_tls(foreign, tls_file("ca.pem"), tls_file("other-server-cert.pem"),
                                           tls_file("other-server-key.pem")),
                    NATSIO_OK);
    CHECK_CONNECT_REFUSED(foreign, NATSIO_ERR_IO, "UnknownCA");
}

/* The certificate names localhost and 127.0.0.1. Connecting by IP while
 * verifying another name proves the override is what is checked. */
static void test_hostname_override(void) {
    nt_server *s = start_tls_server(false, false);
    NT_CHECK(s != NULL);
    natsio_options *right = options_for_url(url_of(s, "tls", "127.0.0.1"), HANDSHAKE_MS);
    NT_CHECK(right != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_tls(right, tls_file("ca.pem"), NULL, NULL), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_options_set_tls_hostname(right, "localhost"), NATSIO_OK);
    NT_CHECK(connect_and_use(right) != NULL);

    natsio_options *wrong = options_for_url(url_of(s, "tls", "127.0.0.1"), HANDSHAKE_MS);
    NT_CHECK(wrong != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_tls(wrong, tls_file("ca.pem"), NULL, NULL), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_options_set_tls_hostname(wrong, "not-the-server.example"), NATSIO_OK);
    CHECK_CONNECT_REFUSED(wrong, NATSIO_ERR_IO, "not valid for name");
}

static void test_tls_handshake_first(void) {
    nt_server *s = start_tls_server(false, true);
    NT_CHECK(s != NULL);
    natsio_options *first = options_for_url(url_of(s, "tls", "127.0.0.1"), HANDSHAKE_MS);
    NT_CHECK(first != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_tls(first, tls_file("ca.pem"), NULL, NULL), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_options_set_tls_handshake_first(first, true), NATSIO_OK);
    NT_CHECK(connect_and_use(first) != NULL);

    /* Waiting for INFO first, the client never gets one. */
    natsio_options *late = options_for_url(url_of(s, "tls", "127.0.0.1"), HANDSHAKE_MS);
    NT_CHECK(late != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_tls(late, tls_file("ca.pem"), NULL, NULL), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_options_set_connect_timeout_ms(late, 1000), NATSIO_OK);
    /* The connect timeout (1 s) ends the wait before the server's TLS
     * timeout (HANDSHAKE_S) would close the connection. */
    CHECK_CONNECT_REFUSED(late, NATSIO_ERR_TIMEOUT, "timed out");
}

/* A tls:// URL never falls back to plain text. */
static void test_tls_url_to_a_plain_server_fails(void) {
    nt_server *s = start_server(NULL);
    NT_CHECK(s != NULL);
    natsio_options *o = options_for_url(url_of(s, "tls", "127.0.0.1"), HANDSHAKE_MS);
    NT_CHECK(o != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_tls(o, tls_file("ca.pem"), NULL, NULL), NATSIO_OK);
    /* The server reads the ClientHello as protocol text. */
    CHECK_CONNECT_REFUSED(o, NATSIO_ERR_IO, "TLS handshake");

    natsio_options *required = options_for_url(url_of(s, "nats", "127.0.0.1"), HANDSHAKE_MS);
    NT_CHECK(required != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_tls(required, tls_file("ca.pem"), NULL, NULL), NATSIO_OK);
    CHECK_CONNECT_REFUSED(required, NATSIO_ERR_IO, "TLS handshake");
}

static void test_tls_option_validation(void) {
    natsio_options *o = options_for_url("nats://127.0.0.1:4222", HANDSHAKE_MS);
    NT_CHECK(o != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_tls(o, tls_file("missing-ca.pem"), NULL, NULL), NATSIO_ERR_CONFIG);
    NT_CHECK(natsio_last_error()[0] != '\0');
    /* A certificate without its key, and the other way round. */
    NT_CHECK_INT_EQ(natsio_options_set_tls(o, tls_file("ca.pem"), tls_file("client-cert.pem"), NULL),
                    NATSIO_ERR_CONFIG);
    NT_CHECK_INT_EQ(natsio_options_set_tls(o, tls_file("ca.pem"), NULL, tls_file("client-key.pem")),
                    NATSIO_ERR_CONFIG);
    /* Not PEM certificates: a key file as CA, gen.sh as certificate. */
    NT_CHECK_INT_EQ(natsio_options_set_tls(o, tls_file("gen.sh"), NULL, NULL), NATSIO_ERR_CONFIG);
    NT_CHECK_INT_EQ(natsio_options_set_tls(o, tls_file("ca.pem"), tls_file("gen.sh"), tls_file("client-key.pem")),
                    NATSIO_ERR_CONFIG);
    NT_CHECK_INT_EQ(natsio_options_set_tls(NULL, NULL, NULL, NULL), NATSIO_ERR_NULL_ARGUMENT);
    NT_CHECK_INT_EQ(natsio_options_set_tls_hostname(o, NULL), NATSIO_ERR_NULL_ARGUMENT);
    /* Valid files are accepted after the failures. */
    NT_CHECK_INT_EQ(natsio_options_set_tls(o, tls_file("ca.pem"), tls_file("client-cert.pem"), tls_file("client-key.pem")),
                    NATSIO_OK);
}

int main(int argc, char **argv) {
    static const nt_case cases[] = {
        NT_CASE(test_tls_url_with_the_right_ca),
        NT_CASE(test_server_required_tls_upgrades_a_nats_url),
        NT_CASE(test_wrong_ca_is_rejected),
        NT_CASE(test_system_roots_reject_the_test_ca),
        NT_CASE(test_mutual_tls_required_and_satisfied),
        NT_CASE(test_mutual_tls_required_and_missing_or_wrong),
        NT_CASE(test_mutual_tls_from_memory),
        NT_CASE(test_hostname_override),
        NT_CASE(test_tls_handshake_first),
        NT_CASE(test_tls_url_to_a_plain_server_fails),
        NT_CASE(test_tls_option_validation),
        NT_CASE(test_reconnect_over_tls),
    };
    return nt_main(argc, argv, cases, NT_COUNT(cases));
}
