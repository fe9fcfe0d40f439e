/*
 * The conformance table (tests/conformance/cases.txt) through the C ABI,
 * against a real nats-server: the error tree of natsio_status_is,
 * natsio_status_parent and natsio_status_name; the error data beside
 * natsio_last_error (API code and err_code, key revision); the default
 * URL; delete_msg's erase on the wire; a per-subscription pending limit of
 * 0; the flush bound with the server stopped. The C++, Go and Node suites
 * run the same table; a line with no C check fails here
 * (test_every_line_has_a_c_check).
 */
#define _POSIX_C_SOURCE 200809L

#include "harness.h"
#include "util.h"

#include <natsio.h>

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the table ------------------------------------------------------------ */

#define MAX_LINES 128
#define MAX_FIELDS 8

typedef struct {
    int line_no;
    int nfields;
    char fields[MAX_FIELDS][64];
} table_line;

static table_line g_lines[MAX_LINES];
static int g_nlines;

/* Reads cases.txt once into g_lines (fields split on spaces, comments and
 * blank lines dropped); false and a recorded failure if it cannot. */
static bool load_table(void) {
    if (g_nlines > 0) return true;
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/conformance/cases.txt", nt_repo_root());
    char *text = nt_read_file(path);
    if (text == NULL) {
        nt_fail_at(__FILE__, __LINE__, "cannot read %s", path);
        return false;
    }
    int line_no = 0;
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        line_no++;
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        table_line l = {.line_no = line_no};
        for (char *fsave = NULL, *f = strtok_r(line, " \t\r", &fsave); f; f = strtok_r(NULL, " \t\r", &fsave)) {
            if (l.nfields == MAX_FIELDS || strlen(f) >= sizeof l.fields[0] || g_nlines == MAX_LINES) {
                nt_fail_at(__FILE__, __LINE__, "cases.txt line %d does not fit this reader", line_no);
                free(text);
                return false;
            }
            strcpy(l.fields[l.nfields++], f);
        }
        if (l.nfields > 0) g_lines[g_nlines++] = l;
    }
    free(text);
    if (g_nlines <= 60) nt_fail_at(__FILE__, __LINE__, "cases.txt has only %d cases", g_nlines);
    return g_nlines > 60;
}

/* The line `kind name`, or NULL (and a failure) if the table lacks it. */
static const table_line *table_case(const char *kind, const char *name) {
    if (!load_table()) return NULL;
    for (int i = 0; i < g_nlines; i++) {
        if (g_lines[i].nfields >= 2 && strcmp(g_lines[i].fields[0], kind) == 0 &&
            strcmp(g_lines[i].fields[1], name) == 0)
            return &g_lines[i];
    }
    nt_fail_at(__FILE__, __LINE__, "cases.txt has no line \"%s %s\"", kind, name);
    return NULL;
}

/* ---- error lines ---------------------------------------------------------- */

static bool listed_ancestor(const table_line *l, int status) {
    for (int f = 3; f < l->nfields; f++)
        if (atoi(l->fields[f]) == status) return true;
    return false;
}

/* Every error line: natsio_status_name is its NAME; natsio_status_is holds
 * for the status itself and exactly the ancestors listed, against every
 * status of the table; the parents natsio_status_parent gives are listed
 * ancestors whose own ancestors, with them, are all the listed ones. */
static void test_error_tree(void) {
    if (!load_table()) return;
    int statuses[MAX_LINES], n = 0;
    for (int i = 0; i < g_nlines; i++)
        if (strcmp(g_lines[i].fields[0], "error") == 0) statuses[n++] = atoi(g_lines[i].fields[1]);
    NT_CHECK_INT_EQ(n, 69);
    for (int i = 0; i < g_nlines; i++) {
        const table_line *l = &g_lines[i];
        if (strcmp(l->fields[0], "error") != 0) continue;
        int status = atoi(l->fields[1]);
        NT_CHECK_MSG(l->nfields >= 3, "line %d: error without a name", l->line_no);
        NT_CHECK_STR_EQ(natsio_status_name(status), l->fields[2]);
        for (int j = 0; j < n; j++) {
            bool want = statuses[j] == status || listed_ancestor(l, statuses[j]);
            NT_CHECK_MSG(natsio_status_is(status, statuses[j]) == want, "natsio_status_is(%d %s, %d) is %s",
                         status, l->fields[2], statuses[j], want ? "false" : "true");
        }
        /* The parents: listed, and the transitive closure is the list. */
        int closure = 0;
        for (size_t p = 0; p < 4; p++) {
            natsio_status parent = natsio_status_parent(status, p);
            if (parent == NATSIO_OK) break;
            NT_CHECK_MSG(listed_ancestor(l, parent), "%d's parent %d is not listed", status, (int)parent);
        }
        for (int f = 3; f < l->nfields; f++) {
            int ancestor = atoi(l->fields[f]);
            for (size_t p = 0; p < 4; p++) {
                natsio_status parent = natsio_status_parent(status, p);
                if (parent == NATSIO_OK) break;
                if (natsio_status_is(parent, ancestor)) {
                    closure++;
                    break;
                }
            }
        }
        NT_CHECK_MSG(closure == l->nfields - 3, "%d: its parents reach %d of its %d ancestors", status, closure,
                     l->nfields - 3);
    }
    /* Every error code the library names is in the table, and no other. */
    for (int code = 100; code < 1000; code++) {
        bool in_table = false;
        for (int j = 0; j < n; j++) in_table = in_table || statuses[j] == code;
        NT_CHECK_MSG((natsio_status_name(code)[0] != '\0') == in_table,
                     "status %d: named \"%s\" by the library, %s the table", code, natsio_status_name(code),
                     in_table ? "in" : "not in");
    }
    NT_CHECK_STR_EQ(natsio_status_name(NATSIO_OK), "OK");
    NT_CHECK_STR_EQ(natsio_status_name(NATSIO_DONE), "DONE");
    NT_CHECK_STR_EQ(natsio_status_name(NATSIO_PENDING), "PENDING");
    NT_CHECK_STR_EQ(natsio_status_name(-7), "");
    NT_CHECK(natsio_status_parent(NATSIO_ERR_TIMEOUT, 0) == NATSIO_OK);
    NT_CHECK(natsio_status_parent(-7, 0) == NATSIO_OK);
    NT_CHECK(!natsio_status_is(-7, NATSIO_ERR_TIMEOUT));
}

/* ---- data lines ----------------------------------------------------------- */

/* The status of `call`, and the error data read right after it. */
typedef struct {
    natsio_status status;
    int32_t code, err_code;
    uint64_t revision;
} failure;

static failure failure_now(natsio_status status) {
    failure f = {status, natsio_last_error_code(), natsio_last_error_err_code(), natsio_last_error_revision()};
    return f;
}

