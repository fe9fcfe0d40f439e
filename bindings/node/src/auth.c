/*
 * Authentication callbacks (natsio_options_set_auth_callbacks, the
 * user/password and token callbacks, and the general authenticator of
 * natsio_options_set_authenticator): the user JWT and the nonce signature,
 * or the user and password, or the token, or all the CONNECT's fields,
 * come from JavaScript.
 *
 *   library thread, during a (re)connect (jwt_cb / sign_cb)
 *       -> a request is handed to the JS thread through this connection's
 *          own thread-safe function (nonblocking, unbounded queue)
 *       -> waits for the answer, at most the bound given by index.js (the
 *          connect timeout): past it, or when the environment is gone, the
 *          connection attempt fails
 *   JS thread
 *       -> calls index.js's handler (kind, nonce, request); the handler
 *          calls the user's function, awaits it if it returns a promise,
 *          and answers with authReply(request, value) (undefined: failed).
 *
 * A service's stats callback (set_stats_callback) asks JS the same way,
 * for an endpoint's STATS data.
 *
 * The event loop is never blocked: only the library thread waits. A
 * request is shared by the waiting thread and its JS external (reference
 * counted under its mutex), so either may go first.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { AUTH_JWT = 0, AUTH_SIGN = 1, ASK_STATS = 2, AUTH_USER_PASSWORD = 3, AUTH_TOKEN = 4, AUTH_FIELDS = 5 };
/* The reconnect delay (natsio_options_set_reconnect_delay_callback) is
 * asked the same way: the turn goes as the request's 8 "nonce" bytes, the
 * answer (a double, milliseconds) comes back in its first 8 "sig" bytes. */
enum { ASK_DELAY = 6 };

/* The fields of natsio_auth_fields, in the order of index.js's answer. */
enum { N_FIELDS = 6 };

typedef struct auth_cb {
    pthread_mutex_t mu;
    napi_threadsafe_function tsfn; /* NULL once finalized (environment gone) */
    int refs;                      /* the library's registration, the tsfn */
    int64_t timeout_ms;
    pthread_t js_thread; /* where no call may wait for JS */
    char *jwt; /* the last JWT returned to the library (valid until the next call) */
    char *fields[N_FIELDS]; /* the last fields given (AUTH_FIELDS), likewise */
} auth_cb;

typedef struct auth_req {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int refs; /* the waiting library thread, the JS external */
    int kind;
    uint8_t *nonce;
    size_t nonce_len;
    bool done;
    bool answered; /* JS thread only: authReply ran */
    int32_t status;
    char *jwt;
    char *fields[N_FIELDS]; /* AUTH_FIELDS: user, pass, token, jwt, nkey, sig */
    uint8_t sig[64];
} auth_req;

static void free_fields(char **fields) {
    for (int i = 0; i < N_FIELDS; i++) {
        free(fields[i]);
        fields[i] = NULL;
    }
}

static void auth_cb_unref(auth_cb *a) {
    pthread_mutex_lock(&a->mu);
    int left = --a->refs;
    pthread_mutex_unlock(&a->mu);
    if (left) return;
    free(a->jwt);
    free_fields(a->fields);
    pthread_mutex_destroy(&a->mu);
    free(a);
}

static void req_unref(auth_req *r) {
    pthread_mutex_lock(&r->mu);
    int left = --r->refs;
    pthread_mutex_unlock(&r->mu);
    if (left) return;
    free(r->nonce);
    free(r->jwt);
    free_fields(r->fields);
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
    free(r);
}

/* Completes a request once (any thread); the first answer wins. */
static void req_complete(auth_req *r, int32_t status, char *jwt, const uint8_t *sig) {
    pthread_mutex_lock(&r->mu);
    if (!r->done) {
        r->done = true;
        r->status = status;
        r->jwt = jwt;
        jwt = NULL;
        if (sig) memcpy(r->sig, sig, sizeof r->sig);
        pthread_cond_broadcast(&r->cv);
    }
    pthread_mutex_unlock(&r->mu);
    free(jwt);
}

