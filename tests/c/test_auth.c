/*
 * Authentication through the C ABI against servers configured for each
 * kind: user/password (options and URL), token, NKey (seed string and seed
 * file), credentials file (operator mode, JWTs from tests/fixtures/auth),
 * and the callback authenticator (the JWT from the fixtures, the nonce
 * signed with libcrypto's Ed25519 via nt_nkey_sign). Each accepts the right
 * credentials and rejects wrong ones with NATSIO_ERR_AUTHORIZATION; two
 * kinds at once fail with NATSIO_ERR_CONFIG naming both; a credential
 * rejected again and again while reconnecting closes the client unless
 * natsio_options_set_ignore_auth_error_abort.
 */
#define _POSIX_C_SOURCE 200809L

#include "harness.h"
#include "util.h"

#include <natsio.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------ */

/* Options for `url`, freed when the case ends. Reconnects are fast so the
 * reconnect cases stay short. */
static natsio_options *fast_reconnect_options(const char *url) {
    natsio_options *o = options_for_url(url, 2000);
    if (o && (natsio_options_set_reconnect_wait(o, 50, 200) != NATSIO_OK ||
              natsio_options_set_reconnect_jitter(o, 10, 10) != NATSIO_OK)) {
        nt_fail_at(__FILE__, __LINE__, "setting options: %s", natsio_last_error());
        return NULL;
    }
    return o;
}

static const char *fixture(char *buf, size_t cap, const char *relative) {
    return nt_fixture_path(buf, cap, relative);
}

/* Reads a fixture, failing the case if it is missing. Freed at case end. */
static char *read_fixture(const char *relative) {
    char path[1024];
    char *text = nt_read_file(fixture(path, sizeof path, relative));
    if (!text) {
        nt_fail_at(__FILE__, __LINE__, "fixture %s missing", path);
        return NULL;
    }
    nt_cleanup(free, text);
    /* Seeds and JWTs are one line: drop the newline. */
    size_t len = strlen(text);
    while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r')) text[--len] = '\0';
    return text;
}

/* Connects and proves the connection works (a message round trip).
 * Returns the status of natsio_client_connect. */
static natsio_status connect_and_use(const natsio_options *o) {
    natsio_client *c = NULL;
    natsio_status st = natsio_client_connect(o, &c);
    if (st != NATSIO_OK) return st;
    nt_cleanup(client_free_cb, c);
    if (!message_round_trip(c, "auth.check", "ok"))
        nt_fail_at(__FILE__, __LINE__, "connected, but no round trip: %s", natsio_last_error());
    return st;
}

/* Expects natsio_client_connect to fail with `want`, leaving the output
 * untouched, with a detail text. */
#define CHECK_CONNECT_FAILS(opts, want)                                                                         \
    do {                                                                                                        \
        natsio_client *sentinel_ = (natsio_client *)(opts);                                                     \
        natsio_client *c_ = sentinel_;                                                                          \
        natsio_status st_ = natsio_client_connect((opts), &c_);                                                 \
        if (st_ == NATSIO_OK) {                                                                                 \
            nt_cleanup(client_free_cb, c_);                                                                     \
            NT_FAIL("connect succeeded, expected %s", natsio_status_str(want));                                 \
        }                                                                                                       \
        NT_CHECK_MSG(st_ == (want), "connect: %s (%s), expected %s", natsio_status_str(st_), natsio_last_error(), \
                     natsio_status_str(want));                                                                  \
        NT_CHECK(c_ == sentinel_);                                                                              \
        NT_CHECK(natsio_last_error()[0] != '\0');                                                               \
    } while (0)

static char *url_with_userinfo(const nt_server *s, const char *userinfo) {
    char *url = (char *)malloc(256);
    if (!url) return NULL;
    snprintf(url, 256, "nats://%s@127.0.0.1:%d", userinfo, nt_server_port(s));
    nt_cleanup(free, url);
    return url;
}

/* ---- user / password ------------------------------------------------------------ */

static const char *USER_PASSWORD_CONFIG = "authorization { user: alice, password: \"s3cret\" }";