static void check_api_failure(failure f, natsio_status want, int32_t code, int32_t err_code, const char *what) {
    NT_CHECK_MSG(f.status == want, "%s: got %d (%s), want %d", what, (int)f.status, natsio_status_str(f.status),
                 (int)want);
    NT_CHECK_MSG(f.code == code && f.err_code == err_code, "%s: code %d err_code %d, want %d and %d", what,
                 (int)f.code, (int)f.err_code, (int)code, (int)err_code);
    NT_CHECK_MSG(f.revision == 0, "%s: revision %llu, want 0", what, (unsigned long long)f.revision);
}

static void test_data_api_error(void) {
    NT_CHECK(table_case("data", "api_error") != NULL);
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "CONF_API", "conf.api.>"));
    failure f = failure_now(natsio_js_stream_create(
        js, "{\"name\":\"CONF_API\",\"subjects\":[\"conf.other.>\"],\"storage\":\"memory\"}", NATSIO_CREATE, NULL));
    check_api_failure(f, NATSIO_ERR_STREAM_NAME_IN_USE, 400, 10058, "create with another config");
    char *info = NULL;
    f = failure_now(natsio_js_stream_info(js, "CONF_MISSING", NULL, &info));
    check_api_failure(f, NATSIO_ERR_STREAM_NOT_FOUND, 404, 10059, "info of a missing stream");
    /* The token form: the reader of the outcome gets the same data. */
    natsio_token *t = NULL;
    EXPECT_OK(natsio_js_stream_info_async(js, "CONF_MISSING", NULL, &t));
    nt_cleanup(token_free_cb, t);
    f = failure_now(token_outcome(t, 5000));
    check_api_failure(f, NATSIO_ERR_STREAM_NOT_FOUND, 404, 10059, "token of info of a missing stream");
    /* A failure that is no API rejection carries none. */
    f = failure_now(natsio_js_stream_info(js, "bad.name", NULL, &info));
    check_api_failure(f, NATSIO_ERR_INVALID_ARGUMENT, 0, 0, "bad stream name");
    EXPECT_OK(natsio_js_stream_delete(js, "CONF_API"));
}

static void test_data_key_revision(void) {
    NT_CHECK(table_case("data", "key_revision") != NULL);
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_kv *kv = create_bucket(js, "{\"bucket\":\"CONF_REV\",\"storage\":\"memory\",\"history\":5}");
    NT_CHECK(kv != NULL);
    uint64_t rev = 0;
    EXPECT_OK(natsio_kv_put(kv, "k", "v1", 2, NULL, &rev));
    NT_CHECK_INT_EQ(rev, 1);
    failure f = failure_now(natsio_kv_create(kv, "k", "v2", 2, NULL, NULL));
    NT_CHECK_INT_EQ(f.status, NATSIO_ERR_KEY_EXISTS);
    NT_CHECK_INT_EQ(f.revision, 1);
    NT_CHECK(f.code == 0 && f.err_code == 0);
    EXPECT_OK(natsio_kv_delete(kv, "k", NULL, &rev));
    NT_CHECK_INT_EQ(rev, 2);
    natsio_kv_entry *e = NULL;
    f = failure_now(natsio_kv_get(kv, "k", &e));
    NT_CHECK_INT_EQ(f.status, NATSIO_ERR_KEY_DELETED);
    NT_CHECK_INT_EQ(f.revision, 2);
    /* A key never written: not found, no revision. */
    f = failure_now(natsio_kv_get(kv, "never", &e));
    NT_CHECK_INT_EQ(f.status, NATSIO_ERR_KEY_NOT_FOUND);
    NT_CHECK_INT_EQ(f.revision, 0);
    EXPECT_OK(natsio_js_kv_delete(js, "CONF_REV"));
}

/* ---- default lines -------------------------------------------------------- */

static void test_default_url(void) {
    const table_line *l = table_case("default", "default_url");
    if (l == NULL) return;
    NT_CHECK_STR_EQ(NATSIO_DEFAULT_URL, l->fields[2]);
    /* "" and the default URL behave alike: both connect, or both find no
     * server there. */
    natsio_client *a = NULL, *b = NULL;
    natsio_status by_empty = natsio_client_connect_url("", &a);
    /* Proof that "" went to the default address, whether a server listens
     * there (the connected URL) or not (the error names host:port). */
    const char *host_port = strstr(l->fields[2], "://") ? strstr(l->fields[2], "://") + 3 : l->fields[2];
    if (by_empty == NATSIO_OK) {
        char *url = NULL;
        EXPECT_OK(natsio_client_connected_url(a, &url));
        NT_CHECK_MSG(url != NULL && strstr(url, host_port) != NULL, "connected to %s", url ? url : "(null)");
        natsio_string_free(url);
    } else {
        const char *detail = natsio_last_error();
        NT_CHECK_MSG(detail != NULL && strstr(detail, host_port) != NULL, "connect \"\": %s",
                     detail ? detail : "(no detail)");
    }
    natsio_status by_default = natsio_client_connect_url(NATSIO_DEFAULT_URL, &b);
    natsio_client_free(a);
    natsio_client_free(b);
    NT_CHECK_MSG(by_empty == by_default, "connect \"\": %d, connect default URL: %d", (int)by_empty,
                 (int)by_default);
    NT_CHECK_MSG(by_empty == NATSIO_OK || by_empty == NATSIO_ERR_NO_SERVERS, "connect \"\": %s",
                 natsio_status_str(by_empty));
    /* The options say so too. */
    natsio_options *o = new_options();
    NT_CHECK(o != NULL);
    EXPECT_OK(natsio_options_set_url(o, ""));
    EXPECT_OK(natsio_options_set_connect_timeout_ms(o, 2000));
    natsio_client *c = NULL;
    natsio_status by_options = natsio_client_connect(o, &c);
    natsio_client_free(c);
    NT_CHECK_INT_EQ(by_options, by_default);
}

/* The payload of the next delete request the spy saw, into buf. */
static bool next_delete_request(natsio_sub *spy, char *buf, size_t cap) {
    natsio_msg *m = NULL;
    natsio_status st = natsio_sub_next(spy, 5000, &m);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "no delete request seen: %s", natsio_status_str(st));
        return false;
    }
    snprintf(buf, cap, "%.*s", (int)natsio_msg_data_len(m), natsio_msg_data(m));
    natsio_msg_free(m);
    return true;
}

static void test_default_delete_msg_erase(void) {
    const table_line *l = table_case("default", "delete_msg_erase");
    if (l == NULL) return;
    NT_CHECK_STR_EQ(l->fields[2], "true");
    natsio_js *js = connect_js();
    natsio_client *spy_client = connect_client();
    NT_CHECK(js && spy_client);
    NT_CHECK(create_stream(js, "CONF_DEL", "conf.del"));
    for (int i = 0; i < 2; i++) EXPECT_OK(natsio_js_publish(js, "conf.del", "x", 1, NULL, NULL));
    natsio_sub *spy = subscribe_and_flush(spy_client, "$JS.API.STREAM.MSG.DELETE.CONF_DEL");
    NT_CHECK(spy != NULL);
    char req[256];
    /* C has no default: erase is a parameter. true sends no no_erase... */
    EXPECT_OK(natsio_js_stream_delete_msg(js, "CONF_DEL", 1, true));
    if (next_delete_request(spy, req, sizeof req))
        NT_CHECK_MSG(strstr(req, "no_erase") == NULL, "erasing delete sent %s", req);
    /* ...false asks the server not to erase. */
    EXPECT_OK(natsio_js_stream_delete_msg(js, "CONF_DEL", 2, false));
    if (next_delete_request(spy, req, sizeof req))
        NT_CHECK_MSG(strstr(req, "\"no_erase\":true") != NULL, "non-erasing delete sent %s", req);
    natsio_stored_msg *m = NULL;
    EXPECT_FAILS(NATSIO_ERR_MESSAGE_NOT_FOUND, natsio_js_stream_get_msg(js, "CONF_DEL", 1, NULL, &m));
    EXPECT_OK(natsio_js_stream_delete(js, "CONF_DEL"));
}