/* Library thread: asks JS and waits for the answer (bounded). The request
 * comes back done, its status saying how; the caller unrefs it. */
static auth_req *ask_js(auth_cb *a, int kind, const uint8_t *nonce, size_t nonce_len) {
    auth_req *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    r->refs = 2;
    r->kind = kind;
    if (nonce_len) {
        r->nonce = malloc(nonce_len);
        if (!r->nonce) {
            r->refs = 1;
            req_unref(r);
            return NULL;
        }
        memcpy(r->nonce, nonce, nonce_len);
        r->nonce_len = nonce_len;
    }
    pthread_mutex_lock(&a->mu);
    bool queued = a->tsfn && napi_call_threadsafe_function(a->tsfn, r, napi_tsfn_nonblocking) == napi_ok;
    pthread_mutex_unlock(&a->mu);
    if (!queued) {
        r->refs = 1; /* JS will never see it */
        req_complete(r, NATSIO_ERR_CANCELLED, NULL, NULL);
        return r;
    }
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    int64_t ms = a->timeout_ms > 0 ? a->timeout_ms : 5000;
    deadline.tv_sec += (time_t)(ms / 1000);
    deadline.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&r->mu);
    while (!r->done) {
        if (pthread_cond_timedwait(&r->cv, &r->mu, &deadline) == ETIMEDOUT) break;
    }
    if (!r->done) {
        r->done = true;
        r->status = NATSIO_ERR_TIMEOUT;
    }
    pthread_mutex_unlock(&r->mu);
    return r;
}

/* natsio_jwt_cb */
static const char *on_jwt(void *user_data) {
    auth_cb *a = user_data;
    auth_req *r = ask_js(a, AUTH_JWT, NULL, 0);
    if (!r) return NULL;
    char *jwt = NULL;
    if (r->status == NATSIO_OK) {
        jwt = r->jwt;
        r->jwt = NULL;
    }
    req_unref(r);
    if (!jwt) return NULL;
    /* Kept until the next call (or the release), as natsio_jwt_cb asks. */
    pthread_mutex_lock(&a->mu);
    free(a->jwt);
    a->jwt = jwt;
    pthread_mutex_unlock(&a->mu);
    return jwt;
}

/* natsio_user_password_cb: the answer is "user\0password\0" in one buffer,
 * kept (as a JWT is) until the next call or the release. */
static natsio_status on_user_password(void *user_data, const char **user_out, const char **password_out) {
    auth_cb *a = user_data;
    auth_req *r = ask_js(a, AUTH_USER_PASSWORD, NULL, 0);
    if (!r) return NATSIO_ERR_INTERNAL;
    int32_t st = r->status;
    char *both = NULL;
    if (st == NATSIO_OK) {
        both = r->jwt;
        r->jwt = NULL;
    }
    req_unref(r);
    if (!both) return st == NATSIO_OK ? NATSIO_ERR_AUTHORIZATION : st;
    pthread_mutex_lock(&a->mu);
    free(a->jwt);
    a->jwt = both;
    pthread_mutex_unlock(&a->mu);
    *user_out = both;
    *password_out = both + strlen(both) + 1;
    return NATSIO_OK;
}

/* natsio_auth_token_cb: as on_jwt, for a token. */
static const char *on_token(void *user_data) {
    auth_cb *a = user_data;
    auth_req *r = ask_js(a, AUTH_TOKEN, NULL, 0);
    if (!r) return NULL;
    char *token = NULL;
    if (r->status == NATSIO_OK) {
        token = r->jwt;
        r->jwt = NULL;
    }
    req_unref(r);
    if (!token) return NULL;
    pthread_mutex_lock(&a->mu);
    free(a->jwt);
    a->jwt = token;
    pthread_mutex_unlock(&a->mu);
    return token;
}