static void test_user_password_accepts_right_and_rejects_wrong(void) {
    nt_server *s = start_server(USER_PASSWORD_CONFIG);
    NT_CHECK(s != NULL);

    natsio_options *right = fast_reconnect_options(nt_server_url(s));
    NT_CHECK(right != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_user_password(right, "alice", "s3cret"), NATSIO_OK);
    NT_CHECK_INT_EQ(connect_and_use(right), NATSIO_OK);

    natsio_options *wrong = fast_reconnect_options(nt_server_url(s));
    NT_CHECK(wrong != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_user_password(wrong, "alice", "guess"), NATSIO_OK);
    CHECK_CONNECT_FAILS(wrong, NATSIO_ERR_AUTHORIZATION);
    NT_CHECK_MSG(contains_ci(natsio_last_error(), "authorization"), "detail: %s", natsio_last_error());

    natsio_options *none = fast_reconnect_options(nt_server_url(s));
    NT_CHECK(none != NULL);
    CHECK_CONNECT_FAILS(none, NATSIO_ERR_AUTHORIZATION);
}

static void test_user_password_in_url(void) {
    nt_server *s = start_server(USER_PASSWORD_CONFIG);
    NT_CHECK(s != NULL);
    natsio_options *right = fast_reconnect_options(url_with_userinfo(s, "alice:s3cret"));
    NT_CHECK(right != NULL);
    NT_CHECK_INT_EQ(connect_and_use(right), NATSIO_OK);

    natsio_client *c = NULL;
    NT_CHECK_INT_EQ(natsio_client_connect_url(url_with_userinfo(s, "alice:s3cret"), &c), NATSIO_OK);
    nt_cleanup(client_free_cb, c);

    natsio_options *wrong = fast_reconnect_options(url_with_userinfo(s, "alice:nope"));
    NT_CHECK(wrong != NULL);
    CHECK_CONNECT_FAILS(wrong, NATSIO_ERR_AUTHORIZATION);

    /* Credentials in the URL take precedence over the options'. */
    natsio_options *both = fast_reconnect_options(url_with_userinfo(s, "alice:s3cret"));
    NT_CHECK(both != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_user_password(both, "alice", "stale"), NATSIO_OK);
    NT_CHECK_INT_EQ(connect_and_use(both), NATSIO_OK);
}

/* ---- token ------------------------------------------------------------ */

static void test_token_accepts_right_and_rejects_wrong(void) {
    nt_server *s = start_server("authorization { token: \"t0k3n-for-tests\" }");
    NT_CHECK(s != NULL);
    natsio_options *right = fast_reconnect_options(nt_server_url(s));
    NT_CHECK(right != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_token(right, "t0k3n-for-tests"), NATSIO_OK);
    NT_CHECK_INT_EQ(connect_and_use(right), NATSIO_OK);

    natsio_options *wrong = fast_reconnect_options(nt_server_url(s));
    NT_CHECK(wrong != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_token(wrong, "t0k3n-for-test"), NATSIO_OK);
    CHECK_CONNECT_FAILS(wrong, NATSIO_ERR_AUTHORIZATION);

    natsio_options *none = fast_reconnect_options(nt_server_url(s));
    NT_CHECK(none != NULL);
    CHECK_CONNECT_FAILS(none, NATSIO_ERR_AUTHORIZATION);
}

/* ---- NKey ------------------------------------------------------------ */

static nt_server *start_nkey_server(void) {
    const char *pub = read_fixture("auth/nkey-user.pub");
    if (!pub) return NULL;
    char config[256];
    snprintf(config, sizeof config, "authorization { users = [ { nkey: %s } ] }", pub);
    return start_server(config);
}

static void test_nkey_seed_and_seed_file(void) {
    nt_server *s = start_nkey_server();
    NT_CHECK(s != NULL);
    const char *seed = read_fixture("auth/nkey-user.nk");
    NT_CHECK(seed != NULL);
    char path[1024];

    natsio_options *by_seed = fast_reconnect_options(nt_server_url(s));
    NT_CHECK(by_seed != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_nkey_seed(by_seed, seed), NATSIO_OK);
    NT_CHECK_INT_EQ(connect_and_use(by_seed), NATSIO_OK);

    natsio_options *by_file = fast_reconnect_options(nt_server_url(s));
    NT_CHECK(by_file != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_nkey_file(by_file, fixture(path, sizeof path, "auth/nkey-user.nk")), NATSIO_OK);
    NT_CHECK_INT_EQ(connect_and_use(by_file), NATSIO_OK);

    /* A valid seed the server does not know. */
    natsio_options *other = fast_reconnect_options(nt_server_url(s));
    NT_CHECK(other != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_nkey_file(other, fixture(path, sizeof path, "auth/nkey-other.nk")), NATSIO_OK);
    CHECK_CONNECT_FAILS(other, NATSIO_ERR_AUTHORIZATION);

    natsio_options *none = fast_reconnect_options(nt_server_url(s));
    NT_CHECK(none != NULL);
    CHECK_CONNECT_FAILS(none, NATSIO_ERR_AUTHORIZATION);
}