static void test_default_sub_pending_limit_zero(void) {
    const table_line *l = table_case("default", "sub_pending_limit_zero");
    if (l == NULL) return;
    NT_CHECK_STR_EQ(l->fields[2], "disabled");
    enum { CLIENT_LIMIT = 10, SENT = 50 };
    natsio_options *o = options_for_url(nt_server_url(g_server), 0);
    NT_CHECK(o != NULL);
    EXPECT_OK(natsio_options_set_pending_limits(o, CLIENT_LIMIT, -1));
    natsio_client *sc = connect_with(o);
    natsio_client *pc = connect_client();
    NT_CHECK(sc && pc);
    char subj[128];
    case_subject(subj, sizeof subj, "p");
    natsio_sub_options zero, dflt;
    EXPECT_OK(natsio_sub_options_init(&zero));
    EXPECT_OK(natsio_sub_options_init(&dflt));
    zero.pending_msgs_limit = 0;
    natsio_sub *by_zero = NULL, *by_default = NULL;
    EXPECT_OK(natsio_client_subscribe(sc, subj, NULL, &zero, &by_zero));
    nt_cleanup(sub_free_cb, by_zero);
    EXPECT_OK(natsio_client_subscribe(sc, subj, NULL, &dflt, &by_default));
    nt_cleanup(sub_free_cb, by_default);
    EXPECT_OK(natsio_client_flush(sc, 5000));
    for (int i = 0; i < SENT; i++) EXPECT_OK(natsio_client_publish(pc, subj, "m", 1));
    EXPECT_OK(natsio_client_flush(pc, 5000));
    /* Both subscriptions have seen all 50 once the subscriber's PONG is
     * back (the server delivers in order on one connection). */
    EXPECT_OK(natsio_client_flush(sc, 5000));
    natsio_iter_stats st;
    EXPECT_OK(natsio_sub_get_stats(by_zero, &st));
    NT_CHECK_INT_EQ(st.pending_items, SENT);
    NT_CHECK_INT_EQ(st.dropped, 0);
    EXPECT_OK(natsio_sub_get_stats(by_default, &st));
    NT_CHECK_INT_EQ(st.pending_items, CLIENT_LIMIT);
    NT_CHECK_INT_EQ(st.dropped, SENT - CLIENT_LIMIT);
}

/* ---- behaviour lines ------------------------------------------------------ */

static void resume_server_cb(void *server) { nt_server_resume(server); }

static void test_behaviour_flush_bound(void) {
    NT_CHECK(table_case("behaviour", "flush_bound") != NULL);
    nt_server *s = start_server(NULL);
    NT_CHECK(s != NULL);
    natsio_options *o = options_for_url(nt_server_url(s), 0);
    NT_CHECK(o != NULL);
    EXPECT_OK(natsio_options_set_flush_timeout_ms(o, 300));
    natsio_client *c = connect_with(o);
    NT_CHECK(c != NULL);
    EXPECT_OK(natsio_client_flush(c, NATSIO_TIMEOUT_DEFAULT));
    nt_cleanup(resume_server_cb, s);
    NT_CHECK_MSG(nt_server_pause(s) == 0, "the server did not stop");
    int64_t t0 = nt_now_ms();
    EXPECT_FAILS(NATSIO_ERR_TIMEOUT, natsio_client_flush(c, NATSIO_TIMEOUT_DEFAULT));
    int64_t took = nt_now_ms() - t0;
    NT_CHECK_MSG(took >= 250 && took < 2000, "blocking flush took %lld ms", (long long)took);
    natsio_token *t = NULL;
    t0 = nt_now_ms();
    EXPECT_OK(natsio_client_flush_async(c, NATSIO_TIMEOUT_DEFAULT, &t));
    nt_cleanup(token_free_cb, t);
    NT_CHECK_INT_EQ(token_outcome(t, 5000), NATSIO_ERR_TIMEOUT);
    took = nt_now_ms() - t0;
    NT_CHECK_MSG(took >= 250 && took < 2000, "asynchronous flush took %lld ms", (long long)took);
    /* An explicit timeout bounds the async form too. */
    natsio_token *t2 = NULL;
    t0 = nt_now_ms();
    EXPECT_OK(natsio_client_flush_async(c, 100, &t2));
    nt_cleanup(token_free_cb, t2);
    NT_CHECK_INT_EQ(token_outcome(t2, 5000), NATSIO_ERR_TIMEOUT);
    NT_CHECK_MSG(nt_now_ms() - t0 < 250, "100 ms flush took %lld ms", (long long)(nt_now_ms() - t0));
    /* Once the server runs again, the connection works. */
    NT_CHECK_INT_EQ(nt_server_resume(s), 0);
    EXPECT_OK(natsio_client_flush(c, 5000));
}

static void test_behaviour_last_by_wildcard(void) {
    NT_CHECK(table_case("behaviour", "last_by_wildcard") != NULL);
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    for (int direct = 0; direct < 2; direct++) {
        char stream[32], config[160], subject[48];
        const char *prefix = direct ? "conf.wild.d" : "conf.wild.l";
        snprintf(stream, sizeof stream, "CONF_WILD_%d", direct);
        snprintf(config, sizeof config, "{\"name\":\"%s\",\"subjects\":[\"%s.>\"],\"storage\":\"memory\",\"allow_direct\":%s}",
                 stream, prefix, direct ? "true" : "false");
        NT_CHECK(create_stream_config(js, config));
        const char *tails[] = {"a", "b.c", "b", "a.x"};
        for (size_t i = 0; i < NT_COUNT(tails); i++) {
            snprintf(subject, sizeof subject, "%s.%s", prefix, tails[i]);
            EXPECT_OK(natsio_js_publish(js, subject, "m", 1, NULL, NULL));
        }
        const char *filters[] = {"*", ">"};
        const uint64_t want[] = {3, 4};
        for (size_t i = 0; i < 2; i++) {
            snprintf(subject, sizeof subject, "%s.%s", prefix, filters[i]);
            natsio_stored_msg *m = NULL;
            EXPECT_OK(natsio_js_stream_get_msg(js, stream, 0, subject, &m));
            NT_CHECK_MSG(m != NULL && natsio_stored_msg_seq(m) == want[i], "last by %s (allow_direct %d): %llu, want %llu",
                         subject, direct, m ? (unsigned long long)natsio_stored_msg_seq(m) : 0ULL,
                         (unsigned long long)want[i]);
            natsio_stored_msg_free(m);
        }
        EXPECT_OK(natsio_js_stream_delete(js, stream));
    }
}