/* natsio_sign_cb */
static natsio_status on_sign(void *user_data, const uint8_t *nonce, size_t nonce_len, uint8_t *signature_out) {
    auth_cb *a = user_data;
    auth_req *r = ask_js(a, AUTH_SIGN, nonce, nonce_len);
    if (!r) return NATSIO_ERR_INTERNAL;
    int32_t st = r->status;
    if (st == NATSIO_OK) memcpy(signature_out, r->sig, sizeof r->sig);
    req_unref(r);
    return st;
}

/* natsio_authenticator_cb: the fields come from JS (an array of six
 * strings or nulls), kept until the next call or the release. */
static natsio_status on_fields(void *user_data, const uint8_t *nonce, size_t nonce_len, natsio_auth_fields *out) {
    auth_cb *a = user_data;
    auth_req *r = ask_js(a, AUTH_FIELDS, nonce, nonce_len);
    if (!r) return NATSIO_ERR_INTERNAL;
    int32_t st = r->status;
    if (st == NATSIO_OK) {
        pthread_mutex_lock(&a->mu);
        free_fields(a->fields);
        memcpy(a->fields, r->fields, sizeof a->fields);
        memset(r->fields, 0, sizeof r->fields);
        out->user = a->fields[0];
        out->pass = a->fields[1];
        out->token = a->fields[2];
        out->jwt = a->fields[3];
        out->nkey = a->fields[4];
        out->sig = a->fields[5];
        pthread_mutex_unlock(&a->mu);
    }
    req_unref(r);
    return st;
}

/* natsio_release_cb: no client or options object uses the callbacks any
 * more (any thread). */
static void on_release(void *user_data) {
    auth_cb *a = user_data;
    pthread_mutex_lock(&a->mu);
    if (a->tsfn) napi_release_threadsafe_function(a->tsfn, napi_tsfn_release);
    pthread_mutex_unlock(&a->mu);
    auth_cb_unref(a);
}

/* JS thread: the tsfn is gone (released, or the environment torn down). */
static void tsfn_finalize(napi_env env, void *data, void *hint) {
    (void)env;
    (void)hint;
    auth_cb *a = data;
    pthread_mutex_lock(&a->mu);
    a->tsfn = NULL;
    pthread_mutex_unlock(&a->mu);
    auth_cb_unref(a);
}

static void req_external_finalize(napi_env env, void *data, void *hint) {
    (void)env;
    (void)hint;
    auth_req *r = data;
    if (!r->answered) req_complete(r, NATSIO_ERR_AUTHORIZATION, NULL, NULL);
    req_unref(r);
}

/* JS thread: hands a request to index.js's handler(kind, nonce|null, request). */
static void call_js(napi_env env, napi_value js_cb, void *context, void *data) {
    (void)context;
    auth_req *r = data;
    if (env == NULL || js_cb == NULL) { /* the environment is going away */
        req_complete(r, NATSIO_ERR_CANCELLED, NULL, NULL);
        req_unref(r);
        return;
    }
    napi_value args[3], result;
    napi_create_int32(env, r->kind, &args[0]);
    if (r->kind == ASK_DELAY) {
        int64_t attempts = 0;
        memcpy(&attempts, r->nonce, sizeof attempts);
        napi_create_int64(env, attempts, &args[1]);
    } else if (r->kind == AUTH_SIGN) {
        void *copy;
        napi_create_buffer_copy(env, r->nonce_len, r->nonce, &copy, &args[1]);
    } else if (r->kind == ASK_STATS || (r->kind == AUTH_FIELDS && r->nonce_len > 0)) {
        napi_create_string_utf8(env, (const char *)r->nonce, r->nonce_len, &args[1]);
    } else if (r->kind == AUTH_FIELDS) {
        napi_get_undefined(env, &args[1]); /* no nonce: undefined, as nats.js gives it */
    } else {
        napi_get_null(env, &args[1]);
    }
    if (napi_create_external(env, r, req_external_finalize, NULL, &args[2]) != napi_ok) {
        req_complete(r, NATSIO_ERR_INTERNAL, NULL, NULL);
        req_unref(r);
        return;
    }
    if (napi_call_function(env, undefined_value(env), js_cb, 3, args, &result) == napi_pending_exception) {
        /* index.js's handler catches what the user's function throws: this
         * is not reached in practice. */
        napi_value exc;
        napi_get_and_clear_last_exception(env, &exc);
        req_complete(r, NATSIO_ERR_AUTHORIZATION, NULL, NULL);
    }
}

