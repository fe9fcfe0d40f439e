/*
 * Authentication through the C ABI against servers configured for each
 * kind: user/password (options and URL), token, NKey (seed string and seed
 * file), credentials file (operator mode, JWTs from tests/fixtures/auth),
 * and the callback authenticator (the JWT from the fixtures, the nonce
 * signed with libcrypto's Ed25519 via nt_nkey_sign), and the general
 * authenticator (natsio_options_set_authenticator: an NKey user's
 * signature of every nonce, user/password, fields that would break a
 * hand-written CONNECT). Each accepts the right
 * credentials and rejects wrong ones with NATSIO_ERR_AUTHORIZATION; two
 * kinds at once fail with NATSIO_ERR_CONFIG naming both; a credential
 * rejected again and again while reconnecting closes the client unless
 * natsio_options_set_ignore_auth_error_abort. A user JWT that expires while
 * connected (operator mode minted at run time: nt_nkey_create,
 * nt_jwt_encode) ends the connection with NATSIO_ERR_AUTH_EXPIRED; the
 * client reconnects with a renewed JWT, and closes when the server keeps
 * rejecting the old one, as nats.go does.
 */
#define _POSIX_C_SOURCE 200809L

#include "harness.h"
#include "util.h"

#include <natsio.h>

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
    atomic_bool refuse; /* auth_sign fails while set */
    int status;         /* non-zero: auth_sign returns it as is (any int) */
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
    if (atomic_load(&a->refuse)) return NATSIO_ERR_INVALID_ARGUMENT;
    if (a->status != 0) return (natsio_status)a->status;
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
    NT_CHECK_INT_EQ(natsio_client_connect(refused, &never), NATSIO_ERR_CONFIG);
    NT_CHECK_MSG(strstr(natsio_last_error(), "signature callback failed with status 102") != NULL, "detail: %s",
                 natsio_last_error());
    NT_CHECK(never == NULL);
    NT_CHECK(atomic_load(&refusing.sign_calls) >= 1);

    /* A status outside natsio_status (a C enum holds any int) fails it too. */
    static authenticator unknown_status;
    memset(&unknown_status, 0, sizeof unknown_status);
    unknown_status.jwt = jwt;
    unknown_status.seed = seed;
    unknown_status.status = 12345;
    natsio_options *odd = fast_reconnect_options(nt_server_url(s));
    NT_CHECK(odd != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_auth_callbacks(odd, auth_jwt, auth_sign, &unknown_status, NULL), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_connect(odd, &never), NATSIO_ERR_CONFIG);
    NT_CHECK_MSG(strstr(natsio_last_error(), "signature callback failed with status 12345") != NULL, "detail: %s",
                 natsio_last_error());
    NT_CHECK(never == NULL);

    /* Missing callbacks are rejected when set. */
    natsio_options *nulls = fast_reconnect_options(nt_server_url(s));
    NT_CHECK(nulls != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_auth_callbacks(nulls, NULL, auth_sign, NULL, NULL), NATSIO_ERR_NULL_ARGUMENT);
    NT_CHECK_INT_EQ(natsio_options_set_auth_callbacks(nulls, auth_jwt, NULL, NULL, NULL), NATSIO_ERR_NULL_ARGUMENT);
}

typedef struct {
    authenticator *auth;
    int calls_before;
} refusals;

/* The signature callback has refused at least two reconnect attempts. */
static bool refused_twice(void *arg) {
    refusals *r = (refusals *)arg;
    return atomic_load(&r->auth->sign_calls) >= r->calls_before + 2;
}

/* An authenticator that fails at a reconnect (a key store briefly away)
 * does not end the client: each attempt fails, the client keeps trying, and
 * it reconnects once the callback signs again. */
static void test_callback_authenticator_failing_at_a_reconnect(void) {
    nt_server *s = start_operator_server();
    NT_CHECK(s != NULL);
    static authenticator flaky;
    memset(&flaky, 0, sizeof flaky);
    flaky.jwt = read_fixture("auth/user.jwt");
    flaky.seed = read_fixture("auth/user.nk");
    NT_CHECK(flaky.jwt && flaky.seed);
    natsio_options *o = fast_reconnect_options(nt_server_url(s));
    NT_CHECK(o != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_auth_callbacks(o, auth_jwt, auth_sign, &flaky, NULL), NATSIO_OK);
    natsio_client *c = NULL;
    natsio_status st = natsio_client_connect(o, &c);
    NT_CHECK_MSG(st == NATSIO_OK, "connect: %s (%s)", natsio_status_str(st), natsio_last_error());
    nt_cleanup(client_free_cb, c);

    refusals r = {&flaky, 0};
    atomic_store(&flaky.refuse, true);
    r.calls_before = atomic_load(&flaky.sign_calls);
    NT_CHECK_INT_EQ(nt_server_restart(s), 0);
    NT_CHECK_MSG(nt_wait_until(refused_twice, &r, 10000), "sign calls: %d", atomic_load(&flaky.sign_calls));
    NT_CHECK_INT_EQ(natsio_client_status(c), NATSIO_CONN_RECONNECTING);

    atomic_store(&flaky.refuse, false);
    NT_CHECK_MSG(nt_wait_until(client_connected, c, 10000), "not reconnected: status %d",
                 (int)natsio_client_status(c));
    NT_CHECK_INT_EQ(natsio_client_flush(c, 2000), NATSIO_OK);
    natsio_client_stats stats;
    NT_CHECK_INT_EQ(natsio_client_get_stats(c, &stats), NATSIO_OK);
    NT_CHECK_INT_EQ(stats.reconnects, 1);
}

/* ---- callable user/password and token ------------------------------------------------------------ */