static void test_behaviour_fetch_refused(void) {
    NT_CHECK(table_case("behaviour", "fetch_refused") != NULL);
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "CONF_REFUSED", "conf.refused"));
    EXPECT_OK(natsio_js_consumer_create(js, "CONF_REFUSED", "{\"durable_name\":\"c\",\"max_batch\":10}", NATSIO_CREATE,
                                        NULL));
    natsio_fetch_options o;
    natsio_fetch_options_init(&o);
    o.max_messages = 20;
    o.expires_ms = 500;
    natsio_msg_list *list = NULL;
    EXPECT_FAILS_NAMING(NATSIO_ERR_JETSTREAM, "Exceeded MaxRequestBatch",
                        natsio_js_fetch(js, "CONF_REFUSED", "c", &o, &list));
    NT_CHECK(list == NULL);
    EXPECT_OK(natsio_js_stream_delete(js, "CONF_REFUSED"));
}

static void test_behaviour_consume_budget(void) {
    NT_CHECK(table_case("behaviour", "consume_budget") != NULL);
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "CONF_BUDGET", "conf.budget"));
    for (int i = 0; i < 100; i++) EXPECT_OK(natsio_js_publish(js, "conf.budget", "m", 1, NULL, NULL));
    EXPECT_OK(natsio_js_consumer_create(js, "CONF_BUDGET", "{\"durable_name\":\"c\",\"ack_policy\":\"explicit\"}",
                                        NATSIO_CREATE, NULL));
    natsio_consume_options co;
    natsio_consume_options_init(&co);
    co.max_messages = 10;
    natsio_js_messages *it = NULL;
    EXPECT_OK(natsio_js_consume(js, "CONF_BUDGET", "c", &co, &it));
    nt_cleanup(js_messages_free_cb, it);
    natsio_msg *m = NULL;
    EXPECT_OK(natsio_js_messages_next(it, 5000, &m));
    NT_CHECK(m != NULL);
    EXPECT_OK(natsio_msg_ack_sync(m, NATSIO_TIMEOUT_DEFAULT));
    natsio_msg_free(m);
    int64_t most = INT64_MIN;
    for (int64_t until = nt_now_ms() + 1500; nt_now_ms() < until; nt_sleep_ms(50)) {
        int64_t n = consumer_int(js, "CONF_BUDGET", "c", "num_ack_pending");
        if (n > most) most = n;
    }
    NT_CHECK_MSG(most >= 5 && most <= 10, "num_ack_pending reached %lld (max_messages 10)", (long long)most);
    EXPECT_OK(natsio_js_messages_stop(it));
    EXPECT_OK(natsio_js_stream_delete(js, "CONF_BUDGET"));
}

static void test_behaviour_iterator_closed(void) {
    NT_CHECK(table_case("behaviour", "iterator_closed") != NULL);
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    char subj[128];
    case_subject(subj, sizeof subj, "closed");
    natsio_sub *sub = subscribe_and_flush(c, subj);
    NT_CHECK(sub != NULL);
    EXPECT_OK(natsio_client_close(c));
    natsio_msg *m = NULL;
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_sub_next(sub, 1000, &m));
    NT_CHECK(m == NULL);
}

static void test_behaviour_purge_deletes_zero(void) {
    NT_CHECK(table_case("behaviour", "purge_deletes_zero") != NULL);
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_kv *kv = create_bucket(js, "{\"bucket\":\"CONF_PURGE\",\"storage\":\"memory\",\"history\":5}");
    NT_CHECK(kv != NULL);
    EXPECT_OK(natsio_kv_put(kv, "k", "v1", 2, NULL, NULL));
    EXPECT_OK(natsio_kv_put(kv, "k", "v2", 2, NULL, NULL));
    EXPECT_OK(natsio_kv_delete(kv, "k", NULL, NULL));
    /* 0: the default age (30 minutes): the young marker stays, the values go. */
    uint64_t purged = 0;
    EXPECT_OK(natsio_kv_purge_deletes(kv, 0, &purged));
    NT_CHECK_INT_EQ(purged, 2);
    natsio_kv_entry *e = NULL;
    EXPECT_FAILS(NATSIO_ERR_KEY_DELETED, natsio_kv_get(kv, "k", &e));
    /* Below 0: every marker, whatever its age. */
    EXPECT_OK(natsio_kv_purge_deletes(kv, -1, &purged));
    NT_CHECK_INT_EQ(purged, 1);
    EXPECT_FAILS(NATSIO_ERR_KEY_NOT_FOUND, natsio_kv_get(kv, "k", &e));
    EXPECT_OK(natsio_js_kv_delete(js, "CONF_PURGE"));
}

static void test_behaviour_sync_publish(void) {
    NT_CHECK(table_case("behaviour", "sync_publish") != NULL);
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    char held[128], stored[128];
    /* A plain subscriber takes the asynchronous publish and never acks. */
    natsio_sub *holder = subscribe_and_flush(c, case_subject(held, sizeof held, "held"));
    NT_CHECK(holder != NULL);
    natsio_js_options jo;
    natsio_js_options_init(&jo);
    jo.publish_async_max_pending = 1;
    jo.publish_async_stall_wait_ms = 100;
    natsio_js *js = new_jetstream(c, &jo);
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "CONF_SYNC", case_subject(stored, sizeof stored, "stored")));
    natsio_token *pending = NULL;
    EXPECT_OK(natsio_js_publish_async(js, held, "a", 1, NULL, &pending));
    nt_cleanup(token_free_cb, pending);
    NT_CHECK_INT_EQ(natsio_js_publish_async_pending(js), 1);
    natsio_token *stalled = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_TOO_MANY_STALLED, natsio_js_publish_async(js, stored, "x", 1, NULL, &stalled));
    natsio_pub_ack *ack = NULL;
    EXPECT_OK(natsio_js_publish(js, stored, "s", 1, NULL, &ack));
    NT_CHECK(ack != NULL);
    NT_CHECK_INT_EQ(natsio_pub_ack_seq(ack), 1);
    natsio_pub_ack_free(ack);
    NT_CHECK_INT_EQ(natsio_js_publish_async_pending(js), 1);
    EXPECT_OK(natsio_js_stream_delete(js, "CONF_SYNC"));
}