static void test_nkey_bad_seeds_are_config_errors(void) {
    natsio_options *o = fast_reconnect_options("nats://127.0.0.1:4222");
    NT_CHECK(o != NULL);
    const char *seed = read_fixture("auth/nkey-user.nk");
    NT_CHECK(seed != NULL);
    /* Not a seed: a public key, garbage, a seed with a flipped character. */
    const char *pub = read_fixture("auth/nkey-user.pub");
    NT_CHECK(pub != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_nkey_seed(o, pub), NATSIO_ERR_CONFIG);
    NT_CHECK_INT_EQ(natsio_options_set_nkey_seed(o, "SUnotaseed"), NATSIO_ERR_CONFIG);
    char corrupted[128];
    snprintf(corrupted, sizeof corrupted, "%s", seed);
    corrupted[10] = corrupted[10] == 'A' ? 'B' : 'A';
    NT_CHECK_INT_EQ(natsio_options_set_nkey_seed(o, corrupted), NATSIO_ERR_CONFIG);
    char path[1024];
    NT_CHECK_INT_EQ(natsio_options_set_nkey_file(o, fixture(path, sizeof path, "auth/does-not-exist.nk")),
                    NATSIO_ERR_CONFIG);
    NT_CHECK(natsio_last_error()[0] != '\0');
    /* The failed calls left the options usable. */
    NT_CHECK_INT_EQ(natsio_options_set_nkey_seed(o, seed), NATSIO_OK);
}

/* ---- credentials file (operator mode) ------------------------------------------------------------ */

static nt_server *start_operator_server(void) {
    const char *config = read_fixture("auth/operator.conf");
    if (!config) return NULL;
    return start_server(config);
}

static void test_credentials_file(void) {
    nt_server *s = start_operator_server();
    NT_CHECK(s != NULL);
    char path[1024];

    natsio_options *right = fast_reconnect_options(nt_server_url(s));
    NT_CHECK(right != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_credentials_file(right, fixture(path, sizeof path, "auth/user.creds")),
                    NATSIO_OK);
    NT_CHECK_INT_EQ(connect_and_use(right), NATSIO_OK);

    /* A user of an account the server does not know. */
    natsio_options *stranger = fast_reconnect_options(nt_server_url(s));
    NT_CHECK(stranger != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_credentials_file(stranger, fixture(path, sizeof path, "auth/stranger.creds")),
                    NATSIO_OK);
    CHECK_CONNECT_FAILS(stranger, NATSIO_ERR_AUTHORIZATION);

    /* A user its account has revoked. */
    natsio_options *revoked = fast_reconnect_options(nt_server_url(s));
    NT_CHECK(revoked != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_credentials_file(revoked, fixture(path, sizeof path, "auth/revoked.creds")),
                    NATSIO_OK);
    CHECK_CONNECT_FAILS(revoked, NATSIO_ERR_AUTHORIZATION);

    /* No credentials at all. */
    natsio_options *none = fast_reconnect_options(nt_server_url(s));
    NT_CHECK(none != NULL);
    CHECK_CONNECT_FAILS(none, NATSIO_ERR_AUTHORIZATION);

    natsio_options *missing = fast_reconnect_options(nt_server_url(s));
    NT_CHECK(missing != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_credentials_file(missing, fixture(path, sizeof path, "auth/missing.creds")),
                    NATSIO_ERR_CONFIG);
}

/* ---- callback authenticator ------------------------------------------------------------ */

typedef struct {
    const char *jwt;    /* NULL: jwt_cb fails the attempt */
    const char *seed;   /* signs with this seed */
    bool corrupt;       /* flip a bit of the signature */
    atomic_int jwt_calls;
    atomic_int sign_calls;
    atomic_size_t nonce_len;
    atomic_int released;
} authenticator;

static const char *auth_jwt(void *user_data) { return ((authenticator *)user_data)->jwt; }