static bool rewrite_config(nt_server *s, const char *config);

/* Credentials given by callbacks: the first call gives the first value,
 * every later call the second (a rotated secret). */
typedef struct {
    atomic_int calls;
    const char *first, *later;
} rotating_secret;

static natsio_status rotating_user_password(void *ud, const char **user_out, const char **password_out) {
    rotating_secret *r = (rotating_secret *)ud;
    *user_out = "alice";
    *password_out = atomic_fetch_add(&r->calls, 1) == 0 ? r->first : r->later;
    return NATSIO_OK;
}

static const char *rotating_token(void *ud) {
    rotating_secret *r = (rotating_secret *)ud;
    return atomic_fetch_add(&r->calls, 1) == 0 ? r->first : r->later;
}

static const char *null_token(void *ud) {
    (void)ud;
    return NULL;
}

/* Connects with `o` (its callback set), then restarts the server with
 * `new_config`: the client reconnects only if the callback, called again,
 * gives the new secret. */
static void check_rotation(nt_server *s, natsio_options *o, rotating_secret *r, const char *new_config) {
    natsio_client *c = NULL;
    natsio_status st = natsio_client_connect(o, &c);
    NT_CHECK_MSG(st == NATSIO_OK, "connect: %s (%s)", natsio_status_str(st), natsio_last_error());
    nt_cleanup(client_free_cb, c);
    NT_CHECK_INT_EQ(atomic_load(&r->calls), 1);
    NT_CHECK(message_round_trip(c, "auth.rotate", "before"));
    NT_CHECK(rewrite_config(s, new_config));
    NT_CHECK_INT_EQ(nt_server_restart(s), 0);
    NT_CHECK_MSG(nt_wait_until(client_connected, c, 10000) && natsio_client_flush(c, 2000) == NATSIO_OK,
                 "not reconnected: status %d (%s)", (int)natsio_client_status(c), natsio_last_error());
    NT_CHECK(atomic_load(&r->calls) >= 2);
    NT_CHECK(message_round_trip(c, "auth.rotate", "after"));
    natsio_client_stats stats;
    NT_CHECK_INT_EQ(natsio_client_get_stats(c, &stats), NATSIO_OK);
    NT_CHECK_INT_EQ(stats.reconnects, 1);
}

static void test_user_password_callback_at_every_connect(void) {
    nt_server *s = start_server(USER_PASSWORD_CONFIG);
    NT_CHECK(s != NULL);
    static rotating_secret r;
    r.first = "s3cret";
    r.later = "changed";
    atomic_store(&r.calls, 0);
    natsio_options *o = fast_reconnect_options(nt_server_url(s));
    NT_CHECK(o != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_user_password_callback(o, rotating_user_password, &r, NULL), NATSIO_OK);
    check_rotation(s, o, &r, "authorization { user: alice, password: \"changed\" }");

    /* Argument and conflict errors. */
    natsio_options *bad = fast_reconnect_options(nt_server_url(s));
    NT_CHECK(bad != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_user_password_callback(bad, NULL, NULL, NULL), NATSIO_ERR_NULL_ARGUMENT);
    NT_CHECK_INT_EQ(natsio_options_set_user_password(bad, "alice", "x"), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_options_set_user_password_callback(bad, rotating_user_password, &r, NULL), NATSIO_ERR_CONFIG);
}

static void test_token_callback_at_every_connect(void) {
    nt_server *s = start_server("authorization { token: \"t1\" }");
    NT_CHECK(s != NULL);
    static rotating_secret r;
    r.first = "t1";
    r.later = "t2";
    atomic_store(&r.calls, 0);
    natsio_options *o = fast_reconnect_options(nt_server_url(s));
    NT_CHECK(o != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_token_callback(o, rotating_token, &r, NULL), NATSIO_OK);
    check_rotation(s, o, &r, "authorization { token: \"t2\" }");

    /* A callback giving no token fails the attempt. */
    natsio_options *none = fast_reconnect_options(nt_server_url(s));
    NT_CHECK(none != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_token_callback(none, null_token, NULL, NULL), NATSIO_OK);
    CHECK_CONNECT_FAILS(none, NATSIO_ERR_CONFIG);
    NT_CHECK_INT_EQ(natsio_options_set_token_callback(none, NULL, NULL, NULL), NATSIO_ERR_NULL_ARGUMENT);
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

/* ---- the general authenticator (natsio_options_set_authenticator) ---------------------------------- */

/* What the callback gives, per mode, and what it saw. */
typedef enum { GIVE_NKEY, GIVE_USER_PASSWORD, GIVE_FAILURE, GIVE_GARBAGE_STATUS, GIVE_BAD_UTF8 } give_mode;

typedef struct {
    give_mode mode;
    const char *seed;     /* GIVE_NKEY: signs with this seed */
    const char *nkey;     /* GIVE_NKEY: the public key it presents */
    bool corrupt;         /* GIVE_NKEY: one character of the signature changed */
    const char *user;     /* GIVE_USER_PASSWORD */
    const char *password; /* GIVE_USER_PASSWORD */
    atomic_int calls;
    atomic_int released;
    atomic_int bad_version; /* a call saw a version other than the header's */
    atomic_int nonce_unterminated;
    /* The nonces of the first two calls (written by the one library
     * thread that calls, read after the connect or reconnect returned). */
    char nonces[2][128];
    char sig[NT_NKEY_SIG_B64_CAP]; /* kept until the next call */
} fields_auth;

static natsio_status give_fields(void *user_data, const uint8_t *nonce, size_t nonce_len, natsio_auth_fields *out) {
    fields_auth *a = (fields_auth *)user_data;
    int call = atomic_fetch_add(&a->calls, 1);
    if (out->version != NATSIO_AUTH_FIELDS_VERSION) atomic_fetch_add(&a->bad_version, 1);
    if (nonce == NULL || nonce[nonce_len] != '\0') atomic_fetch_add(&a->nonce_unterminated, 1);
    if (call < 2 && nonce) snprintf(a->nonces[call], sizeof a->nonces[call], "%.*s", (int)nonce_len, (const char *)nonce);
    switch (a->mode) {
    case GIVE_NKEY:
        if (!nt_nkey_sign_base64url(a->seed, nonce, nonce_len, a->sig)) return NATSIO_ERR_INVALID_ARGUMENT;
        if (a->corrupt) a->sig[3] = a->sig[3] == 'A' ? 'B' : 'A';
        out->nkey = a->nkey;
        out->sig = a->sig;
        return NATSIO_OK;
    case GIVE_USER_PASSWORD:
        out->user = a->user;
        out->pass = a->password;
        return NATSIO_OK;
    case GIVE_FAILURE:
        return NATSIO_ERR_NOT_FOUND;
    case GIVE_GARBAGE_STATUS:
        return (natsio_status)123456;
    case GIVE_BAD_UTF8:
        out->user = "al\xff\xfeice";
        return NATSIO_OK;
    }
    return NATSIO_ERR_INTERNAL;
}

static void fields_auth_release(void *user_data) { atomic_fetch_add(&((fields_auth *)user_data)->released, 1); }

/* Options for `s` authenticating through `a`. */
static natsio_options *authenticator_options(const nt_server *s, fields_auth *a) {
    natsio_options *o = fast_reconnect_options(nt_server_url(s));
    if (o && natsio_options_set_authenticator(o, give_fields, a, NULL) != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "set_authenticator: %s", natsio_last_error());
        return NULL;
    }
    return o;
}