/* authReply(request, value): a JWT string, a 64-byte signature, or
 * undefined (the user's function failed). A late answer (after the
 * library stopped waiting) is ignored. */
EXPORT(js_auth_reply) {
    ARGS(2);
    void *p = NULL;
    if (napi_get_value_external(env, argv[0], &p) != napi_ok || !p) {
        napi_throw_type_error(env, NULL, "not a natsio authentication request");
        return NULL;
    }
    auth_req *r = p;
    if (r->answered) return NULL;
    r->answered = true;
    napi_valuetype t = napi_undefined;
    napi_typeof(env, argv[1], &t);
    if (r->kind == ASK_DELAY) {
        /* milliseconds: a number that is not NaN (index.js checked it) */
        double v = 0;
        uint8_t answer[64] = {0};
        if (t == napi_number && napi_get_value_double(env, argv[1], &v) == napi_ok && v == v) {
            memcpy(answer, &v, sizeof v);
            req_complete(r, NATSIO_OK, NULL, answer);
        } else {
            req_complete(r, NATSIO_ERR_INVALID_ARGUMENT, NULL, NULL);
        }
    } else if (r->kind == ASK_STATS) {
        /* JSON text, or no data (undefined: none, or the handler failed) */
        char *json = NULL;
        if (t == napi_string && get_opt_string(env, argv[1], &json) && json)
            req_complete(r, NATSIO_OK, json, NULL);
        else
            req_complete(r, NATSIO_ERR_NOT_FOUND, NULL, NULL);
    } else if (r->kind == AUTH_USER_PASSWORD) {
        /* [user, password] */
        bool is_array = false;
        napi_is_array(env, argv[1], &is_array);
        napi_value uv, pv;
        char *user = NULL, *password = NULL;
        if (is_array && napi_get_element(env, argv[1], 0, &uv) == napi_ok &&
            napi_get_element(env, argv[1], 1, &pv) == napi_ok && get_opt_string(env, uv, &user) && user && *user &&
            get_opt_string(env, pv, &password)) {
            size_t ul = strlen(user), pl = password ? strlen(password) : 0;
            char *both = malloc(ul + 1 + pl + 1);
            if (both) {
                memcpy(both, user, ul + 1);
                if (pl) memcpy(both + ul + 1, password, pl);
                both[ul + 1 + pl] = 0;
            }
            req_complete(r, both ? NATSIO_OK : NATSIO_ERR_INTERNAL, both, NULL);
        } else {
            req_complete(r, NATSIO_ERR_AUTHORIZATION, NULL, NULL);
        }
        free(user);
        free(password);
    } else if (r->kind == AUTH_FIELDS) {
        /* [user, pass, token, jwt, nkey, sig], each a string or null
         * (index.js checked them) */
        bool is_array = false;
        uint32_t n = 0;
        napi_is_array(env, argv[1], &is_array);
        if (is_array) napi_get_array_length(env, argv[1], &n);
        bool ok = is_array && n == N_FIELDS;
        for (uint32_t i = 0; ok && i < N_FIELDS; i++) {
            napi_value v;
            ok = napi_get_element(env, argv[1], i, &v) == napi_ok && get_opt_string(env, v, &r->fields[i]);
        }
        /* Only this thread writes the fields before req_complete. */
        if (!ok) free_fields(r->fields);
        req_complete(r, ok ? NATSIO_OK : NATSIO_ERR_INVALID_ARGUMENT, NULL, NULL);
    } else if (r->kind == AUTH_JWT || r->kind == AUTH_TOKEN) {
        char *jwt = NULL;
        if (t == napi_string && get_opt_string(env, argv[1], &jwt) && jwt && *jwt) {
            req_complete(r, NATSIO_OK, jwt, NULL);
        } else {
            free(jwt);
            req_complete(r, NATSIO_ERR_AUTHORIZATION, NULL, NULL);
        }
    } else {
        const void *data = NULL;
        size_t len = 0;
        bool is_ta = false;
        if (t == napi_object) napi_is_typedarray(env, argv[1], &is_ta);
        if (is_ta && get_bytes(env, argv[1], &data, &len) && len == 64)
            req_complete(r, NATSIO_OK, NULL, data);
        else
            req_complete(r, NATSIO_ERR_INVALID_ARGUMENT, NULL, NULL);
    }
    if (exception_pending(env)) {
        napi_value exc;
        napi_get_and_clear_last_exception(env, &exc);
    }
    return NULL;
}