static natsio_status auth_sign(void *user_data, const uint8_t *nonce, size_t nonce_len, uint8_t *signature_out) {
    authenticator *a = (authenticator *)user_data;
    atomic_fetch_add(&a->sign_calls, 1);
    atomic_store(&a->nonce_len, nonce_len);
    if (!nt_nkey_sign(a->seed, nonce, nonce_len, signature_out)) return NATSIO_ERR_INVALID_ARGUMENT;
    if (a->corrupt) signature_out[0] ^= 0x01;
    return NATSIO_OK;
}

static const char *auth_jwt_counting(void *user_data) {
    authenticator *a = (authenticator *)user_data;
    atomic_fetch_add(&a->jwt_calls, 1);
    return a->jwt;
}

static void auth_release(void *user_data) { atomic_fetch_add(&((authenticator *)user_data)->released, 1); }

static void test_callback_authenticator(void) {
    nt_server *s = start_operator_server();
    NT_CHECK(s != NULL);
    const char *jwt = read_fixture("auth/user.jwt");
    const char *seed = read_fixture("auth/user.nk");
    const char *other_seed = read_fixture("auth/nkey-other.nk");
    NT_CHECK(jwt && seed && other_seed);

    /* Right JWT, nonce signed with its key. */
    static authenticator good;
    memset(&good, 0, sizeof good);
    good.jwt = jwt;
    good.seed = seed;
    natsio_options *o = NULL;
    NT_CHECK_INT_EQ(natsio_options_new(&o), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_options_set_url(o, nt_server_url(s)), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_options_set_auth_callbacks(o, auth_jwt_counting, auth_sign, &good, auth_release), NATSIO_OK);
    natsio_client *c = NULL;
    natsio_status st = natsio_client_connect(o, &c);
    natsio_options_free(o);
    NT_CHECK_MSG(st == NATSIO_OK, "connect: %s (%s)", natsio_status_str(st), natsio_last_error());
    NT_CHECK_INT_EQ(natsio_client_flush(c, 2000), NATSIO_OK);
    NT_CHECK(atomic_load(&good.jwt_calls) >= 1);
    NT_CHECK(atomic_load(&good.sign_calls) >= 1);
    NT_CHECK(atomic_load(&good.nonce_len) > 0);
    /* The client still holds the callbacks: not released yet. */
    NT_CHECK_INT_EQ(atomic_load(&good.released), 0);
    natsio_client_free(c);
    int64_t deadline = nt_now_ms() + 2000;
    while (atomic_load(&good.released) == 0 && nt_now_ms() < deadline) nt_sleep_ms(5);
    NT_CHECK_INT_EQ(atomic_load(&good.released), 1);

    /* A corrupted signature. */
    static authenticator bad_sig;
    memset(&bad_sig, 0, sizeof bad_sig);
    bad_sig.jwt = jwt;
    bad_sig.seed = seed;
    bad_sig.corrupt = true;
    natsio_options *wrong = fast_reconnect_options(nt_server_url(s));
    NT_CHECK(wrong != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_auth_callbacks(wrong, auth_jwt, auth_sign, &bad_sig, NULL), NATSIO_OK);
    CHECK_CONNECT_FAILS(wrong, NATSIO_ERR_AUTHORIZATION);
    NT_CHECK(atomic_load(&bad_sig.sign_calls) >= 1);

    /* A valid signature by a key that is not the JWT's subject. */
    static authenticator other_key;
    memset(&other_key, 0, sizeof other_key);
    other_key.jwt = jwt;
    other_key.seed = other_seed;
    natsio_options *mismatch = fast_reconnect_options(nt_server_url(s));
    NT_CHECK(mismatch != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_auth_callbacks(mismatch, auth_jwt, auth_sign, &other_key, NULL), NATSIO_OK);
    CHECK_CONNECT_FAILS(mismatch, NATSIO_ERR_AUTHORIZATION);

    /* The signature callback refusing fails the connection attempt. */
    static authenticator refusing;
    memset(&refusing, 0, sizeof refusing);
    refusing.jwt = jwt;
    refusing.seed = "not a seed";
    natsio_options *refused = fast_reconnect_options(nt_server_url(s));
    NT_CHECK(refused != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_auth_callbacks(refused, auth_jwt, auth_sign, &refusing, NULL), NATSIO_OK);
    natsio_client *never = NULL;
    NT_CHECK(natsio_client_connect(refused, &never) != NATSIO_OK);
    NT_CHECK(never == NULL);
    NT_CHECK(atomic_load(&refusing.sign_calls) >= 1);

    /* Missing callbacks are rejected when set. */
    natsio_options *nulls = fast_reconnect_options(nt_server_url(s));
    NT_CHECK(nulls != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_auth_callbacks(nulls, NULL, auth_sign, NULL, NULL), NATSIO_ERR_NULL_ARGUMENT);
    NT_CHECK_INT_EQ(natsio_options_set_auth_callbacks(nulls, auth_jwt, NULL, NULL, NULL), NATSIO_ERR_NULL_ARGUMENT);
}