typedef struct {
    fields_auth *auth;
    int calls;
} calls_wait;

static bool called_at_least(void *arg) {
    calls_wait *w = (calls_wait *)arg;
    return atomic_load(&w->auth->calls) >= w->calls;
}

/* nats.go's Nkey(pubKey, sigCB): the callback signs the server's nonce
 * with the seed of an NKey user; the server lets it in, and after a
 * server restart it is asked again, with the new connection's nonce. The
 * release comes once, when the client is freed. */
/* natsio_nkey_sign signs as an independent signer does (the harness's,
 * over OpenSSL), for an authenticator that holds its seed itself. */
static void test_nkey_sign_matches_an_independent_signer(void) {
    char seed[NT_NKEY_SEED_CAP], pub[NT_NKEY_PUBLIC_CAP], want[NT_NKEY_SIG_B64_CAP];
    NT_CHECK(nt_nkey_create('U', seed));
    NT_CHECK(nt_nkey_public(seed, pub));
    const char nonce[] = "a server nonce";
    NT_CHECK(nt_nkey_sign_base64url(seed, nonce, strlen(nonce), want));
    char *public_key = NULL, *sig = NULL;
    NT_CHECK_INT_EQ(natsio_nkey_sign(seed, (const uint8_t *)nonce, strlen(nonce), &public_key, &sig), NATSIO_OK);
    NT_CHECK_STR_EQ(public_key, pub);
    NT_CHECK_STR_EQ(sig, want);
    natsio_string_free(public_key);
    natsio_string_free(sig);
    /* The public key is optional; empty data is signed too. */
    sig = NULL;
    NT_CHECK_INT_EQ(natsio_nkey_sign(seed, NULL, 0, NULL, &sig), NATSIO_OK);
    NT_CHECK(nt_nkey_sign_base64url(seed, "", 0, want));
    NT_CHECK_STR_EQ(sig, want);
    natsio_string_free(sig);

    sig = NULL;
    NT_CHECK_INT_EQ(natsio_nkey_sign("SUnotaseed", (const uint8_t *)"x", 1, NULL, &sig), NATSIO_ERR_CONFIG);
    NT_CHECK(sig == NULL);
    NT_CHECK_INT_EQ(natsio_nkey_sign(NULL, (const uint8_t *)"x", 1, NULL, &sig), NATSIO_ERR_NULL_ARGUMENT);
    NT_CHECK_INT_EQ(natsio_nkey_sign(seed, NULL, 1, NULL, &sig), NATSIO_ERR_NULL_ARGUMENT);
    NT_CHECK_INT_EQ(natsio_nkey_sign(seed, (const uint8_t *)"x", 1, NULL, NULL), NATSIO_ERR_NULL_ARGUMENT);
    NT_CHECK_INT_EQ(natsio_nkey_sign("SU\xff", (const uint8_t *)"x", 1, NULL, &sig), NATSIO_ERR_INVALID_UTF8);
}