/* A registration whose callbacks ask `handler`; NULL with a pending
 * exception. Its two references are the library's (on_release) and the
 * tsfn's. */
static auth_cb *ask_cb_new(napi_env env, napi_value handler, int64_t timeout_ms, const char *name) {
    auth_cb *a = calloc(1, sizeof *a);
    if (!a) {
        throw_status(env, NATSIO_ERR_INTERNAL, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&a->mu, NULL);
    a->refs = 2;
    a->timeout_ms = timeout_ms;
    a->js_thread = pthread_self();
    napi_value js_name;
    napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &js_name);
    if (napi_create_threadsafe_function(env, handler, NULL, js_name, 0, 1, a, tsfn_finalize, NULL, call_js, &a->tsfn) !=
        napi_ok) {
        pthread_mutex_destroy(&a->mu);
        free(a);
        if (!exception_pending(env)) napi_throw_error(env, NULL, "natsio: could not create the thread-safe function");
        return NULL;
    }
    /* Waiting for an answer is what keeps the loop alive (a connect in
     * flight, an open connection), not this function. */
    napi_unref_threadsafe_function(env, a->tsfn);
    return a;
}

/* The registration failed (release is not called then): give the tsfn
 * back ourselves (its finalizer drops one reference), then the
 * registration's, and throw. */
static bool ask_cb_failed(napi_env env, auth_cb *a, int32_t st) {
    napi_value err = make_last_error(env, st);
    napi_release_threadsafe_function(a->tsfn, napi_tsfn_release);
    auth_cb_unref(a);
    napi_throw(env, err);
    return false;
}

bool set_auth_callbacks(napi_env env, natsio_options *o, napi_value handler, int64_t timeout_ms, int32_t kind) {
    auth_cb *a = ask_cb_new(env, handler, timeout_ms, "natsio.auth");
    if (!a) return false;
    int32_t st = kind == AUTH_USER_PASSWORD ? natsio_options_set_user_password_callback(o, on_user_password, a, on_release)
                 : kind == AUTH_TOKEN       ? natsio_options_set_token_callback(o, on_token, a, on_release)
                 : kind == AUTH_FIELDS      ? natsio_options_set_authenticator(o, on_fields, a, on_release)
                                            : natsio_options_set_auth_callbacks(o, on_jwt, on_sign, a, on_release);
    return st == NATSIO_OK || ask_cb_failed(env, a, st);
}

/* natsio_reconnect_delay_cb: the wait JS gives for turn `attempts`. No
 * answer in time (the event loop busy past the bound, or gone): the
 * library's own delay; a failed handler (it threw or gave no number):
 * a failure, which fails that attempt. */