/* ---- conflicts ------------------------------------------------------------ */

/* Records (without returning) a failure unless the last error names both
 * kinds, so every conflict below is still checked. */
static void expect_detail_names(int line, const char *kind_a, const char *kind_b) {
    const char *detail = natsio_last_error();
    if (!contains_ci(detail, kind_a) || !contains_ci(detail, kind_b))
        nt_fail_at(__FILE__, line, "conflict detail does not name both \"%s\" and \"%s\": %s", kind_a, kind_b,
                   detail);
}

static void test_two_auth_kinds_are_a_config_error(void) {
    char creds[1024], nk[1024];
    fixture(creds, sizeof creds, "auth/user.creds");
    fixture(nk, sizeof nk, "auth/nkey-user.nk");
    const char *seed = read_fixture("auth/nkey-user.nk");
    NT_CHECK(seed != NULL);

    natsio_options *a = fast_reconnect_options("nats://127.0.0.1:4222");
    NT_CHECK(a != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_token(a, "tok"), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_options_set_nkey_seed(a, seed), NATSIO_ERR_CONFIG);
    expect_detail_names(__LINE__, "token", "nkey");
    NT_CHECK_INT_EQ(natsio_options_set_credentials_file(a, creds), NATSIO_ERR_CONFIG);
    expect_detail_names(__LINE__, "token", "credentials");
    NT_CHECK_INT_EQ(natsio_options_set_user_password(a, "alice", "s3cret"), NATSIO_ERR_CONFIG);
    expect_detail_names(__LINE__, "token", "user");

    natsio_options *b = fast_reconnect_options("nats://127.0.0.1:4222");
    NT_CHECK(b != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_credentials_file(b, creds), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_options_set_user_password(b, "alice", "s3cret"), NATSIO_ERR_CONFIG);
    expect_detail_names(__LINE__, "credentials", "user");
    NT_CHECK_INT_EQ(natsio_options_set_token(b, "tok"), NATSIO_ERR_CONFIG);
    expect_detail_names(__LINE__, "credentials", "token");
    NT_CHECK_INT_EQ(natsio_options_set_nkey_file(b, nk), NATSIO_ERR_CONFIG);
    expect_detail_names(__LINE__, "credentials", "nkey");
    NT_CHECK_INT_EQ(natsio_options_set_auth_callbacks(b, auth_jwt, auth_sign, NULL, NULL), NATSIO_ERR_CONFIG);
    expect_detail_names(__LINE__, "credentials", "authenticator");

    natsio_options *c = fast_reconnect_options("nats://127.0.0.1:4222");
    NT_CHECK(c != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_auth_callbacks(c, auth_jwt, auth_sign, NULL, NULL), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_options_set_nkey_seed(c, seed), NATSIO_ERR_CONFIG);
    expect_detail_names(__LINE__, "authenticator", "nkey");
    NT_CHECK_INT_EQ(natsio_options_set_user_password(c, "alice", NULL), NATSIO_ERR_CONFIG);
    expect_detail_names(__LINE__, "authenticator", "user");

    /* The options that failed to change still connect as first configured:
     * here, a token server accepts `a`. */
    nt_server *s = start_server("authorization { token: \"tok\" }");
    NT_CHECK(s != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_url(a, nt_server_url(s)), NATSIO_OK);
    NT_CHECK_INT_EQ(connect_and_use(a), NATSIO_OK);
}

/* ---- repeated auth errors while reconnecting ------------------------------------------------------------ */

static bool rewrite_config(nt_server *s, const char *config) {
    char path[1024];
    snprintf(path, sizeof path, "%s/server.conf", nt_server_dir(s));
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    bool ok = fputs(config, f) >= 0 && fputc('\n', f) != EOF;
    return fclose(f) == 0 && ok;
}

typedef struct {
    atomic_int closed;
    atomic_int auth_disconnects; /* DISCONNECTED events caused by an auth error */
} auth_events;