static void test_authenticator_signs_every_nonce(void) {
    nt_server *s = start_nkey_server();
    NT_CHECK(s != NULL);
    static fields_auth a;
    memset(&a, 0, sizeof a);
    a.mode = GIVE_NKEY;
    a.seed = read_fixture("auth/nkey-user.nk");
    a.nkey = read_fixture("auth/nkey-user.pub");
    NT_CHECK(a.seed && a.nkey);
    /* Options of this case's own (fast_reconnect_options' are freed at
     * the case's end: this one checks the release before). */
    natsio_options *o = NULL;
    NT_CHECK_INT_EQ(natsio_options_new(&o), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_options_set_url(o, nt_server_url(s)), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_options_set_reconnect_wait(o, 50, 200), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_options_set_authenticator(o, give_fields, &a, fields_auth_release), NATSIO_OK);
    natsio_client *c = NULL;
    natsio_status st = natsio_client_connect(o, &c);
    NT_CHECK_MSG(st == NATSIO_OK, "connect: %s (%s)", natsio_status_str(st), natsio_last_error());
    NT_CHECK(message_round_trip(c, "auth.fields", "ok"));
    NT_CHECK_INT_EQ(atomic_load(&a.calls), 1);
    NT_CHECK_MSG(strlen(a.nonces[0]) > 0, "no nonce");
    NT_CHECK_INT_EQ(atomic_load(&a.bad_version), 0);
    NT_CHECK_INT_EQ(atomic_load(&a.nonce_unterminated), 0);

    NT_CHECK_INT_EQ(nt_server_restart(s), 0);
    calls_wait w = {&a, 2};
    NT_CHECK_MSG(nt_wait_until(called_at_least, &w, 10000) && nt_wait_until(client_connected, c, 10000),
                 "not reconnected: %d calls, status %d", atomic_load(&a.calls), (int)natsio_client_status(c));
    NT_CHECK(message_round_trip(c, "auth.fields", "again"));
    NT_CHECK_MSG(strlen(a.nonces[1]) > 0 && strcmp(a.nonces[0], a.nonces[1]) != 0, "nonces: \"%s\" then \"%s\"",
                 a.nonces[0], a.nonces[1]);
    natsio_client_stats stats;
    NT_CHECK_INT_EQ(natsio_client_get_stats(c, &stats), NATSIO_OK);
    NT_CHECK_INT_EQ(stats.reconnects, 1);

    /* Held by the options and the client: released once both are gone. */
    natsio_options_free(o);
    NT_CHECK_INT_EQ(atomic_load(&a.released), 0);
    natsio_client_free(c);
    int64_t deadline = nt_now_ms() + 2000;
    while (atomic_load(&a.released) == 0 && nt_now_ms() < deadline) nt_sleep_ms(5);
    NT_CHECK_INT_EQ(atomic_load(&a.released), 1);
}

/* A signature the server cannot verify, or one by a key it does not
 * know, is an authorization violation. */
static void test_authenticator_wrong_signature_is_refused(void) {
    nt_server *s = start_nkey_server();
    NT_CHECK(s != NULL);
    static fields_auth corrupt, stranger;
    memset(&corrupt, 0, sizeof corrupt);
    memset(&stranger, 0, sizeof stranger);
    corrupt.mode = stranger.mode = GIVE_NKEY;
    corrupt.seed = read_fixture("auth/nkey-user.nk");
    corrupt.nkey = stranger.nkey = read_fixture("auth/nkey-user.pub");
    corrupt.corrupt = true;
    stranger.seed = read_fixture("auth/nkey-other.nk");
    NT_CHECK(corrupt.seed && corrupt.nkey && stranger.seed);
    natsio_options *o = authenticator_options(s, &corrupt);
    NT_CHECK(o != NULL);
    CHECK_CONNECT_FAILS(o, NATSIO_ERR_AUTHORIZATION);
    NT_CHECK(atomic_load(&corrupt.calls) >= 1);
    natsio_options *other = authenticator_options(s, &stranger);
    NT_CHECK(other != NULL);
    CHECK_CONNECT_FAILS(other, NATSIO_ERR_AUTHORIZATION);
}

/* User and password through the callback; such a server sends no nonce,
 * so the callback gets an empty one (a valid, NUL-terminated pointer). */
static void test_authenticator_user_password(void) {
    nt_server *s = start_server(USER_PASSWORD_CONFIG);
    NT_CHECK(s != NULL);
    static fields_auth right, wrong;
    memset(&right, 0, sizeof right);
    memset(&wrong, 0, sizeof wrong);
    right.mode = wrong.mode = GIVE_USER_PASSWORD;
    right.user = wrong.user = "alice";
    right.password = "s3cret";
    wrong.password = "guess";
    natsio_options *o = authenticator_options(s, &right);
    NT_CHECK(o != NULL);
    NT_CHECK_INT_EQ(connect_and_use(o), NATSIO_OK);
    NT_CHECK_INT_EQ(atomic_load(&right.calls), 1);
    NT_CHECK_MSG(right.nonces[0][0] == '\0', "nonce \"%s\"", right.nonces[0]);
    NT_CHECK_INT_EQ(atomic_load(&right.nonce_unterminated), 0);
    natsio_options *bad = authenticator_options(s, &wrong);
    NT_CHECK(bad != NULL);
    CHECK_CONNECT_FAILS(bad, NATSIO_ERR_AUTHORIZATION);
}

/* The fields are serialized as JSON: a password with quotes, braces, a
 * backslash and CR LF (a CONNECT injection attempt if pasted raw) reaches
 * the server intact, and a server whose password is exactly that lets the
 * client in. */
static void test_authenticator_fields_cannot_break_connect(void) {
    static const char *PASSWORD = "p\"w},\"user\":\"root\"}\r\nPUB evil 1\r\nx\\";
    nt_server *s = start_server(
        "authorization { user: alice, password: \"p\\\"w},\\\"user\\\":\\\"root\\\"}\\r\\nPUB evil 1\\r\\nx\\\\\" }");
    NT_CHECK(s != NULL);
    static fields_auth a;
    memset(&a, 0, sizeof a);
    a.mode = GIVE_USER_PASSWORD;
    a.user = "alice";
    a.password = PASSWORD;
    natsio_options *o = authenticator_options(s, &a);
    NT_CHECK(o != NULL);
    NT_CHECK_INT_EQ(connect_and_use(o), NATSIO_OK);
}

/* A failing callback fails the attempt (NATSIO_ERR_CONFIG, its status
 * named), as does a status outside natsio_status; a field that is not
 * UTF-8 is NATSIO_ERR_INVALID_UTF8. Bad arguments and a second auth kind
 * are refused when set. */