static int64_t on_delay(void *user_data, int64_t attempts) {
    auth_cb *a = user_data;
    auth_req *r = ask_js(a, ASK_DELAY, (const uint8_t *)&attempts, sizeof attempts);
    if (!r) return NATSIO_RECONNECT_DELAY_DEFAULT;
    int64_t ms = -2;
    if (r->status == NATSIO_OK) {
        double v = 0;
        memcpy(&v, r->sig, sizeof v);
        ms = v <= 0 ? 0 : v >= 9.0e18 ? INT64_MAX : (int64_t)v + ((double)(int64_t)v < v);
    } else if (r->status == NATSIO_ERR_TIMEOUT || r->status == NATSIO_ERR_CANCELLED) {
        ms = NATSIO_RECONNECT_DELAY_DEFAULT;
    }
    req_unref(r);
    return ms;
}

/* optionsSetReconnectDelay(options, handler, timeoutMs): handler(kind,
 * attempts, request) answers with authReply(request, ms | undefined). */
EXPORT(js_options_set_reconnect_delay) {
    ARGS(3);
    natsio_options *o = get_options(env, argv[0]);
    if (!o) return NULL;
    auth_cb *a = ask_cb_new(env, argv[1], get_i64(env, argv[2], 0), "natsio.reconnectDelay");
    if (!a) return NULL;
    int32_t st = natsio_options_set_reconnect_delay_callback(o, on_delay, a, on_release);
    if (st != NATSIO_OK) ask_cb_failed(env, a, st);
    return NULL;
}

/* natsio_service_stats_cb: the endpoint's data from JS (malloc'ed JSON),
 * or NULL when JS gave none in time. On the JS thread (the service's
 * stats() in index.js reads the handler itself) nothing is asked. */
static char *on_stats(void *user_data, const char *endpoint_name, const char *endpoint_subject) {
    auth_cb *a = user_data;
    if (pthread_equal(pthread_self(), a->js_thread)) return NULL;
    size_t nl = strlen(endpoint_name), sl = strlen(endpoint_subject);
    char *key = malloc(nl + 1 + sl + 1);
    if (!key) return NULL;
    memcpy(key, endpoint_name, nl);
    key[nl] = ' ';
    memcpy(key + nl + 1, endpoint_subject, sl + 1);
    auth_req *r = ask_js(a, ASK_STATS, (const uint8_t *)key, nl + 1 + sl);
    free(key);
    if (!r) return NULL;
    char *json = NULL;
    if (r->status == NATSIO_OK) {
        json = r->jwt; /* malloc'ed: the library frees it with free() */
        r->jwt = NULL;
    }
    req_unref(r);
    return json;
}

bool set_stats_callback(napi_env env, natsio_service *s, napi_value handler, int64_t timeout_ms) {
    auth_cb *a = ask_cb_new(env, handler, timeout_ms, "natsio.serviceStats");
    if (!a) return false;
    int32_t st = natsio_service_set_stats_callback(s, on_stats, a, on_release);
    return st == NATSIO_OK || ask_cb_failed(env, a, st);
}

/* nkeySign(seed, data) -> {publicKey, sig}: natsio_nkey_sign, for
 * authenticators that hold their seed (compat's nkeyAuthenticator given a
 * function); throws the library's error for a bad seed. */
EXPORT(js_nkey_sign) {
    ARGS(2);
    char *seed = NULL;
    const void *data = NULL;
    size_t len = 0;
    if (!get_req_string(env, argv[0], "seed", &seed) || !get_bytes(env, argv[1], &data, &len)) {
        free(seed);
        return NULL;
    }
    char *public_key = NULL, *sig = NULL;
    int32_t st = natsio_nkey_sign(seed, data, len, &public_key, &sig);
    free(seed);
    if (throw_if_failed(env, st)) return NULL;
    napi_value out;
    napi_create_object(env, &out);
    napi_set_named_property(env, out, "publicKey", str_or_null(env, public_key));
    napi_set_named_property(env, out, "sig", str_or_null(env, sig));
    natsio_string_free(public_key);
    natsio_string_free(sig);
    return out;
}