static void test_behaviour_ack_bodies(void) {
    NT_CHECK(table_case("behaviour", "ack_bodies") != NULL);
    natsio_js *js = connect_js();
    natsio_client *spy_client = connect_client();
    NT_CHECK(js && spy_client);
    NT_CHECK(create_stream(js, "CONF_ACKS", "conf.acks"));
    for (int i = 0; i < 4; i++) EXPECT_OK(natsio_js_publish(js, "conf.acks", "m", 1, NULL, NULL));
    EXPECT_OK(natsio_js_consumer_create(js, "CONF_ACKS",
                                        "{\"durable_name\":\"c\",\"ack_policy\":\"explicit\",\"ack_wait\":\"30s\"}",
                                        NATSIO_CREATE, NULL));
    natsio_sub *spy = subscribe_and_flush(spy_client, "$JS.ACK.CONF_ACKS.>");
    NT_CHECK(spy != NULL);
    natsio_fetch_options o;
    natsio_fetch_options_init(&o);
    o.max_messages = 4;
    o.expires_ms = 5000;
    natsio_msg_list *list = NULL;
    EXPECT_OK(natsio_js_fetch(js, "CONF_ACKS", "c", &o, &list));
    nt_cleanup(msg_list_free_cb, list);
    NT_CHECK_INT_EQ(natsio_msg_list_count(list), 4);
    EXPECT_OK(natsio_msg_in_progress(natsio_msg_list_get(list, 0)));
    EXPECT_OK(natsio_msg_nak(natsio_msg_list_get(list, 1), 2000));
    EXPECT_OK(natsio_msg_term(natsio_msg_list_get(list, 2), "bad"));
    EXPECT_OK(natsio_msg_ack(natsio_msg_list_get(list, 3)));
    const char *const want[] = {"+WPI", "-NAK {\"delay\":2000000000}", "+TERM bad", "+ACK"};
    for (int i = 0; i < 4; i++) {
        natsio_msg *m = NULL;
        EXPECT_OK(natsio_sub_next(spy, 10000, &m));
        NT_CHECK(m != NULL);
        NT_CHECK_MSG(span_eq(natsio_msg_data(m), natsio_msg_data_len(m), want[i]), "ack %d: \"%.*s\", want \"%s\"",
                     i, (int)natsio_msg_data_len(m), (const char *)natsio_msg_data(m), want[i]);
        natsio_msg_free(m);
    }
    EXPECT_OK(natsio_js_stream_delete(js, "CONF_ACKS"));
}

static struct {
    atomic_long calls;
    atomic_int code;
    char endpoint[64];
    char description[160];
} g_svc_errors;

static void svc_on_error(void *ud, const char *endpoint, const char *subject, int32_t code, const char *description) {
    (void)ud;
    (void)subject;
    snprintf(g_svc_errors.endpoint, sizeof g_svc_errors.endpoint, "%s", endpoint);
    snprintf(g_svc_errors.description, sizeof g_svc_errors.description, "%s", description);
    atomic_store(&g_svc_errors.code, code);
    atomic_fetch_add(&g_svc_errors.calls, 1);
}

/* Fails the request "fail", echoes the others. */
static natsio_status svc_fail_or_echo(void *ud, const natsio_service_request *req, natsio_status status) {
    (void)ud;
    if (req == NULL) return status;
    const natsio_msg *m = natsio_service_request_msg(req);
    if (span_eq(natsio_msg_data(m), natsio_msg_data_len(m), "fail")) return NATSIO_ERR_INVALID_ARGUMENT;
    return natsio_service_request_respond(req, NULL, natsio_msg_data(m), natsio_msg_data_len(m));
}

static void service_free_cb(void *s) { natsio_service_free(s); }
static void endpoint_free_cb(void *e) { natsio_endpoint_free(e); }

static void test_behaviour_service_handler_failure(void) {
    NT_CHECK(table_case("behaviour", "service_handler_failure") != NULL);
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    char subj[128];
    case_subject(subj, sizeof subj, "svc");
    natsio_service *svc = NULL;
    EXPECT_OK(natsio_client_add_service(c, "{\"name\":\"conf\",\"version\":\"1.0.0\"}", &svc));
    nt_cleanup(service_free_cb, svc);
    atomic_store(&g_svc_errors.calls, 0);
    EXPECT_OK(natsio_service_set_error_callback(svc, svc_on_error, NULL, NULL));
    char config[256];
    snprintf(config, sizeof config, "{\"name\":\"op\",\"subject\":\"%s\"}", subj);
    natsio_endpoint *ep = NULL;
    EXPECT_OK(natsio_service_add_endpoint(svc, NULL, config, &ep));
    nt_cleanup(endpoint_free_cb, ep);
    EXPECT_OK(natsio_endpoint_set_callback(ep, svc_fail_or_echo, NULL, NULL));
    EXPECT_OK(natsio_client_flush(c, 5000));

    natsio_msg *r = NULL;
    const char *code = NULL;
    EXPECT_OK(natsio_client_request(c, subj, NULL, "fail", 4, 5000, &r));
    EXPECT_OK(natsio_headers_get(natsio_msg_headers(r), "Nats-Service-Error-Code", &code));
    NT_CHECK_STR_EQ(code, "500");
    natsio_msg_free(r);
    EXPECT_OK(natsio_client_request(c, subj, NULL, "next", 4, 5000, &r));
    NT_CHECK(span_eq(natsio_msg_data(r), natsio_msg_data_len(r), "next"));
    natsio_msg_free(r);
    NT_CHECK_INT_EQ(atomic_load(&g_svc_errors.calls), 1);
    NT_CHECK_STR_EQ(g_svc_errors.endpoint, "op");
    NT_CHECK_INT_EQ(atomic_load(&g_svc_errors.code), 500);
    char *json = NULL;
    int64_t n = 0;
    EXPECT_OK(natsio_endpoint_stats_json(ep, &json));
    NT_CHECK(json_int(json, "num_requests", &n) && n == 2);
    NT_CHECK(json_int(json, "num_errors", &n) && n == 1);
    natsio_string_free(json);
}

static void test_behaviour_prioritized_pull(void) {
    NT_CHECK(table_case("behaviour", "prioritized_pull") != NULL);
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "CONF_PRIO", "conf.prio"));
    NT_CHECK(create_consumer(js, "CONF_PRIO",
                             "{\"durable_name\":\"c\",\"priority_groups\":[\"P\"],\"priority_policy\":\"prioritized\"}"));
    natsio_js_messages *low = fetch_one_prioritized(js, "CONF_PRIO", "c", "P", 5);
    NT_CHECK(wait_consumer_int(js, "CONF_PRIO", "c", "num_waiting", 1));
    natsio_js_messages *high = fetch_one_prioritized(js, "CONF_PRIO", "c", "P", 1);
    NT_CHECK(wait_consumer_int(js, "CONF_PRIO", "c", "num_waiting", 2));
    EXPECT_OK(natsio_js_publish(js, "conf.prio", "first", 5, NULL, NULL));
    NT_CHECK(next_acked_payload_is(high, "first"));
    EXPECT_OK(natsio_js_publish(js, "conf.prio", "second", 6, NULL, NULL));
    NT_CHECK(next_acked_payload_is(low, "second"));
    natsio_fetch_options o;
    natsio_fetch_options_init(&o);
    o.group = "P";
    o.priority = 10;
    o.no_wait = true;
    natsio_msg_list *list = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_fetch(js, "CONF_PRIO", "c", &o, &list));
    NT_CHECK(list == SENTINEL);
    EXPECT_OK(natsio_js_stream_delete(js, "CONF_PRIO"));
}