static void test_authenticator_failures(void) {
    nt_server *s = start_server(USER_PASSWORD_CONFIG);
    NT_CHECK(s != NULL);
    static fields_auth failing, garbage, bad_utf8;
    memset(&failing, 0, sizeof failing);
    memset(&garbage, 0, sizeof garbage);
    memset(&bad_utf8, 0, sizeof bad_utf8);
    failing.mode = GIVE_FAILURE;
    garbage.mode = GIVE_GARBAGE_STATUS;
    bad_utf8.mode = GIVE_BAD_UTF8;

    natsio_options *o = authenticator_options(s, &failing);
    NT_CHECK(o != NULL);
    CHECK_CONNECT_FAILS(o, NATSIO_ERR_CONFIG);
    NT_CHECK_MSG(strstr(natsio_last_error(), "authenticator callback failed with status 108 (not found)") != NULL,
                 "detail: %s", natsio_last_error());
    o = authenticator_options(s, &garbage);
    NT_CHECK(o != NULL);
    CHECK_CONNECT_FAILS(o, NATSIO_ERR_CONFIG);
    NT_CHECK_MSG(strstr(natsio_last_error(), "status 123456 (unknown status code)") != NULL, "detail: %s",
                 natsio_last_error());
    o = authenticator_options(s, &bad_utf8);
    NT_CHECK(o != NULL);
    CHECK_CONNECT_FAILS(o, NATSIO_ERR_INVALID_UTF8);
    NT_CHECK_MSG(strstr(natsio_last_error(), "user is not valid UTF-8") != NULL, "detail: %s", natsio_last_error());

    NT_CHECK_INT_EQ(natsio_options_set_authenticator(NULL, give_fields, NULL, NULL), NATSIO_ERR_NULL_ARGUMENT);
    natsio_options *args = fast_reconnect_options(nt_server_url(s));
    NT_CHECK(args != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_authenticator(args, NULL, NULL, NULL), NATSIO_ERR_NULL_ARGUMENT);
    NT_CHECK_INT_EQ(natsio_options_set_token(args, "tok"), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_options_set_authenticator(args, give_fields, &failing, NULL), NATSIO_ERR_CONFIG);
    expect_detail_names(__LINE__, "authenticator", "token");
    natsio_options *first = authenticator_options(s, &failing);
    NT_CHECK(first != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_user_password(first, "alice", "s3cret"), NATSIO_ERR_CONFIG);
    expect_detail_names(__LINE__, "authenticator", "user");
    NT_CHECK_INT_EQ(natsio_options_set_nkey_seed(first, read_fixture("auth/nkey-user.nk")), NATSIO_ERR_CONFIG);
    expect_detail_names(__LINE__, "authenticator", "nkey");
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

/* How often the server logged a rejected authentication (nats-server
 * writes one line per rejection before it sends -ERR, so every rejection
 * the client has seen is counted). */
static int server_auth_errors(const nt_server *s) {
    char *log = nt_read_file(nt_server_log_path(s));
    if (!log) return -1;
    int n = 0;
    for (const char *p = strstr(log, "authentication error"); p; p = strstr(p + 1, "authentication error")) n++;
    free(log);
    return n;
}

typedef struct {
    const nt_server *server;
    int at_least;
} auth_error_wait;

static bool server_logged_auth_errors(void *arg) {
    auth_error_wait *w = (auth_error_wait *)arg;
    return server_auth_errors(w->server) >= w->at_least;
}

/* The server's password changes under a connected client. */
static natsio_client *connect_then_change_password(nt_server *s, bool ignore_abort, callback_log *log) {
    natsio_options *o = fast_reconnect_options(nt_server_url(s));
    if (!o || !log_callbacks(o, log)) return NULL;
    natsio_options_set_user_password(o, "alice", "s3cret");
    natsio_options_set_max_reconnect_attempts(o, -1);
    natsio_options_set_ignore_auth_error_abort(o, ignore_abort);
    natsio_client *c = NULL;
    natsio_status st = natsio_client_connect(o, &c);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "connect: %s (%s)", natsio_status_str(st), natsio_last_error());
        return NULL;
    }
    nt_cleanup(client_free_cb, c);
    if (server_auth_errors(s) != 0) {
        nt_fail_at(__FILE__, __LINE__, "the server rejected a login before the restart");
        return NULL;
    }
    if (!rewrite_config(s, "authorization { user: alice, password: \"changed\" }") || nt_server_restart(s) != 0) {
        nt_fail_at(__FILE__, __LINE__, "could not restart the server with a new password");
        return NULL;
    }
    return c;
}

/* Expects record `i` of `log` to be of `kind` (-1: the error callback)
 * with `status` and, if `mention` is not NULL, that text. */
#define CHECK_RECORD(log, i, want_kind, want_status, mention)                                                  \
    do {                                                                                                        \
        char dump_[4096];                                                                                       \
        callback_record r_ = log_record((log), (i));                                                            \
        const char *mention_ = (mention);                                                                       \
        NT_CHECK_MSG(r_.kind == (want_kind) && r_.status == (want_status) &&                                    \
                         (mention_ == NULL || contains_ci(r_.text, mention_)),                                  \
                     "record %d is not %d/%s/%s; callbacks:\n%s", (int)(i), (int)(want_kind),                   \
                     natsio_status_str(want_status), mention_ ? mention_ : "-",                                 \
                     log_dump((log), dump_, sizeof dump_));                                                     \
    } while (0)

/* The server restarts with another password: the lost connection is an
 * I/O error (DISCONNECTED), the first rejected reconnect is retried, the
 * second identical rejection closes the client with that error. */