static void on_auth_event(void *user_data, natsio_event_kind kind, natsio_status status, const char *text) {
    (void)text;
    auth_events *e = (auth_events *)user_data;
    if (kind == NATSIO_EVENT_CLOSED) atomic_fetch_add(&e->closed, 1);
    if (kind == NATSIO_EVENT_DISCONNECTED && status == NATSIO_ERR_AUTHORIZATION) atomic_fetch_add(&e->auth_disconnects, 1);
}

/* The server's password changes under a connected client. */
static natsio_client *connect_then_change_password(nt_server *s, bool ignore_abort, auth_events *events) {
    natsio_options *o = fast_reconnect_options(nt_server_url(s));
    if (!o) return NULL;
    natsio_options_set_user_password(o, "alice", "s3cret");
    natsio_options_set_max_reconnect_attempts(o, -1);
    natsio_options_set_ignore_auth_error_abort(o, ignore_abort);
    natsio_options_set_event_callback(o, on_auth_event, events, NULL);
    natsio_client *c = NULL;
    natsio_status st = natsio_client_connect(o, &c);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "connect: %s (%s)", natsio_status_str(st), natsio_last_error());
        return NULL;
    }
    nt_cleanup(client_free_cb, c);
    if (!rewrite_config(s, "authorization { user: alice, password: \"changed\" }") || nt_server_restart(s) != 0) {
        nt_fail_at(__FILE__, __LINE__, "could not restart the server with a new password");
        return NULL;
    }
    return c;
}

static void test_repeated_auth_error_on_reconnect_closes(void) {
    nt_server *s = start_server(USER_PASSWORD_CONFIG);
    NT_CHECK(s != NULL);
    static auth_events events;
    memset(&events, 0, sizeof events);
    natsio_client *c = connect_then_change_password(s, false, &events);
    NT_CHECK(c != NULL);
    NT_CHECK_MSG(wait_status(c, NATSIO_CONN_CLOSED, 15000), "still status %d after 15 s of rejected reconnects",
                 (int)natsio_client_status(c));
    int64_t deadline = nt_now_ms() + 2000;
    while (atomic_load(&events.closed) == 0 && nt_now_ms() < deadline) nt_sleep_ms(5);
    NT_CHECK_INT_EQ(atomic_load(&events.closed), 1);
    NT_CHECK_INT_EQ(natsio_client_publish(c, "x", "1", 1), NATSIO_ERR_CONNECTION_CLOSED);
}

static void test_ignore_auth_error_abort_keeps_trying(void) {
    nt_server *s = start_server(USER_PASSWORD_CONFIG);
    NT_CHECK(s != NULL);
    static auth_events events;
    memset(&events, 0, sizeof events);
    natsio_client *c = connect_then_change_password(s, true, &events);
    NT_CHECK(c != NULL);
    /* Many rejected attempts (reconnect wait is at most 200 ms)... */
    nt_sleep_ms(1500);
    NT_CHECK_INT_EQ(natsio_client_status(c), NATSIO_CONN_RECONNECTING);
    NT_CHECK_INT_EQ(atomic_load(&events.closed), 0);
    /* ...and once the password is back, it gets in again. */
    NT_CHECK(rewrite_config(s, USER_PASSWORD_CONFIG));
    NT_CHECK_INT_EQ(nt_server_restart(s), 0);
    NT_CHECK_MSG(wait_status(c, NATSIO_CONN_CONNECTED, 10000), "did not reconnect (status %d)",
                 (int)natsio_client_status(c));
    NT_CHECK_INT_EQ(natsio_client_flush(c, 2000), NATSIO_OK);
}

int main(int argc, char **argv) {
    static const nt_case cases[] = {
        NT_CASE(test_user_password_accepts_right_and_rejects_wrong),
        NT_CASE(test_user_password_in_url),
        NT_CASE(test_token_accepts_right_and_rejects_wrong),
        NT_CASE(test_nkey_seed_and_seed_file),
        NT_CASE(test_nkey_bad_seeds_are_config_errors),
        NT_CASE(test_credentials_file),
        NT_CASE(test_callback_authenticator),
        NT_CASE(test_two_auth_kinds_are_a_config_error),
        NT_CASE(test_repeated_auth_error_on_reconnect_closes),
        NT_CASE(test_ignore_auth_error_abort_keeps_trying),
    };
    return nt_main(argc, argv, cases, NT_COUNT(cases));
}