static void test_behaviour_kv_mirror(void) {
    NT_CHECK(table_case("behaviour", "kv_mirror") != NULL);
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_kv *origin = create_bucket(js, "{\"bucket\":\"CONF_O\",\"storage\":\"memory\"}");
    natsio_kv *mirror =
        create_bucket(js, "{\"bucket\":\"CONF_M\",\"storage\":\"memory\",\"mirror\":{\"name\":\"CONF_O\"}}");
    NT_CHECK(origin != NULL && mirror != NULL);
    char *info = NULL;
    EXPECT_OK(natsio_js_stream_info(js, "KV_CONF_M", NULL, &info));
    kept(info);
    NT_CHECK_MSG(strstr(info, "\"mirror\":{\"name\":\"KV_CONF_O\"") && strstr(info, "\"mirror_direct\":true") &&
                     !strstr(info, "\"subjects\""),
                 "%s", info);
    EXPECT_OK(natsio_kv_put(origin, "k", "v1", 2, NULL, NULL));
    NT_CHECK(wait_kv_value(mirror, "k", "v1", 10000, NULL));
    /* Polled as well: the mirror answers the origin's Direct Gets too
     * (mirror_direct), and may not have "w" yet. */
    uint64_t rev = 0, read_rev = 0;
    EXPECT_OK(natsio_kv_put(mirror, "w", "v2", 2, NULL, &rev));
    NT_CHECK(wait_kv_value(origin, "w", "v2", 10000, &read_rev));
    NT_CHECK_INT_EQ(read_rev, rev);

    natsio_kv *sourced = create_bucket(
        js, "{\"bucket\":\"CONF_S\",\"storage\":\"memory\",\"sources\":[{\"name\":\"CONF_O\"}]}");
    NT_CHECK(sourced != NULL);
    NT_CHECK(wait_kv_value(sourced, "k", "v1", 10000, NULL));
    EXPECT_OK(natsio_kv_put(sourced, "s", "v3", 2, NULL, NULL));
    natsio_kv_entry *none = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_KEY_NOT_FOUND, natsio_kv_get(origin, "s", &none));
    NT_CHECK(none == SENTINEL);
    EXPECT_OK(natsio_js_kv_delete(js, "CONF_S"));
    EXPECT_OK(natsio_js_kv_delete(js, "CONF_M"));
    EXPECT_OK(natsio_js_kv_delete(js, "CONF_O"));
}

static void test_behaviour_server_pool(void) {
    NT_CHECK(table_case("behaviour", "server_pool") != NULL);
    nt_server *a = start_server(NULL), *b = start_server(NULL);
    NT_CHECK(a != NULL && b != NULL);
    char dead[64], dead_port[16];
    int port = nt_free_port();
    snprintf(dead, sizeof dead, "nats://127.0.0.1:%d", port);
    snprintf(dead_port, sizeof dead_port, ":%d", port);
    callback_log *log = new_callback_log();
    natsio_options *o = options_for_url(nt_server_url(a), 2000);
    NT_CHECK(o != NULL && log_callbacks(o, log));
    natsio_client *c = connect_with(o);
    NT_CHECK(c != NULL);

    natsio_server_list *pool = kept_server_pool(c);
    NT_CHECK(pool != NULL && natsio_server_list_count(pool) == 1);
    const natsio_server *sa = natsio_server_list_get(pool, 0);
    NT_CHECK(natsio_server_did_connect(sa) && !natsio_server_is_discovered(sa) && natsio_server_reconnects(sa) == 0);

    const char *urls[] = {dead, nt_server_url(b)};
    EXPECT_OK(natsio_client_set_server_pool(c, urls, 2));
    EXPECT_OK(natsio_client_flush(c, 2000));
    connected_to_wait at_a = {c, nt_server_url(a)};
    NT_CHECK(client_connected_to(&at_a));
    pool = kept_server_pool(c);
    NT_CHECK(pool != NULL && natsio_server_list_count(pool) == 2);
    NT_CHECK_STR_EQ(natsio_server_url(natsio_server_list_get(pool, 0)), dead);
    NT_CHECK_STR_EQ(natsio_server_url(natsio_server_list_get(pool, 1)), nt_server_url(b));

    EXPECT_OK(natsio_client_force_reconnect(c));
    connected_to_wait at_b = {c, nt_server_url(b)};
    NT_CHECK(nt_wait_until(client_connected_to, &at_b, 10000));
    char dump[2048];
    NT_CHECK_MSG(log_events_any(log, NATSIO_EVENT_RECONNECT_FAILED) == 1, "%s", log_dump(log, dump, sizeof dump));
    callback_record failed = log_reconnect_failure(log, 0);
    NT_CHECK_MSG(strstr(failed.text, dead) != NULL && failed.status != NATSIO_OK, "%s: %s",
                 natsio_status_str(failed.status), failed.text);
    pool = kept_server_pool(c);
    NT_CHECK(pool != NULL);
    const natsio_server *sd = pool_server(pool, dead_port);
    NT_CHECK(sd != NULL && natsio_server_reconnects(sd) == 1 && !natsio_server_did_connect(sd));
    const natsio_server *sb = natsio_server_list_get(pool, 1);
    NT_CHECK(natsio_server_did_connect(sb) && natsio_server_reconnects(sb) == 0);

    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_client_set_server_pool(c, urls, 0));
    pool = kept_server_pool(c);
    NT_CHECK(pool != NULL && natsio_server_list_count(pool) == 2);
}

/* What the reconnect delay callback of reconnect_delay_callback saw. */
static struct {
    pthread_mutex_t lock;
    int64_t args[64];
    int calls;
} g_delays = {PTHREAD_MUTEX_INITIALIZER, {0}, 0};

static int64_t record_delay_arg(void *user_data, int64_t attempts) {
    (void)user_data;
    pthread_mutex_lock(&g_delays.lock);
    if (g_delays.calls < 64) g_delays.args[g_delays.calls] = attempts;
    g_delays.calls++;
    pthread_mutex_unlock(&g_delays.lock);
    return 20;
}

static int delay_calls(void) {
    pthread_mutex_lock(&g_delays.lock);
    int n = g_delays.calls;
    pthread_mutex_unlock(&g_delays.lock);
    return n;
}

static bool called_twice(void *arg) {
    (void)arg;
    return delay_calls() >= 2;
}