static void test_repeated_auth_error_on_reconnect_closes(void) {
    nt_server *s = start_server(USER_PASSWORD_CONFIG);
    NT_CHECK(s != NULL);
    callback_log *log = new_callback_log();
    NT_CHECK(log != NULL);
    natsio_client *c = connect_then_change_password(s, false, log);
    NT_CHECK(c != NULL);
    NT_CHECK_MSG(wait_log_events(log, NATSIO_EVENT_CLOSED, 1, 20000), "not closed after 20 s (status %d)",
                 (int)natsio_client_status(c));
    NT_CHECK_INT_EQ(natsio_client_status(c), NATSIO_CONN_CLOSED);
    char dump[4096];
    NT_CHECK_MSG(log_total(log) == 4, "callbacks:\n%s", log_dump(log, dump, sizeof dump));
    CHECK_RECORD(log, 0, NATSIO_EVENT_CONNECTED, NATSIO_OK, NULL);
    CHECK_RECORD(log, 1, NATSIO_EVENT_DISCONNECTED, NATSIO_ERR_IO, NULL);
    /* The reason of the close, to the error callback, then CLOSED. */
    CHECK_RECORD(log, 2, -1, NATSIO_ERR_AUTHORIZATION, "Authorization Violation");
    CHECK_RECORD(log, 3, NATSIO_EVENT_CLOSED, NATSIO_OK, NULL);
    NT_CHECK_INT_EQ(server_auth_errors(s), 2);
    /* Each rejected attempt was an event too (and any refused while the
     * server restarted). */
    NT_CHECK_INT_EQ(log_events(log, NATSIO_EVENT_RECONNECT_FAILED, NATSIO_ERR_AUTHORIZATION), 2);
    NT_CHECK_INT_EQ(natsio_client_publish(c, "x", "1", 1), NATSIO_ERR_CONNECTION_CLOSED);
}

static void test_ignore_auth_error_abort_keeps_trying(void) {
    nt_server *s = start_server(USER_PASSWORD_CONFIG);
    NT_CHECK(s != NULL);
    callback_log *log = new_callback_log();
    NT_CHECK(log != NULL);
    natsio_client *c = connect_then_change_password(s, true, log);
    NT_CHECK(c != NULL);
    /* Twice the rejections that close a client without the option. */
    auth_error_wait w = {s, 4};
    NT_CHECK_MSG(nt_wait_until(server_logged_auth_errors, &w, 20000), "only %d rejected reconnects in 20 s",
                 server_auth_errors(s));
    NT_CHECK_INT_EQ(natsio_client_status(c), NATSIO_CONN_RECONNECTING);
    char dump[4096];
    NT_CHECK_MSG(log_total(log) == 2, "callbacks:\n%s", log_dump(log, dump, sizeof dump));
    CHECK_RECORD(log, 0, NATSIO_EVENT_CONNECTED, NATSIO_OK, NULL);
    CHECK_RECORD(log, 1, NATSIO_EVENT_DISCONNECTED, NATSIO_ERR_IO, NULL);
    /* Once the password is back, it gets in again. */
    NT_CHECK(rewrite_config(s, USER_PASSWORD_CONFIG));
    NT_CHECK_INT_EQ(nt_server_restart(s), 0);
    NT_CHECK_MSG(wait_log_events(log, NATSIO_EVENT_RECONNECTED, 1, 20000), "did not reconnect (status %d)",
                 (int)natsio_client_status(c));
    NT_CHECK_INT_EQ(natsio_client_status(c), NATSIO_CONN_CONNECTED);
    NT_CHECK(message_round_trip(c, "auth.back", "in"));
    /* The rejections were no error and closed nothing: each was a
     * RECONNECT_FAILED event only (at least the 4 counted). */
    NT_CHECK_MSG(log_total(log) == 3, "callbacks:\n%s", log_dump(log, dump, sizeof dump));
    CHECK_RECORD(log, 2, NATSIO_EVENT_RECONNECTED, NATSIO_OK, NULL);
    NT_CHECK_MSG(log_events(log, NATSIO_EVENT_RECONNECT_FAILED, NATSIO_ERR_AUTHORIZATION) >= 4, "callbacks:\n%s",
                 log_dump(log, dump, sizeof dump));
}

/* ---- expiring user JWTs (operator mode minted at run time) ----------------------------------- */

/* An operator, its system account, an account and a user of it, all new
 * keys: the fixtures' account seed is not kept, and a JWT that expires
 * seconds from now must be signed at run time. */
typedef struct {
    char operator_seed[NT_NKEY_SEED_CAP], system_seed[NT_NKEY_SEED_CAP];
    char account_seed[NT_NKEY_SEED_CAP], user_seed[NT_NKEY_SEED_CAP];
    char operator_pub[NT_NKEY_PUBLIC_CAP], system_pub[NT_NKEY_PUBLIC_CAP];
    char account_pub[NT_NKEY_PUBLIC_CAP], user_pub[NT_NKEY_PUBLIC_CAP];
} trust_chain;

static bool make_trust_chain(trust_chain *t) {
    return nt_nkey_create('O', t->operator_seed) && nt_nkey_public(t->operator_seed, t->operator_pub) &&
           nt_nkey_create('A', t->system_seed) && nt_nkey_public(t->system_seed, t->system_pub) &&
           nt_nkey_create('A', t->account_seed) && nt_nkey_public(t->account_seed, t->account_pub) &&
           nt_nkey_create('U', t->user_seed) && nt_nkey_public(t->user_seed, t->user_pub);
}

/* A JWT of `claims` (a format with the jti, the issue time and then its
 * own arguments) signed by `issuer_seed`; malloc'd. */