static void test_behaviour_reconnect_delay_callback(void) {
    NT_CHECK(table_case("behaviour", "reconnect_delay_callback") != NULL);
    nt_server *s = start_server(NULL);
    NT_CHECK(s != NULL);
    callback_log *log = new_callback_log();
    natsio_options *o = options_for_url(nt_server_url(s), 2000);
    NT_CHECK(o != NULL && log_callbacks(o, log));
    EXPECT_OK(natsio_options_set_max_reconnect_attempts(o, -1));
    EXPECT_OK(natsio_options_set_reconnect_delay_callback(o, record_delay_arg, NULL, NULL));
    natsio_client *c = connect_with(o);
    NT_CHECK(c != NULL);
    nt_server_kill(s);
    NT_CHECK(nt_wait_until(called_twice, NULL, 10000));
    NT_CHECK_INT_EQ(nt_server_restart(s), 0);
    NT_CHECK(wait_log_events(log, NATSIO_EVENT_RECONNECTED, 1, 10000));
    int n = delay_calls();
    NT_CHECK(n >= 2 && n <= 64);
    pthread_mutex_lock(&g_delays.lock);
    bool counted = true;
    for (int i = 0; i < n; i++) counted = counted && g_delays.args[i] == i + 1;
    pthread_mutex_unlock(&g_delays.lock);
    NT_CHECK_MSG(counted, "the callback's arguments are not 1..%d", n);
    char dump[2048];
    NT_CHECK_MSG(log_events_any(log, NATSIO_EVENT_RECONNECT_FAILED) == n - 1, "%d calls; %s", n,
                 log_dump(log, dump, sizeof dump));
}

/* The seed or public key of a fixture, trimmed, in `buf`. */
static const char *auth_fixture(char *buf, size_t cap, const char *relative) {
    char path[1024];
    char *text = nt_read_file(nt_fixture_path(path, sizeof path, relative));
    if (!text) return NULL;
    snprintf(buf, cap, "%s", text);
    free(text);
    size_t len = strlen(buf);
    while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r')) buf[--len] = '\0';
    return buf;
}

typedef struct {
    const char *pub, *seed;
    bool fail;
    atomic_int calls;
    char nonces[2][128];
    char sig[NT_NKEY_SIG_B64_CAP];
} conformance_signer;

static natsio_status conformance_sign(void *ud, const uint8_t *nonce, size_t len, natsio_auth_fields *out) {
    conformance_signer *a = (conformance_signer *)ud;
    int call = atomic_fetch_add(&a->calls, 1);
    if (call < 2) snprintf(a->nonces[call], sizeof a->nonces[call], "%.*s", (int)len, (const char *)nonce);
    if (a->fail) return NATSIO_ERR_INVALID_ARGUMENT;
    if (!nt_nkey_sign_base64url(a->seed, nonce, len, a->sig)) return NATSIO_ERR_INVALID_ARGUMENT;
    out->nkey = a->pub;
    out->sig = a->sig;
    return NATSIO_OK;
}

static bool signed_twice(void *arg) { return atomic_load(&((conformance_signer *)arg)->calls) >= 2; }

static void test_behaviour_authenticator_callback(void) {
    NT_CHECK(table_case("behaviour", "authenticator_callback") != NULL);
    static char pub[128], seed[128], other[128], config[256];
    NT_CHECK(auth_fixture(pub, sizeof pub, "auth/nkey-user.pub") && auth_fixture(seed, sizeof seed, "auth/nkey-user.nk") &&
             auth_fixture(other, sizeof other, "auth/nkey-other.nk"));
    snprintf(config, sizeof config, "authorization { users = [ { nkey: %s } ] }", pub);
    nt_server *s = start_server(config);
    NT_CHECK(s != NULL);

    static conformance_signer good, stranger, failing;
    memset(&good, 0, sizeof good);
    memset(&stranger, 0, sizeof stranger);
    memset(&failing, 0, sizeof failing);
    good.pub = stranger.pub = failing.pub = pub;
    good.seed = failing.seed = seed;
    stranger.seed = other;
    failing.fail = true;

    natsio_options *o = options_for_url(nt_server_url(s), 2000);
    NT_CHECK(o != NULL);
    EXPECT_OK(natsio_options_set_reconnect_wait(o, 20, 100));
    EXPECT_OK(natsio_options_set_authenticator(o, conformance_sign, &good, NULL));
    natsio_client *c = connect_with(o);
    NT_CHECK(c != NULL);
    NT_CHECK_INT_EQ(atomic_load(&good.calls), 1);
    NT_CHECK(good.nonces[0][0] != '\0');
    EXPECT_OK(natsio_client_force_reconnect(c));
    NT_CHECK(nt_wait_until(signed_twice, &good, 10000));
    NT_CHECK(nt_wait_until(client_connected, c, 10000));
    EXPECT_OK(natsio_client_flush(c, 2000));
    NT_CHECK_MSG(good.nonces[1][0] != '\0' && strcmp(good.nonces[0], good.nonces[1]) != 0, "nonces %s, %s",
                 good.nonces[0], good.nonces[1]);

    natsio_client *never = SENTINEL;
    natsio_options *wrong = options_for_url(nt_server_url(s), 2000);
    NT_CHECK(wrong != NULL);
    EXPECT_OK(natsio_options_set_allow_reconnect(wrong, false));
    EXPECT_OK(natsio_options_set_authenticator(wrong, conformance_sign, &stranger, NULL));
    EXPECT_FAILS(NATSIO_ERR_AUTHORIZATION, natsio_client_connect(wrong, &never));
    natsio_options *refusing = options_for_url(nt_server_url(s), 2000);
    NT_CHECK(refusing != NULL);
    EXPECT_OK(natsio_options_set_authenticator(refusing, conformance_sign, &failing, NULL));
    EXPECT_FAILS_NAMING(NATSIO_ERR_CONFIG, "authenticator callback", natsio_client_connect(refusing, &never));
    NT_CHECK(never == SENTINEL);
}

static void test_behaviour_endpoint_pending_limits(void) {
    NT_CHECK(table_case("behaviour", "endpoint_pending_limits") != NULL);
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    char subj[128], reply[160];
    case_subject(subj, sizeof subj, "limits");
    snprintf(reply, sizeof reply, "%s.reply", subj);
    natsio_service *svc = NULL;
    EXPECT_OK(natsio_client_add_service(c, "{\"name\":\"conflimits\",\"version\":\"1.0.0\"}", &svc));
    nt_cleanup(service_free_cb, svc);
    atomic_store(&g_svc_errors.calls, 0);
    EXPECT_OK(natsio_service_set_error_callback(svc, svc_on_error, NULL, NULL));
    char config[256];
    snprintf(config, sizeof config,
             "{\"name\":\"held\",\"subject\":\"%s\",\"pending_msgs_limit\":2,\"pending_bytes_limit\":-1}", subj);
    natsio_endpoint *ep = NULL;
    EXPECT_OK(natsio_service_add_endpoint(svc, NULL, config, &ep));
    nt_cleanup(endpoint_free_cb, ep);
    EXPECT_OK(natsio_client_flush(c, 5000));
    NT_CHECK(publish_requests(c, subj, reply, 0, 5));
    EXPECT_OK(natsio_client_flush(c, 5000));
    endpoint_counts counts = {ep, 3, 2};
    NT_CHECK(nt_wait_until(endpoint_counts_are, &counts, 5000));
    NT_CHECK(wait_at_least(&g_svc_errors.calls, 1, 5000));
    NT_CHECK_STR_EQ(g_svc_errors.endpoint, "held");
    NT_CHECK_INT_EQ(atomic_load(&g_svc_errors.code), 0);
    NT_CHECK_MSG(contains_ci(g_svc_errors.description, "slow consumer"), "%s", g_svc_errors.description);
    char *json = NULL;
    int64_t n = 0;
    EXPECT_OK(natsio_endpoint_stats_json(ep, &json));
    NT_CHECK_MSG(json_int(json, "num_errors", &n) && n >= 1 && strstr(json, "\"last_error\":\"slow consumer"), "%s",
                 json);
    natsio_string_free(json);
    NT_CHECK(next_requests_in_order(ep, 2));
}