static char *mint(const char *issuer_seed, const char *claims, ...) {
    static atomic_int serial;
    char body[2048];
    char jti[32];
    snprintf(jti, sizeof jti, "NATSIOTEST%d", atomic_fetch_add(&serial, 1));
    int n = snprintf(body, sizeof body, "{\"jti\":\"%s\",\"iat\":%lld,", jti, (long long)time(NULL));
    va_list ap;
    va_start(ap, claims);
    vsnprintf(body + n, sizeof body - (size_t)n, claims, ap);
    va_end(ap);
    return nt_jwt_encode(body, issuer_seed);
}

static const char *ACCOUNT_CLAIMS =
    "\"iss\":\"%s\",\"name\":\"%s\",\"sub\":\"%s\",\"nats\":{\"limits\":{\"subs\":-1,\"data\":-1,"
    "\"payload\":-1,\"imports\":-1,\"exports\":-1,\"wildcards\":true,\"conn\":-1,\"leaf\":-1},"
    "\"default_permissions\":{\"pub\":{},\"sub\":{}},\"authorization\":{},\"type\":\"account\",\"version\":2}}";

/* nats-server config text for the chain (resolver: MEMORY); malloc'd. */
static char *operator_config(const trust_chain *t) {
    char *op = mint(t->operator_seed,
                    "\"iss\":\"%s\",\"name\":\"natsio-expiry\",\"sub\":\"%s\",\"nats\":{\"system_account\":\"%s\","
                    "\"type\":\"operator\",\"version\":2}}",
                    t->operator_pub, t->operator_pub, t->system_pub);
    char *sys = mint(t->operator_seed, ACCOUNT_CLAIMS, t->operator_pub, "SYS", t->system_pub);
    char *acc = mint(t->operator_seed, ACCOUNT_CLAIMS, t->operator_pub, "A", t->account_pub);
    char *config = NULL;
    if (op && sys && acc) {
        size_t cap = strlen(op) + strlen(sys) + strlen(acc) + 512;
        config = (char *)malloc(cap);
        if (config)
            snprintf(config, cap,
                     "operator: %s\nsystem_account: %s\nresolver: MEMORY\nresolver_preload: {\n  %s: %s\n  %s: %s\n}\n",
                     op, t->system_pub, t->system_pub, sys, t->account_pub, acc);
    }
    free(op);
    free(sys);
    free(acc);
    return config;
}

/* A user JWT of the chain's user; `expires` in Unix seconds, or 0 for
 * none. */
static char *user_jwt(const trust_chain *t, int64_t expires) {
    char exp[48] = "";
    if (expires > 0) snprintf(exp, sizeof exp, "\"exp\":%lld,", (long long)expires);
    return mint(t->account_seed,
                "%s\"iss\":\"%s\",\"name\":\"expiring\",\"sub\":\"%s\",\"nats\":{\"pub\":{},\"sub\":{},"
                "\"subs\":-1,\"data\":-1,\"payload\":-1,\"type\":\"user\",\"version\":2}}",
                exp, t->account_pub, t->user_pub);
}

/* Callback authenticator of the chain's user: the first JWT expires
 * EXPIRY_S seconds after it is made; later ones do not expire when
 * `renew`, and have expired already when not. (Not the first one again:
 * nats-server accepts a JWT until the end of its expiry second, rejecting
 * only exp < now, and expires it at once, so offering the same one would
 * add a varying number of quick reconnects before the rejections.) */
enum { EXPIRY_S = 5 };

typedef struct {
    trust_chain chain;
    bool renew;
    atomic_int jwt_calls;
    char *jwt; /* what the last call returned */
} renewing_authenticator;

static const char *renewing_jwt(void *user_data) {
    renewing_authenticator *a = (renewing_authenticator *)user_data;
    int call = atomic_fetch_add(&a->jwt_calls, 1);
    int64_t now = (int64_t)time(NULL);
    char *next = user_jwt(&a->chain, call == 0 ? now + EXPIRY_S : a->renew ? 0 : now - 1);
    if (!next) return NULL;
    free(a->jwt);
    a->jwt = next;
    return a->jwt;
}

static natsio_status renewing_sign(void *user_data, const uint8_t *nonce, size_t nonce_len, uint8_t *signature_out) {
    renewing_authenticator *a = (renewing_authenticator *)user_data;
    return nt_nkey_sign(a->chain.user_seed, nonce, nonce_len, signature_out) ? NATSIO_OK
                                                                              : NATSIO_ERR_INVALID_ARGUMENT;
}

static void renewing_free(void *user_data) {
    renewing_authenticator *a = (renewing_authenticator *)user_data;
    free(a->jwt);
    free(a);
}

/* A server of a new chain and a client of its user, reporting to `log`;
 * the authenticator is freed when the case ends, after the client. */
static natsio_client *connect_expiring_user(bool renew, callback_log *log, renewing_authenticator **auth_out,
                                            nt_server **server_out) {
    renewing_authenticator *a = (renewing_authenticator *)calloc(1, sizeof *a);
    if (!a) return NULL;
    nt_cleanup(renewing_free, a);
    a->renew = renew;
    if (!make_trust_chain(&a->chain)) {
        nt_fail_at(__FILE__, __LINE__, "cannot mint keys");
        return NULL;
    }
    char *config = operator_config(&a->chain);
    if (!config) {
        nt_fail_at(__FILE__, __LINE__, "cannot mint the operator config");
        return NULL;
    }
    nt_server *s = start_server(config);
    free(config);
    if (!s) return NULL;
    natsio_options *o = fast_reconnect_options(nt_server_url(s));
    if (!o || !log_callbacks(o, log)) return NULL;
    natsio_status st = natsio_options_set_auth_callbacks(o, renewing_jwt, renewing_sign, a, NULL);
    natsio_client *c = NULL;
    if (st == NATSIO_OK) st = natsio_client_connect(o, &c);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "connect: %s (%s)", natsio_status_str(st), natsio_last_error());
        return NULL;
    }
    nt_cleanup(client_free_cb, c);
    *auth_out = a;
    *server_out = s;
    return c;
}