static void test_behaviour_kv_bind_subjects(void) {
    NT_CHECK(table_case("behaviour", "kv_bind_subjects") != NULL);
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "KV_CONF_PLAIN", "conf.plain.>"));
    natsio_kv *kv = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_BUCKET_NOT_FOUND, natsio_js_kv_bind(js, "CONF_PLAIN", &kv));
    NT_CHECK(kv == SENTINEL);
    NT_CHECK(create_stream(js, "KV_CONF_WIDE", "$KV.CONF_WIDE.>"));
    kv = NULL;
    EXPECT_OK(natsio_js_kv_bind(js, "CONF_WIDE", &kv));
    NT_CHECK(kv != NULL);
    natsio_kv_free(kv);
    EXPECT_OK(natsio_js_stream_delete(js, "KV_CONF_PLAIN"));
    EXPECT_OK(natsio_js_stream_delete(js, "KV_CONF_WIDE"));
}

static void test_behaviour_kv_codec(void) {
    NT_CHECK(table_case("behaviour", "kv_codec") != NULL);
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_kv *plain = create_bucket(js, "{\"bucket\":\"CONF_CODEC\",\"storage\":\"memory\"}");
    NT_CHECK(plain != NULL);
    natsio_kv_key_codec *key = NULL;
    natsio_kv_value_codec *value = NULL;
    EXPECT_OK(natsio_kv_key_codec_new(NATSIO_KV_KEY_CODEC_BASE64, &key));
    EXPECT_OK(natsio_kv_value_codec_zlib(-1, &value));
    natsio_kv *kv = NULL;
    EXPECT_OK(natsio_kv_with_codecs(plain, key, value, &kv));
    natsio_kv_key_codec_free(key);
    natsio_kv_value_codec_free(value);
    uint64_t rev = 0;
    EXPECT_OK(natsio_kv_put(kv, "a.b c", "v", 1, NULL, &rev));
    natsio_kv_entry *e = NULL;
    EXPECT_OK(natsio_kv_get(plain, "YQ==.YiBj", &e));
    NT_CHECK(e && natsio_kv_entry_value_len(e) > 0 && (unsigned char)natsio_kv_entry_value(e)[0] == 0x78);
    natsio_kv_entry_free(e);
    e = NULL;
    EXPECT_OK(natsio_kv_get(kv, "a.b c", &e));
    NT_CHECK(e && span_eq(natsio_kv_entry_value(e), natsio_kv_entry_value_len(e), "v"));
    NT_CHECK_STR_EQ(e ? natsio_kv_entry_key(e) : "", "a.b c");
    natsio_kv_entry_free(e);
    natsio_string_list *keys = NULL;
    EXPECT_OK(natsio_kv_keys(kv, &keys));
    NT_CHECK(keys && natsio_string_list_count(keys) == 1 && strcmp(natsio_string_list_get(keys, 0), "a.b c") == 0);
    natsio_string_list_free(keys);
    natsio_kv_free(kv);
}

/* ---- every line has a C check ----------------------------------------------- */

/* The data, default and behaviour lines this program checks, and those
 * that have no C form (a C callback cannot throw). */
static const char *const C_CHECKS[] = {"api_error",  "key_revision",           "default_url", "delete_msg_erase",
                                       "sub_pending_limit_zero", "flush_bound", "last_by_wildcard", "fetch_refused",
                                       "consume_budget", "iterator_closed", "purge_deletes_zero",
                                       "sync_publish", "ack_bodies", "service_handler_failure", "kv_bind_subjects",
                                       "kv_codec", "prioritized_pull", "endpoint_pending_limits", "kv_mirror",
                                       "server_pool", "reconnect_delay_callback",
                                       "authenticator_callback"};
static const char *const NOT_IN_C[] = {"callback_error"};

static bool listed(const char *const *names, size_t count, const char *name) {
    for (size_t i = 0; i < count; i++)
        if (strcmp(names[i], name) == 0) return true;
    return false;
}

static void test_every_line_has_a_c_check(void) {
    if (!load_table()) return;
    for (int i = 0; i < g_nlines; i++) {
        const table_line *l = &g_lines[i];
        const char *kind = l->fields[0];
        if (strcmp(kind, "error") == 0) continue; /* test_error_tree */
        if (strcmp(kind, "facade") == 0) {        /* Go's and Node's facades only */
            NT_CHECK_MSG(l->nfields >= 3 && (strcmp(l->fields[1], "go") == 0 || strcmp(l->fields[1], "node") == 0),
                         "line %d: a facade line names go or node, then the case", l->line_no);
            continue;
        }
        NT_CHECK_MSG(strcmp(kind, "data") == 0 || strcmp(kind, "default") == 0 || strcmp(kind, "behaviour") == 0,
                     "line %d: unknown kind \"%s\"", l->line_no, kind);
        NT_CHECK_MSG(l->nfields >= 2 && (listed(C_CHECKS, NT_COUNT(C_CHECKS), l->fields[1]) ||
                                         listed(NOT_IN_C, NT_COUNT(NOT_IN_C), l->fields[1])),
                     "line %d: \"%s %s\" has no C check", l->line_no, kind, l->nfields >= 2 ? l->fields[1] : "");
    }
}

int main(int argc, char **argv) {
    static const nt_case cases[] = {
        NT_CASE(test_error_tree),
        NT_CASE(test_data_api_error),
        NT_CASE(test_data_key_revision),
        NT_CASE(test_default_url),
        NT_CASE(test_default_delete_msg_erase),
        NT_CASE(test_default_sub_pending_limit_zero),
        NT_CASE(test_behaviour_flush_bound),
        NT_CASE(test_behaviour_last_by_wildcard),
        NT_CASE(test_behaviour_fetch_refused),
        NT_CASE(test_behaviour_consume_budget),
        NT_CASE(test_behaviour_iterator_closed),
        NT_CASE(test_behaviour_purge_deletes_zero),
        NT_CASE(test_behaviour_sync_publish),
        NT_CASE(test_behaviour_ack_bodies),
        NT_CASE(test_behaviour_service_handler_failure),
        NT_CASE(test_behaviour_kv_bind_subjects),
        NT_CASE(test_behaviour_kv_codec),
        NT_CASE(test_behaviour_prioritized_pull),
        NT_CASE(test_behaviour_endpoint_pending_limits),
        NT_CASE(test_behaviour_kv_mirror),
        NT_CASE(test_behaviour_server_pool),
        NT_CASE(test_behaviour_reconnect_delay_callback),
        NT_CASE(test_behaviour_authenticator_callback),
        NT_CASE(test_every_line_has_a_c_check),
    };
    return run_cases_with_shared_server(argc, argv, "conftest", cases, NT_COUNT(cases));
}