/* The server ends the connection when the JWT expires ("User
 * Authentication Expired"): DISCONNECTED with NATSIO_ERR_AUTH_EXPIRED, then
 * a reconnect that asks for the JWT again and gets in with the renewed one.
 * nats.go does the same: an expiry is an auth error that is retried. */
static void test_user_jwt_expiry_reconnects_with_a_renewed_jwt(void) {
    callback_log *log = new_callback_log();
    NT_CHECK(log != NULL);
    renewing_authenticator *a = NULL;
    nt_server *s = NULL;
    natsio_client *c = connect_expiring_user(true, log, &a, &s);
    NT_CHECK(c != NULL);
    NT_CHECK(message_round_trip(c, "auth.before", "ok"));
    NT_CHECK_INT_EQ(atomic_load(&a->jwt_calls), 1);

    NT_CHECK_MSG(wait_log_events(log, NATSIO_EVENT_RECONNECTED, 1, 30000), "no reconnect within 30 s (status %d)",
                 (int)natsio_client_status(c));
    char dump[4096];
    NT_CHECK_MSG(log_total(log) == 3, "callbacks:\n%s", log_dump(log, dump, sizeof dump));
    CHECK_RECORD(log, 0, NATSIO_EVENT_CONNECTED, NATSIO_OK, NULL);
    CHECK_RECORD(log, 1, NATSIO_EVENT_DISCONNECTED, NATSIO_ERR_AUTH_EXPIRED, "User Authentication Expired");
    CHECK_RECORD(log, 2, NATSIO_EVENT_RECONNECTED, NATSIO_OK, NULL);
    /* One reconnect attempt, with a fresh JWT, and the connection works. */
    NT_CHECK_INT_EQ(atomic_load(&a->jwt_calls), 2);
    NT_CHECK_INT_EQ(natsio_client_status(c), NATSIO_CONN_CONNECTED);
    NT_CHECK(message_round_trip(c, "auth.after", "ok"));
    NT_CHECK_INT_EQ(server_auth_errors(s), 0);
}

/* An expired JWT offered again is rejected at CONNECT ("Authorization
 * Violation": the server says "expired" only to a connected client); the
 * client retries once, and the second identical rejection closes it, the
 * reason going to the error callback. nats.go does the same: ErrAuthExpired
 * is remembered, ErrAuthorization differs from it and is retried, and
 * ErrAuthorization twice in a row closes. */
static void test_user_jwt_expiry_closes_when_not_renewed(void) {
    callback_log *log = new_callback_log();
    NT_CHECK(log != NULL);
    renewing_authenticator *a = NULL;
    nt_server *s = NULL;
    natsio_client *c = connect_expiring_user(false, log, &a, &s);
    NT_CHECK(c != NULL);
    NT_CHECK(message_round_trip(c, "auth.before", "ok"));

    NT_CHECK_MSG(wait_log_events(log, NATSIO_EVENT_CLOSED, 1, 30000), "not closed within 30 s (status %d)",
                 (int)natsio_client_status(c));
    char dump[4096];
    NT_CHECK_MSG(log_total(log) == 4, "callbacks:\n%s", log_dump(log, dump, sizeof dump));
    CHECK_RECORD(log, 0, NATSIO_EVENT_CONNECTED, NATSIO_OK, NULL);
    CHECK_RECORD(log, 1, NATSIO_EVENT_DISCONNECTED, NATSIO_ERR_AUTH_EXPIRED, "User Authentication Expired");
    CHECK_RECORD(log, 2, -1, NATSIO_ERR_AUTHORIZATION, "Authorization Violation");
    CHECK_RECORD(log, 3, NATSIO_EVENT_CLOSED, NATSIO_OK, NULL);
    /* The first connect and two rejected reconnects asked for a JWT. */
    NT_CHECK_INT_EQ(atomic_load(&a->jwt_calls), 3);
    NT_CHECK_INT_EQ(server_auth_errors(s), 2);
    NT_CHECK_INT_EQ(log_events(log, NATSIO_EVENT_RECONNECT_FAILED, NATSIO_ERR_AUTHORIZATION), 2);
    NT_CHECK_INT_EQ(natsio_client_status(c), NATSIO_CONN_CLOSED);
    NT_CHECK_INT_EQ(natsio_client_publish(c, "x", "1", 1), NATSIO_ERR_CONNECTION_CLOSED);
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
        NT_CASE(test_callback_authenticator_failing_at_a_reconnect),
        NT_CASE(test_two_auth_kinds_are_a_config_error),
        NT_CASE(test_repeated_auth_error_on_reconnect_closes),
        NT_CASE(test_ignore_auth_error_abort_keeps_trying),
        NT_CASE(test_user_jwt_expiry_reconnects_with_a_renewed_jwt),
        NT_CASE(test_user_jwt_expiry_closes_when_not_renewed),
        NT_CASE(test_user_password_callback_at_every_connect),
        NT_CASE(test_token_callback_at_every_connect),
        NT_CASE(test_nkey_sign_matches_an_independent_signer),
        NT_CASE(test_authenticator_signs_every_nonce),
        NT_CASE(test_authenticator_wrong_signature_is_refused),
        NT_CASE(test_authenticator_user_password),
        NT_CASE(test_authenticator_fields_cannot_break_connect),
        NT_CASE(test_authenticator_failures),
    };
    return nt_main(argc, argv, cases, NT_COUNT(cases));
}
