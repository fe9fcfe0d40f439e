/*
 * Core publish/subscribe through the C ABI, against a real nats-server:
 * payloads, wildcards, queue groups, headers, message accessors, options
 * (echo, inbox prefix), counters, push (callback) mode with its final call,
 * stop, unsubscribe_after, drain, flush.
 *
 * One server for the whole program; every case uses subjects under
 * "pubsub.<case name>." so cases never see each other's traffic.
 */
#define _POSIX_C_SOURCE 200809L

#include "harness.h"
#include "util.h"

#include <natsio_sys.h> /* the publish ring, publish_n, message fields, batch callbacks */

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------ */

static natsio_status publish_str(natsio_client *c, const char *subject, const char *text) {
    return natsio_client_publish(c, subject, text, strlen(text));
}

/* Publishes "0".."n-1" as decimal text. */
static natsio_status publish_numbered(natsio_client *c, const char *subject, int n) {
    for (int i = 0; i < n; i++) {
        char num[16];
        snprintf(num, sizeof num, "%d", i);
        natsio_status st = publish_str(c, subject, num);
        if (st != NATSIO_OK) return st;
    }
    return NATSIO_OK;
}

static int msg_number(const natsio_msg *m) { return atoi(natsio_msg_data(m)); }

/* Polls the sub's stats until pending_msgs == n. */
static bool wait_pending(natsio_sub *s, uint64_t n, int64_t timeout_ms) {
    int64_t deadline = nt_now_ms() + timeout_ms;
    for (;;) {
        natsio_iter_stats st;
        if (natsio_sub_get_stats(s, &st) == NATSIO_OK && st.pending_items == n) return true;
        if (nt_now_ms() >= deadline) return false;
        nt_sleep_ms(2);
    }
}

/* ---- payloads and accessors --------------------------------------------- */

static void test_roundtrip_binary_payload(void) {
    char subj[128];
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    natsio_sub *s = subscribe(c, case_subject(subj, sizeof subj, "data"), NULL);
    NT_CHECK(s != NULL);

    static const char payload[] = {'a', '\0', 'b', (char)0xff, '\n'};
    NT_CHECK_INT_EQ(natsio_client_publish(c, subj, payload, sizeof payload), NATSIO_OK);

    natsio_msg *m = NULL;
    NT_CHECK_INT_EQ(natsio_sub_next(s, 2000, &m), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_msg_data_len(m), sizeof payload);
    NT_CHECK_MEM_EQ(natsio_msg_data(m), natsio_msg_data_len(m), payload, sizeof payload);
    /* The payload is followed by a NUL so text can be printed directly. */
    NT_CHECK_INT_EQ(natsio_msg_data(m)[sizeof payload], '\0');
    NT_CHECK_STR_EQ(natsio_msg_subject(m), subj);
    NT_CHECK(natsio_msg_reply(m) == NULL);
    NT_CHECK(natsio_msg_headers(m) == NULL);
    NT_CHECK_INT_EQ(natsio_msg_status(m), 0);
    NT_CHECK(natsio_sub_sid(s) > 0);
    NT_CHECK_INT_EQ(natsio_msg_sid(m), natsio_sub_sid(s));
    natsio_msg_free(m);
}

/* natsio_client_publish_n: the subject by pointer and length, as a
 * binding holds it; what follows the length is not part of it. */
static void test_publish_with_subject_length(void) {
    char subj[128];
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    natsio_sub *s = subscribe(c, case_subject(subj, sizeof subj, "sized"), NULL);
    NT_CHECK(s != NULL);
    char longer[160];
    snprintf(longer, sizeof longer, "%s.more", subj);
    NT_CHECK_INT_EQ(natsio_client_publish_n(c, longer, strlen(subj), "n", 1), NATSIO_OK);
    natsio_msg *m = NULL;
    NT_CHECK_INT_EQ(natsio_sub_next(s, 2000, &m), NATSIO_OK);
    NT_CHECK_STR_EQ(natsio_msg_subject(m), subj);
    NT_CHECK_MEM_EQ(natsio_msg_data(m), natsio_msg_data_len(m), "n", 1);
    natsio_msg_free(m);

    /* Refused, nothing sent: NULL client or subject, an empty subject, a
     * NUL byte, invalid UTF-8, a wildcard. */
    NT_CHECK_INT_EQ(natsio_client_publish_n(NULL, subj, strlen(subj), "x", 1), NATSIO_ERR_NULL_ARGUMENT);
    NT_CHECK_INT_EQ(natsio_client_publish_n(c, NULL, 3, "x", 1), NATSIO_ERR_NULL_ARGUMENT);
    NT_CHECK_INT_EQ(natsio_client_publish_n(c, NULL, 0, "x", 1), NATSIO_ERR_BAD_SUBJECT);
    NT_CHECK_INT_EQ(natsio_client_publish_n(c, "a\0b", 3, "x", 1), NATSIO_ERR_INVALID_ARGUMENT);
    NT_CHECK_INT_EQ(natsio_client_publish_n(c, "a.\xff", 3, "x", 1), NATSIO_ERR_INVALID_UTF8);
    NT_CHECK_INT_EQ(natsio_client_publish_n(c, "a.*", 3, "x", 1), NATSIO_ERR_BAD_SUBJECT);
    NT_CHECK_INT_EQ(natsio_client_publish_n(c, subj, strlen(subj), NULL, 1), NATSIO_ERR_NULL_ARGUMENT);
    NT_CHECK_INT_EQ(natsio_sub_next(s, 200, &m), NATSIO_ERR_TIMEOUT);

    NT_CHECK_INT_EQ(natsio_client_close(c), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_publish_n(c, subj, strlen(subj), "x", 1), NATSIO_ERR_CONNECTION_CLOSED);
}

static void test_empty_payload(void) {
    char subj[128];
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    natsio_sub *s = subscribe(c, case_subject(subj, sizeof subj, "empty"), NULL);
    NT_CHECK(s != NULL);

    NT_CHECK_INT_EQ(natsio_client_publish(c, subj, NULL, 0), NATSIO_OK);
    natsio_msg *m = NULL;
    NT_CHECK_INT_EQ(natsio_sub_next(s, 2000, &m), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_msg_data_len(m), 0);
    NT_CHECK(natsio_msg_data(m) != NULL);
    NT_CHECK_INT_EQ(natsio_msg_data(m)[0], '\0');
    NT_CHECK_STR_EQ(natsio_msg_subject(m), subj);
    natsio_msg_free(m);
}

static void test_subscription_accessors(void) {
    char subj[128];
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    natsio_sub *plain = subscribe(c, case_subject(subj, sizeof subj, "plain"), NULL);
    NT_CHECK(plain != NULL);
    NT_CHECK_STR_EQ(natsio_sub_subject(plain), subj);
    NT_CHECK(natsio_sub_queue(plain) == NULL);
    NT_CHECK(!natsio_sub_is_closed(plain));

    natsio_sub *queued = subscribe(c, case_subject(subj, sizeof subj, "queued"), "workers");
    NT_CHECK(queued != NULL);
    NT_CHECK_STR_EQ(natsio_sub_queue(queued), "workers");
    NT_CHECK(natsio_sub_sid(queued) != natsio_sub_sid(plain));

    NT_CHECK(natsio_sub_subject(NULL) == NULL);
    NT_CHECK_INT_EQ(natsio_sub_sid(NULL), 0);
    NT_CHECK(natsio_sub_is_closed(NULL));
    NT_CHECK(natsio_msg_subject(NULL) == NULL);
    NT_CHECK_INT_EQ(natsio_msg_data_len(NULL), 0);
    NT_CHECK_INT_EQ(natsio_msg_sid(NULL), 0);
}

/* ---- routing ------------------------------------------------------------- */

/* Reads messages until a `quiet_ms` gap; returns how many arrived and stores
 * their subjects' last tokens (concatenated with ',') in `tokens`. */
static int drain_subjects(natsio_sub *s, int64_t quiet_ms, char *tokens, size_t cap) {
    int n = 0;
    tokens[0] = '\0';
    natsio_msg *m = NULL;
    while (natsio_sub_next(s, quiet_ms, &m) == NATSIO_OK) {
        const char *subject = natsio_msg_subject(m);
        const char *case_part = strstr(subject, nt_current_case());
        const char *rest = case_part ? case_part + strlen(nt_current_case()) + 1 : subject;
        size_t used = strlen(tokens);
        snprintf(tokens + used, cap - used, "%s%s", n ? "," : "", rest);
        natsio_msg_free(m);
        n++;
    }
    return n;
}

static void test_wildcards(void) {
    char star[128], full[128], subj[128];
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    natsio_sub *s_star = subscribe(c, case_subject(star, sizeof star, "*.x"), NULL);
    natsio_sub *s_full = subscribe(c, case_subject(full, sizeof full, ">"), NULL);
    NT_CHECK(s_star != NULL && s_full != NULL);

    NT_CHECK_INT_EQ(publish_str(c, case_subject(subj, sizeof subj, "a.x"), "1"), NATSIO_OK);
    NT_CHECK_INT_EQ(publish_str(c, case_subject(subj, sizeof subj, "a.b.x"), "2"), NATSIO_OK);
    NT_CHECK_INT_EQ(publish_str(c, case_subject(subj, sizeof subj, "b.x"), "3"), NATSIO_OK);
    NT_CHECK_INT_EQ(publish_str(c, case_subject(subj, sizeof subj, "b.y"), "4"), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_flush(c, 2000), NATSIO_OK);

    char got[256];
    /* `*` matches exactly one token. */
    NT_CHECK_INT_EQ(drain_subjects(s_star, 300, got, sizeof got), 2);
    NT_CHECK_STR_EQ(got, "a.x,b.x");
    /* `>` matches one or more tokens. */
    NT_CHECK_INT_EQ(drain_subjects(s_full, 300, got, sizeof got), 4);
    NT_CHECK_STR_EQ(got, "a.x,a.b.x,b.x,b.y");
}

static void test_queue_group_splits_messages(void) {
    enum { N = 100 };
    char subj[128];
    natsio_client *pub = connect_client();
    natsio_client *w1 = connect_client();
    natsio_client *w2 = connect_client();
    NT_CHECK(pub && w1 && w2);
    case_subject(subj, sizeof subj, "jobs");
    natsio_sub *s1 = subscribe(w1, subj, "pool");
    natsio_sub *s2 = subscribe(w2, subj, "pool");
    NT_CHECK(s1 && s2);
    NT_CHECK_INT_EQ(natsio_client_flush(w1, 2000), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_flush(w2, 2000), NATSIO_OK);

    NT_CHECK_INT_EQ(publish_numbered(pub, subj, N), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_flush(pub, 2000), NATSIO_OK);

    int seen[N] = {0};
    int count[2] = {0, 0};
    natsio_sub *subs[2] = {s1, s2};
    for (int i = 0; i < 2; i++) {
        natsio_msg *m = NULL;
        while (natsio_sub_next(subs[i], 300, &m) == NATSIO_OK) {
            int k = msg_number(m);
            natsio_msg_free(m);
            NT_CHECK(k >= 0 && k < N);
            seen[k]++;
            count[i]++;
        }
    }
    NT_CHECK_INT_EQ(count[0] + count[1], N);
    for (int k = 0; k < N; k++) NT_CHECK_MSG(seen[k] == 1, "message %d seen %d times", k, seen[k]);
    /* Both members got work (each message goes to one of two at random). */
    NT_CHECK(count[0] > 0 && count[1] > 0);
}

static void test_reply_subject_passthrough(void) {
    char subj[128], reply[128];
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    natsio_sub *s = subscribe(c, case_subject(subj, sizeof subj, "in"), NULL);
    NT_CHECK(s != NULL);
    case_subject(reply, sizeof reply, "answer.here");
    NT_CHECK_INT_EQ(natsio_client_publish_with(c, subj, reply, NULL, "q", 1), NATSIO_OK);
    natsio_msg *m = NULL;
    NT_CHECK_INT_EQ(natsio_sub_next(s, 2000, &m), NATSIO_OK);
    NT_CHECK_STR_EQ(natsio_msg_reply(m), reply);
    NT_CHECK_MEM_EQ(natsio_msg_data(m), natsio_msg_data_len(m), "q", 1);
    natsio_msg_free(m);
}

/* ---- headers ------------------------------------------------------------- */

static void test_headers_map_api(void) {
    natsio_headers *h = NULL;
    NT_CHECK_INT_EQ(natsio_headers_new(&h), NATSIO_OK);
    nt_cleanup(headers_free_cb, h);
    NT_CHECK_INT_EQ(natsio_headers_len(h), 0);

    NT_CHECK_INT_EQ(natsio_headers_add(h, "X-Tag", "red"), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_headers_add(h, "X-Tag", "blue"), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_headers_set(h, "Content-Type", "text/plain"), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_headers_set(h, "Content-Type", "application/json"), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_headers_len(h), 3);
    NT_CHECK_INT_EQ(natsio_headers_count(h, "X-Tag"), 2);
    NT_CHECK_INT_EQ(natsio_headers_count(h, "x-tag"), 0); /* exact-match lookup */
    NT_CHECK_INT_EQ(natsio_headers_count(h, "Content-Type"), 1);

    const char *v = NULL;
    NT_CHECK_INT_EQ(natsio_headers_get(h, "Content-Type", &v), NATSIO_OK);
    NT_CHECK_STR_EQ(v, "application/json");
    NT_CHECK_INT_EQ(natsio_headers_get_nth(h, "X-Tag", 1, &v), NATSIO_OK);
    NT_CHECK_STR_EQ(v, "blue");
    v = "untouched";
    NT_CHECK_INT_EQ(natsio_headers_get_nth(h, "X-Tag", 2, &v), NATSIO_ERR_NOT_FOUND);
    NT_CHECK_INT_EQ(natsio_headers_get(h, "Missing", &v), NATSIO_ERR_NOT_FOUND);
    NT_CHECK_STR_EQ(v, "untouched"); /* outputs untouched on failure */

    const char *name = NULL;
    NT_CHECK_INT_EQ(natsio_headers_entry(h, 0, &name, &v), NATSIO_OK);
    NT_CHECK_STR_EQ(name, "X-Tag");
    NT_CHECK_STR_EQ(v, "red");
    NT_CHECK_INT_EQ(natsio_headers_entry(h, 3, &name, &v), NATSIO_ERR_NOT_FOUND);

    natsio_headers *copy = NULL;
    NT_CHECK_INT_EQ(natsio_headers_clone(h, &copy), NATSIO_OK);
    nt_cleanup(headers_free_cb, copy);
    NT_CHECK_INT_EQ(natsio_headers_delete(h, "X-Tag"), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_headers_delete(h, "X-Tag"), NATSIO_ERR_NOT_FOUND);
    NT_CHECK_INT_EQ(natsio_headers_count(h, "X-Tag"), 0);
    NT_CHECK_INT_EQ(natsio_headers_len(h), 1);
    /* The clone is independent of the original. */
    NT_CHECK_INT_EQ(natsio_headers_count(copy, "X-Tag"), 2);
    NT_CHECK_INT_EQ(natsio_headers_len(copy), 3);
    /* set replaces every value. */
    NT_CHECK_INT_EQ(natsio_headers_set(copy, "X-Tag", "green"), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_headers_count(copy, "X-Tag"), 1);
    NT_CHECK_INT_EQ(natsio_headers_get(copy, "X-Tag", &v), NATSIO_OK);
    NT_CHECK_STR_EQ(v, "green");

    NT_CHECK_INT_EQ(natsio_headers_len(NULL), 0);
    NT_CHECK_INT_EQ(natsio_headers_count(NULL, "X-Tag"), 0);
}

static void test_headers_roundtrip(void) {
    char subj[128];
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    natsio_sub *s = subscribe(c, case_subject(subj, sizeof subj, "h"), NULL);
    NT_CHECK(s != NULL);

    natsio_headers *h = NULL;
    NT_CHECK_INT_EQ(natsio_headers_new(&h), NATSIO_OK);
    nt_cleanup(headers_free_cb, h);
    NT_CHECK_INT_EQ(natsio_headers_add(h, "Content-Type", "application/json"), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_headers_add(h, "X-Tag", "red"), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_headers_add(h, "X-Tag", "blue"), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_headers_add(h, "x-tag", "lower"), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_publish_with(c, subj, NULL, h, "{}", 2), NATSIO_OK);

    natsio_msg *m = NULL;
    NT_CHECK_INT_EQ(natsio_sub_next(s, 2000, &m), NATSIO_OK);
    const natsio_headers *got = natsio_msg_headers(m);
    NT_CHECK(got != NULL);
    NT_CHECK_MEM_EQ(natsio_msg_data(m), natsio_msg_data_len(m), "{}", 2);
    NT_CHECK_INT_EQ(natsio_msg_status(m), 0);
    NT_CHECK_INT_EQ(natsio_headers_len(got), 4);
    NT_CHECK_INT_EQ(natsio_headers_count(got, "X-Tag"), 2);
    const char *v = NULL;
    NT_CHECK_INT_EQ(natsio_headers_get(got, "Content-Type", &v), NATSIO_OK);
    NT_CHECK_STR_EQ(v, "application/json");
    NT_CHECK_INT_EQ(natsio_headers_get_nth(got, "X-Tag", 0, &v), NATSIO_OK);
    NT_CHECK_STR_EQ(v, "red");
    NT_CHECK_INT_EQ(natsio_headers_get_nth(got, "X-Tag", 1, &v), NATSIO_OK);
    NT_CHECK_STR_EQ(v, "blue");
    /* Case is preserved: "x-tag" is a different name. */
    NT_CHECK_INT_EQ(natsio_headers_get(got, "x-tag", &v), NATSIO_OK);
    NT_CHECK_STR_EQ(v, "lower");
    NT_CHECK_INT_EQ(natsio_headers_get(got, "CONTENT-TYPE", &v), NATSIO_ERR_NOT_FOUND);

    /* Wire order is kept. */
    const char *expected[4][2] = {
        {"Content-Type", "application/json"}, {"X-Tag", "red"}, {"X-Tag", "blue"}, {"x-tag", "lower"}};
    for (size_t i = 0; i < 4; i++) {
        const char *name = NULL;
        NT_CHECK_INT_EQ(natsio_headers_entry(got, i, &name, &v), NATSIO_OK);
        NT_CHECK_STR_EQ(name, expected[i][0]);
        NT_CHECK_STR_EQ(v, expected[i][1]);
    }

    /* A received map can be cloned, edited and sent on. */
    natsio_headers *edited = NULL;
    NT_CHECK_INT_EQ(natsio_headers_clone(got, &edited), NATSIO_OK);
    natsio_msg_free(m);
    nt_cleanup(headers_free_cb, edited);
    NT_CHECK_INT_EQ(natsio_headers_delete(edited, "X-Tag"), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_publish_with(c, subj, NULL, edited, NULL, 0), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_sub_next(s, 2000, &m), NATSIO_OK);
    got = natsio_msg_headers(m);
    NT_CHECK(got != NULL);
    NT_CHECK_INT_EQ(natsio_headers_len(got), 2);
    NT_CHECK_INT_EQ(natsio_headers_count(got, "X-Tag"), 0);
    NT_CHECK_INT_EQ(natsio_headers_count(got, "x-tag"), 1);
    NT_CHECK_INT_EQ(natsio_msg_data_len(m), 0);
    natsio_msg_free(m);
}

/* natsio_msg_get_fields gives, in one call, what the per-field accessors
 * give: with and without reply and headers, a payload holding NULs, a
 * multi-byte subject; NULL arguments are refused and touch nothing. */
static void test_msg_get_fields(void) {
    char subj[128];
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    case_subject(subj, sizeof subj, "fields.\xc3\xa9t\xc3\xa9");
    natsio_sub *s = subscribe_and_flush(c, subj);
    NT_CHECK(s != NULL);
    natsio_headers *h = NULL;
    NT_CHECK_INT_EQ(natsio_headers_new(&h), NATSIO_OK);
    nt_cleanup(headers_free_cb, h);
    NT_CHECK_INT_EQ(natsio_headers_add(h, "X-A", "1"), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_headers_add(h, "X-B", "2"), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_publish_with(c, subj, "the.reply", h, "a\0b", 3), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_publish(c, subj, "plain", 5), NATSIO_OK);

    for (int i = 0; i < 2; i++) {
        natsio_msg *m = NULL;
        NT_CHECK_INT_EQ(natsio_sub_next(s, 2000, &m), NATSIO_OK);
        nt_cleanup(msg_free_cb, m);
        natsio_msg_fields f;
        memset(&f, 0xab, sizeof f);
        NT_CHECK_INT_EQ(natsio_msg_get_fields(m, &f), NATSIO_OK);
        NT_CHECK(f.subject == natsio_msg_subject(m));
        NT_CHECK_INT_EQ(f.subject_len, strlen(subj));
        NT_CHECK_STR_EQ(f.subject, subj);
        NT_CHECK(f.data == natsio_msg_data(m));
        NT_CHECK_INT_EQ(f.data_len, natsio_msg_data_len(m));
        NT_CHECK_INT_EQ(f.data[f.data_len], '\0');
        NT_CHECK(f.headers == natsio_msg_headers(m));
        NT_CHECK_INT_EQ(f.status, natsio_msg_status(m));
        NT_CHECK_INT_EQ(f.sid, natsio_msg_sid(m));
        NT_CHECK_INT_EQ(f.sid, natsio_sub_sid(s));
        if (i == 0) {
            NT_CHECK_MEM_EQ(f.data, f.data_len, "a\0b", 3);
            NT_CHECK(f.reply == natsio_msg_reply(m));
            NT_CHECK_STR_EQ(f.reply, "the.reply");
            NT_CHECK_INT_EQ(f.reply_len, 9);
            NT_CHECK(f.headers != NULL);
            NT_CHECK_INT_EQ(f.header_count, 2);
        } else {
            NT_CHECK_MEM_EQ(f.data, f.data_len, "plain", 5);
            NT_CHECK(f.reply == NULL);
            NT_CHECK_INT_EQ(f.reply_len, 0);
            NT_CHECK(f.headers == NULL);
            NT_CHECK_INT_EQ(f.header_count, 0);
        }
        natsio_msg_fields untouched;
        memset(&untouched, 0x5a, sizeof untouched);
        NT_CHECK_INT_EQ(natsio_msg_get_fields(NULL, &untouched), NATSIO_ERR_NULL_ARGUMENT);
        NT_CHECK_INT_EQ(natsio_msg_get_fields(m, NULL), NATSIO_ERR_NULL_ARGUMENT);
        unsigned char pattern[sizeof untouched];
        memset(pattern, 0x5a, sizeof pattern);
        NT_CHECK(memcmp(&untouched, pattern, sizeof pattern) == 0);
    }
}

/* ---- options: echo, inbox prefix ----------------------------------------- */

static void test_echo_off_skips_own_messages(void) {
    char subj[128];
    natsio_options *o = options_for_url(nt_server_url(g_server), 0);
    NT_CHECK(o != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_echo(o, false), NATSIO_OK);
    natsio_client *quiet = connect_with(o);
    natsio_client *other = connect_client();
    NT_CHECK(quiet && other);
    case_subject(subj, sizeof subj, "echo");
    natsio_sub *own = subscribe(quiet, subj, NULL);
    natsio_sub *theirs = subscribe(other, subj, NULL);
    NT_CHECK(own && theirs);
    NT_CHECK_INT_EQ(natsio_client_flush(other, 2000), NATSIO_OK);

    NT_CHECK_INT_EQ(publish_str(quiet, subj, "mine"), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_flush(quiet, 2000), NATSIO_OK);
    natsio_msg *m = NULL;
    /* The message really went out: the other client gets it... */
    NT_CHECK_INT_EQ(natsio_sub_next(theirs, 2000, &m), NATSIO_OK);
    natsio_msg_free(m);
    /* ...but not its publisher. */
    NT_CHECK_INT_EQ(natsio_sub_next(own, 300, &m), NATSIO_ERR_TIMEOUT);
    /* Messages from others still reach it. */
    NT_CHECK_INT_EQ(publish_str(other, subj, "yours"), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_sub_next(own, 2000, &m), NATSIO_OK);
    NT_CHECK_MEM_EQ(natsio_msg_data(m), natsio_msg_data_len(m), "yours", 5);
    natsio_msg_free(m);
}

static void test_new_inbox_prefix(void) {
    natsio_client *plain = connect_client();
    NT_CHECK(plain != NULL);
    char *a = NULL, *b = NULL;
    NT_CHECK_INT_EQ(natsio_client_new_inbox(plain, &a), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_new_inbox(plain, &b), NATSIO_OK);
    bool default_prefix = strncmp(a, "_INBOX.", 7) == 0 && strlen(a) > 7;
    bool distinct = strcmp(a, b) != 0;
    natsio_string_free(a);
    natsio_string_free(b);
    NT_CHECK(default_prefix);
    NT_CHECK(distinct);

    natsio_options *o = options_for_url(nt_server_url(g_server), 0);
    NT_CHECK(o != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_inbox_prefix(o, "my.replies"), NATSIO_OK);
    natsio_client *custom = connect_with(o);
    NT_CHECK(custom != NULL);
    NT_CHECK_INT_EQ(natsio_client_new_inbox(custom, &a), NATSIO_OK);
    bool custom_prefix = strncmp(a, "my.replies.", 11) == 0 && strlen(a) > 11;
    natsio_string_free(a);
    NT_CHECK(custom_prefix);

    /* A request through the custom prefix still gets its reply. */
    char subj[128];
    natsio_sub *svc = subscribe(plain, case_subject(subj, sizeof subj, "svc"), NULL);
    NT_CHECK(svc != NULL);
    NT_CHECK_INT_EQ(natsio_client_flush(plain, 2000), NATSIO_OK);
    natsio_token *t = NULL;
    NT_CHECK_INT_EQ(natsio_client_request_async(custom, subj, NULL, "?", 1, 2000, &t), NATSIO_OK);
    natsio_msg *req = NULL;
    NT_CHECK_INT_EQ(natsio_sub_next(svc, 2000, &req), NATSIO_OK);
    bool reply_uses_prefix = natsio_msg_reply(req) && strncmp(natsio_msg_reply(req), "my.replies.", 11) == 0;
    natsio_status responded = natsio_msg_respond(req, "!", 1);
    natsio_msg_free(req);
    NT_CHECK(reply_uses_prefix);
    NT_CHECK_INT_EQ(responded, NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_token_wait(t, 2000), NATSIO_OK);
    natsio_status st = natsio_token_status(t);
    natsio_token_free(t);
    NT_CHECK_INT_EQ(st, NATSIO_OK);
}

/* ---- client state, info, counters ---------------------------------------- */

static void test_client_status_transitions(void) {
    natsio_client *c = NULL;
    NT_CHECK_INT_EQ(natsio_client_connect_url(nt_server_url(g_server), &c), NATSIO_OK);
    nt_cleanup(client_free_cb, c);
    NT_CHECK_INT_EQ(natsio_client_status(c), NATSIO_CONN_CONNECTED);
    NT_CHECK_INT_EQ(natsio_client_close(c), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_status(c), NATSIO_CONN_CLOSED);
    NT_CHECK_INT_EQ(natsio_client_status(NULL), NATSIO_CONN_CLOSED);
}

static void test_server_info_and_limits(void) {
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    char *json = NULL;
    NT_CHECK_INT_EQ(natsio_client_server_info(c, &json), NATSIO_OK);
    bool has_id = strstr(json, "\"server_id\"") != NULL;
    bool has_json_shape = json[0] == '{';
    natsio_string_free(json);
    NT_CHECK(has_id);
    NT_CHECK(has_json_shape);

    /* nats-server's default max_payload is 1 MiB. */
    NT_CHECK_INT_EQ(natsio_client_max_payload(c), 1048576);
    NT_CHECK_INT_EQ(natsio_client_max_payload(NULL), -1);

    char *url = NULL;
    NT_CHECK_INT_EQ(natsio_client_connected_url(c, &url), NATSIO_OK);
    /* The URL the client was given (ws:// or wss:// under NT_TRANSPORT). */
    bool same = strcmp(url, g_server_url) == 0;
    natsio_string_free(url);
    NT_CHECK(same);
}

static void test_client_stats_exact(void) {
    char subj[128];
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    struct natsio_client_stats st;
    NT_CHECK_INT_EQ(natsio_client_get_stats(c, &st), NATSIO_OK);
    NT_CHECK_INT_EQ(st.in_msgs, 0);
    NT_CHECK_INT_EQ(st.out_msgs, 0);

    natsio_sub *s = subscribe(c, case_subject(subj, sizeof subj, "count"), NULL);
    NT_CHECK(s != NULL);
    for (int i = 0; i < 3; i++) NT_CHECK_INT_EQ(publish_str(c, subj, "hello"), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_publish(c, subj, NULL, 0), NATSIO_OK);
    for (int i = 0; i < 4; i++) {
        natsio_msg *m = NULL;
        NT_CHECK_INT_EQ(natsio_sub_next(s, 2000, &m), NATSIO_OK);
        natsio_msg_free(m);
    }
    NT_CHECK_INT_EQ(natsio_client_get_stats(c, &st), NATSIO_OK);
    NT_CHECK_INT_EQ(st.out_msgs, 4);
    NT_CHECK_INT_EQ(st.out_bytes, 15);
    NT_CHECK_INT_EQ(st.in_msgs, 4);
    NT_CHECK_INT_EQ(st.in_bytes, 15);
    NT_CHECK_INT_EQ(st.reconnects, 0);
    NT_CHECK_INT_EQ(st.errors, 0);
}

/* ---- callback mode -------------------------------------------------------- */

static struct {
    atomic_long count;
    atomic_long in_flight;
    atomic_long max_in_flight;
    atomic_long out_of_order;
    atomic_long released;
    atomic_long sleep_ms;
    natsio_msg *kept;
    /* The final call (msg NULL): how many, its status, and messages that
     * came after it or a release that came before it. */
    atomic_long final_calls;
    atomic_long final_status;
    atomic_long after_final;
    atomic_long released_before_final;
} g_cb;

static void reset_cb_state(void) {
    atomic_store(&g_cb.count, 0);
    atomic_store(&g_cb.in_flight, 0);
    atomic_store(&g_cb.max_in_flight, 0);
    atomic_store(&g_cb.out_of_order, 0);
    atomic_store(&g_cb.released, 0);
    atomic_store(&g_cb.sleep_ms, 0);
    g_cb.kept = NULL;
    atomic_store(&g_cb.final_calls, 0);
    atomic_store(&g_cb.final_status, -1);
    atomic_store(&g_cb.after_final, 0);
    atomic_store(&g_cb.released_before_final, 0);
}

/* Records a callback's final call (msg NULL) or a message after it;
 * true when this call was the final one. */
static bool record_final(const natsio_msg *msg, natsio_status status) {
    if (atomic_load(&g_cb.final_calls) > 0) atomic_fetch_add(&g_cb.after_final, 1);
    if (msg != NULL) return false;
    if (atomic_load(&g_cb.released) > 0) atomic_fetch_add(&g_cb.released_before_final, 1);
    atomic_store(&g_cb.final_status, status);
    atomic_fetch_add(&g_cb.final_calls, 1);
    return true;
}

/* Exactly one final call, with `status`, last and before the release. */
static void check_final_call(natsio_status status) {
    NT_CHECK_INT_EQ(atomic_load(&g_cb.final_calls), 1);
    NT_CHECK_INT_EQ(atomic_load(&g_cb.final_status), status);
    NT_CHECK_INT_EQ(atomic_load(&g_cb.after_final), 0);
    NT_CHECK_INT_EQ(atomic_load(&g_cb.released_before_final), 0);
}

static void count_release(void *user_data) {
    (void)user_data;
    atomic_fetch_add(&g_cb.released, 1);
}

/* Checks order (payload i arrives as the i-th message) and that calls never
 * overlap; sleeps g_cb.sleep_ms to make overlap observable if it happened. */
static void ordered_cb(void *user_data, const natsio_msg *msg, natsio_status status) {
    (void)user_data;
    if (record_final(msg, status)) return;
    long now = atomic_fetch_add(&g_cb.in_flight, 1) + 1;
    long seen = atomic_load(&g_cb.max_in_flight);
    while (now > seen && !atomic_compare_exchange_weak(&g_cb.max_in_flight, &seen, now)) {
    }
    if (msg_number(msg) != atomic_load(&g_cb.count)) atomic_fetch_add(&g_cb.out_of_order, 1);
    nt_sleep_ms(atomic_load(&g_cb.sleep_ms));
    atomic_fetch_sub(&g_cb.in_flight, 1);
    atomic_fetch_add(&g_cb.count, 1);
}

/* A callback subscription running ordered_cb, released through
 * count_release; the caller frees it. */
static natsio_sub *subscribe_ordered(natsio_client *c, const char *subject) {
    natsio_sub *s = NULL;
    natsio_status st = subscribe_callback(c, subject, NULL, NULL, ordered_cb, NULL, count_release, &s);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "subscribe_callback %s: %s (%s)", subject, natsio_status_str(st),
                   natsio_last_error());
        return NULL;
    }
    return s;
}

static void test_callback_in_order_one_at_a_time(void) {
    enum { N = 40 };
    char subj[128];
    reset_cb_state();
    atomic_store(&g_cb.sleep_ms, 2);
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    natsio_sub *s = subscribe_ordered(c, case_subject(subj, sizeof subj, "cb"));
    NT_CHECK(s != NULL);
    NT_CHECK_INT_EQ(publish_numbered(c, subj, N), NATSIO_OK);
    NT_CHECK(wait_at_least(&g_cb.count, N, 5000));
    NT_CHECK_INT_EQ(atomic_load(&g_cb.max_in_flight), 1);
    NT_CHECK_INT_EQ(atomic_load(&g_cb.out_of_order), 0);

    /* A subscription in push mode cannot be iterated, nor given a second
     * callback. */
    natsio_msg *m = NULL;
    NT_CHECK_INT_EQ(natsio_sub_next(s, 100, &m), NATSIO_ERR_ILLEGAL_STATE);
    NT_CHECK(m == NULL);
    natsio_token *t = NULL;
    NT_CHECK_INT_EQ(natsio_sub_next_async(s, &t), NATSIO_ERR_ILLEGAL_STATE);
    NT_CHECK(t == NULL);
    NT_CHECK_INT_EQ(natsio_sub_set_callback(s, ordered_cb, NULL, count_release), NATSIO_ERR_ILLEGAL_STATE);
    NT_CHECK_INT_EQ(atomic_load(&g_cb.final_calls), 0);

    NT_CHECK_INT_EQ(atomic_load(&g_cb.released), 0);
    NT_CHECK_INT_EQ(natsio_sub_stop(s), NATSIO_OK);
    /* The final call (NATSIO_DONE: stopped) was made before stop returned. */
    check_final_call(NATSIO_DONE);
    natsio_sub_free(s);
    NT_CHECK_INT_EQ(atomic_load(&g_cb.released), 1);
    check_final_call(NATSIO_DONE);
    /* Nothing more arrives after free. */
    NT_CHECK_INT_EQ(publish_str(c, subj, "late"), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_flush(c, 2000), NATSIO_OK);
    nt_sleep_ms(100); /* an absence: nothing more comes within 100 ms */
    NT_CHECK_INT_EQ(atomic_load(&g_cb.count), N);
    NT_CHECK_INT_EQ(atomic_load(&g_cb.released), 1);
}

/* The batch callback: ordered_cb's checks for each message of a call,
 * plus the batch sizes seen. */
static atomic_long g_batch_calls, g_batch_max, g_batch_over;

static void ordered_batch_cb(void *user_data, const natsio_msg *const *msgs, size_t count, natsio_status status) {
    if (msgs == NULL) {
        if (count != 0) atomic_fetch_add(&g_batch_over, 1);
        ordered_cb(user_data, NULL, status);
        return;
    }
    atomic_fetch_add(&g_batch_calls, 1);
    long seen = atomic_load(&g_batch_max);
    while ((long)count > seen && !atomic_compare_exchange_weak(&g_batch_max, &seen, (long)count)) {
    }
    if (count == 0 || count > 8 || status != NATSIO_OK) atomic_fetch_add(&g_batch_over, 1);
    for (size_t i = 0; i < count; i++) ordered_cb(user_data, msgs[i], status);
}

/* Messages queued at once come in one call (up to max_batch), in order,
 * one call at a time; the end and the release as with the per-message
 * callback; bad arguments are refused. */
static void test_batch_callback(void) {
    enum { N = 400 };
    char subj[128];
    reset_cb_state();
    atomic_store(&g_batch_calls, 0);
    atomic_store(&g_batch_max, 0);
    atomic_store(&g_batch_over, 0);
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    natsio_sub *s = NULL;
    NT_CHECK_INT_EQ(natsio_client_subscribe(c, case_subject(subj, sizeof subj, "batch"), NULL, NULL, &s),
                    NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_sub_set_batch_callback(s, ordered_batch_cb, NULL, count_release, 0),
                    NATSIO_ERR_INVALID_ARGUMENT);
    NT_CHECK_INT_EQ(natsio_sub_set_batch_callback(s, NULL, NULL, count_release, 8), NATSIO_ERR_NULL_ARGUMENT);
    NT_CHECK_INT_EQ(natsio_sub_set_batch_callback(NULL, ordered_batch_cb, NULL, count_release, 8),
                    NATSIO_ERR_NULL_ARGUMENT);
    NT_CHECK_INT_EQ(atomic_load(&g_cb.released), 0);
    /* A backlog queued before the callback is set comes in batches. */
    NT_CHECK_INT_EQ(publish_numbered(c, subj, N), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_flush(c, 5000), NATSIO_OK);
    natsio_iter_stats st;
    int64_t deadline = nt_now_ms() + 5000;
    do {
        NT_CHECK_INT_EQ(natsio_sub_get_stats(s, &st), NATSIO_OK);
    } while (st.pending_items < N && nt_now_ms() < deadline && (nt_sleep_ms(5), 1));
    NT_CHECK_INT_EQ(st.pending_items, N);
    NT_CHECK_INT_EQ(natsio_sub_set_batch_callback(s, ordered_batch_cb, NULL, count_release, 8), NATSIO_OK);
    NT_CHECK(wait_at_least(&g_cb.count, N, 5000));
    NT_CHECK_INT_EQ(atomic_load(&g_cb.max_in_flight), 1);
    NT_CHECK_INT_EQ(atomic_load(&g_cb.out_of_order), 0);
    NT_CHECK_INT_EQ(atomic_load(&g_batch_over), 0);
    NT_CHECK_INT_EQ(atomic_load(&g_batch_max), 8);
    NT_CHECK_MSG(atomic_load(&g_batch_calls) >= N / 8 && atomic_load(&g_batch_calls) < N,
                 "%ld calls for %d messages", atomic_load(&g_batch_calls), N);
    NT_CHECK_INT_EQ(natsio_sub_set_batch_callback(s, ordered_batch_cb, NULL, count_release, 8),
                    NATSIO_ERR_ILLEGAL_STATE);
    NT_CHECK_INT_EQ(natsio_sub_set_callback(s, ordered_cb, NULL, count_release), NATSIO_ERR_ILLEGAL_STATE);
    NT_CHECK_INT_EQ(atomic_load(&g_cb.final_calls), 0);
    NT_CHECK(!natsio_sub_is_stopped(s));
    NT_CHECK_INT_EQ(natsio_sub_stop(s), NATSIO_OK);
    check_final_call(NATSIO_DONE);
    NT_CHECK(natsio_sub_is_stopped(s));
    natsio_sub_free(s);
    NT_CHECK_INT_EQ(atomic_load(&g_cb.released), 1);
    NT_CHECK_INT_EQ(atomic_load(&g_batch_over), 0);
    NT_CHECK(!natsio_sub_is_stopped(NULL));

    /* Finished normally (the auto-unsubscribe count reached): not stopped,
     * every message delivered. */
    reset_cb_state();
    natsio_sub *s2 = NULL;
    NT_CHECK_INT_EQ(natsio_client_subscribe(c, case_subject(subj, sizeof subj, "batch2"), NULL, NULL, &s2),
                    NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_sub_unsubscribe_after(s2, 5), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_sub_set_batch_callback(s2, ordered_batch_cb, NULL, count_release, 8), NATSIO_OK);
    NT_CHECK_INT_EQ(publish_numbered(c, subj, 9), NATSIO_OK);
    NT_CHECK(wait_at_least(&g_cb.final_calls, 1, 5000));
    check_final_call(NATSIO_DONE);
    NT_CHECK_INT_EQ(atomic_load(&g_cb.count), 5);
    NT_CHECK(!natsio_sub_is_stopped(s2));
    natsio_sub_free(s2);
    NT_CHECK_INT_EQ(atomic_load(&g_cb.released), 1);
}

static void test_release_once_on_free_without_unsubscribe(void) {
    char subj[128];
    reset_cb_state();
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    natsio_sub *s = subscribe_ordered(c, case_subject(subj, sizeof subj, "cb"));
    NT_CHECK(s != NULL);
    NT_CHECK_INT_EQ(publish_numbered(c, subj, 3), NATSIO_OK);
    NT_CHECK(wait_at_least(&g_cb.count, 3, 5000));
    NT_CHECK_INT_EQ(atomic_load(&g_cb.final_calls), 0);
    natsio_sub_free(s);
    NT_CHECK_INT_EQ(atomic_load(&g_cb.released), 1);
    /* free stopped it: the final call says NATSIO_DONE, before the release. */
    check_final_call(NATSIO_DONE);
    NT_CHECK_INT_EQ(atomic_load(&g_cb.count), 3);
}

static void clone_and_keep_cb(void *user_data, const natsio_msg *msg, natsio_status status) {
    (void)user_data;
    if (record_final(msg, status)) return;
    if (g_cb.kept == NULL) {
        natsio_msg *copy = NULL;
        if (natsio_msg_clone(msg, &copy) == NATSIO_OK) g_cb.kept = copy;
    }
    atomic_fetch_add(&g_cb.count, 1);
}

static void test_msg_clone_outlives_callback(void) {
    char subj[128];
    reset_cb_state();
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    natsio_sub *s = NULL;
    NT_CHECK_INT_EQ(subscribe_callback(c, case_subject(subj, sizeof subj, "keep"), NULL, NULL,
                                       clone_and_keep_cb, NULL, NULL, &s),
                    NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_publish_with(c, subj, "some.reply", NULL, "kept payload", 12),
                    NATSIO_OK);
    NT_CHECK(wait_at_least(&g_cb.count, 1, 5000));
    natsio_sub_free(s);
    NT_CHECK(g_cb.kept != NULL);
    nt_cleanup(msg_free_cb, g_cb.kept);
    /* Still readable after the callback returned and the sub is gone. */
    NT_CHECK_MEM_EQ(natsio_msg_data(g_cb.kept), natsio_msg_data_len(g_cb.kept), "kept payload", 12);
    NT_CHECK_STR_EQ(natsio_msg_subject(g_cb.kept), subj);
    NT_CHECK_STR_EQ(natsio_msg_reply(g_cb.kept), "some.reply");
    natsio_msg *second = NULL;
    NT_CHECK_INT_EQ(natsio_msg_clone(g_cb.kept, &second), NATSIO_OK);
    NT_CHECK_STR_EQ(natsio_msg_data(second), "kept payload");
    natsio_msg_free(second);
}

/* user_data is the subscription itself. */
static void free_self_cb(void *user_data, const natsio_msg *msg, natsio_status status) {
    if (record_final(msg, status)) return;
    if (atomic_fetch_add(&g_cb.count, 1) == 0) natsio_sub_free((natsio_sub *)user_data);
}

static void test_free_sub_inside_its_callback(void) {
    char subj[128];
    reset_cb_state();
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    natsio_sub *s = NULL;
    NT_CHECK_INT_EQ(natsio_client_subscribe(c, case_subject(subj, sizeof subj, "self"), NULL, NULL, &s),
                    NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_sub_set_callback(s, free_self_cb, s, count_release), NATSIO_OK);
    NT_CHECK_INT_EQ(publish_numbered(c, subj, 5), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_flush(c, 2000), NATSIO_OK);
    NT_CHECK(wait_at_least(&g_cb.released, 1, 5000));
    nt_sleep_ms(100); /* an absence: no second call within 100 ms */
    NT_CHECK_INT_EQ(atomic_load(&g_cb.count), 1);
    NT_CHECK_INT_EQ(atomic_load(&g_cb.released), 1);
    /* Freed from its own callback: the final call still comes, once,
     * after that callback returned and before the release. */
    check_final_call(NATSIO_DONE);
    /* The client is unaffected. */
    NT_CHECK_INT_EQ(natsio_client_flush(c, 2000), NATSIO_OK);
}

/* ---- unsubscribe ---------------------------------------------------------- */

static void test_unsubscribe_discards_backlog(void) {
    char subj[128];
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    natsio_sub *s = subscribe(c, case_subject(subj, sizeof subj, "u"), NULL);
    NT_CHECK(s != NULL);
    NT_CHECK_INT_EQ(publish_numbered(c, subj, 10), NATSIO_OK);
    NT_CHECK(wait_pending(s, 10, 5000));
    NT_CHECK_INT_EQ(natsio_sub_stop(s), NATSIO_OK);
    NT_CHECK(natsio_sub_is_closed(s));
    natsio_iter_stats st;
    NT_CHECK_INT_EQ(natsio_sub_get_stats(s, &st), NATSIO_OK);
    NT_CHECK_INT_EQ(st.pending_items, 0);
    NT_CHECK_INT_EQ(st.delivered, 0);
    /* Stopped: ended without error, NATSIO_DONE with the out set to NULL,
     * now and on every later call. */
    natsio_msg *m = (natsio_msg *)&g_cb;
    NT_CHECK_INT_EQ(natsio_sub_next(s, 100, &m), NATSIO_DONE);
    NT_CHECK(m == NULL);
    m = (natsio_msg *)&g_cb;
    NT_CHECK_INT_EQ(natsio_sub_next(s, NATSIO_WAIT_FOREVER, &m), NATSIO_DONE);
    NT_CHECK(m == NULL);
    /* A next_async token completes at once with NATSIO_DONE too. */
    natsio_token *t = NULL;
    NT_CHECK_INT_EQ(natsio_sub_next_async(s, &t), NATSIO_OK);
    nt_cleanup(token_free_cb, t);
    NT_CHECK_INT_EQ(natsio_token_wait(t, 2000), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_token_status(t), NATSIO_DONE);
    NT_CHECK_INT_EQ(natsio_token_msg(t, &m), NATSIO_DONE);
    /* stop is idempotent; unsubscribe_after needs a live subscription. */
    NT_CHECK_INT_EQ(natsio_sub_stop(s), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_sub_unsubscribe_after(s, 1), NATSIO_ERR_SUBSCRIPTION_CLOSED);
}

static void test_unsubscribe_after_three(void) {
    char subj[128];
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    natsio_sub *s = subscribe(c, case_subject(subj, sizeof subj, "limited"), NULL);
    NT_CHECK(s != NULL);
    NT_CHECK_INT_EQ(natsio_sub_unsubscribe_after(s, 0), NATSIO_ERR_INVALID_ARGUMENT);
    NT_CHECK_INT_EQ(natsio_sub_unsubscribe_after(s, 3), NATSIO_OK);
    NT_CHECK_INT_EQ(publish_numbered(c, subj, 5), NATSIO_OK);
    for (int i = 0; i < 3; i++) {
        natsio_msg *m = NULL;
        NT_CHECK_INT_EQ(natsio_sub_next(s, 2000, &m), NATSIO_OK);
        int k = msg_number(m);
        natsio_msg_free(m);
        NT_CHECK_INT_EQ(k, i);
    }
    /* The count reached after the backlog: ended without error. */
    natsio_msg *m = (natsio_msg *)&g_cb;
    NT_CHECK_INT_EQ(natsio_sub_next(s, 1000, &m), NATSIO_DONE);
    NT_CHECK(m == NULL);
    NT_CHECK(natsio_sub_is_closed(s));
}

static void test_unsubscribe_after_counts_already_received(void) {
    char subj[128];
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    natsio_sub *s = subscribe(c, case_subject(subj, sizeof subj, "limited"), NULL);
    NT_CHECK(s != NULL);
    NT_CHECK_INT_EQ(publish_numbered(c, subj, 2), NATSIO_OK);
    NT_CHECK(wait_pending(s, 2, 5000));
    /* 2 already received count towards the 3. */
    NT_CHECK_INT_EQ(natsio_sub_unsubscribe_after(s, 3), NATSIO_OK);
    NT_CHECK_INT_EQ(publish_numbered(c, subj, 4), NATSIO_OK);
    int got = 0;
    natsio_msg *m = NULL;
    natsio_status st;
    while ((st = natsio_sub_next(s, 1000, &m)) == NATSIO_OK) {
        natsio_msg_free(m);
        got++;
    }
    NT_CHECK_INT_EQ(st, NATSIO_DONE);
    NT_CHECK(m == NULL);
    NT_CHECK_INT_EQ(got, 3);
}

/* ---- drain ---------------------------------------------------------------- */

static void test_sub_drain_callback_backlog(void) {
    enum { N = 10 };
    char subj[128];
    reset_cb_state();
    atomic_store(&g_cb.sleep_ms, 20);
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    natsio_sub *s = subscribe_ordered(c, case_subject(subj, sizeof subj, "d"));
    NT_CHECK(s != NULL);
    nt_cleanup(sub_free_cb, s);
    NT_CHECK_INT_EQ(publish_numbered(c, subj, N), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_flush(c, 2000), NATSIO_OK);
    NT_CHECK(wait_at_least(&g_cb.in_flight, 1, 2000) || atomic_load(&g_cb.count) > 0);

    NT_CHECK_INT_EQ(natsio_sub_drain(s, 5000), NATSIO_OK);
    /* Drain returns only once every queued message was handled. */
    NT_CHECK_INT_EQ(atomic_load(&g_cb.count), N);
    NT_CHECK_INT_EQ(atomic_load(&g_cb.out_of_order), 0);
    /* Then the final call says it ended without error (drained). */
    NT_CHECK(wait_at_least(&g_cb.final_calls, 1, 2000));
    check_final_call(NATSIO_DONE);
    NT_CHECK(natsio_sub_is_closed(s));
    natsio_iter_stats st;
    NT_CHECK_INT_EQ(natsio_sub_get_stats(s, &st), NATSIO_OK);
    NT_CHECK_INT_EQ(st.delivered, N);
    NT_CHECK_INT_EQ(st.pending_items, 0);
    /* Nothing new is delivered after the drain. */
    NT_CHECK_INT_EQ(publish_str(c, subj, "late"), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_flush(c, 2000), NATSIO_OK);
    nt_sleep_ms(100); /* an absence: nothing more comes within 100 ms */
    NT_CHECK_INT_EQ(atomic_load(&g_cb.count), N);
}

static void test_sub_drain_async_iterator(void) {
    char subj[128];
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    natsio_sub *s = subscribe(c, case_subject(subj, sizeof subj, "d"), NULL);
    NT_CHECK(s != NULL);
    NT_CHECK_INT_EQ(publish_numbered(c, subj, 5), NATSIO_OK);
    NT_CHECK(wait_pending(s, 5, 5000));

    natsio_token *t = NULL;
    NT_CHECK_INT_EQ(natsio_sub_drain_async(s, NATSIO_TIMEOUT_DEFAULT, &t), NATSIO_OK);
    /* Published after the drain started: not delivered. */
    NT_CHECK_INT_EQ(publish_str(c, subj, "after"), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_flush(c, 2000), NATSIO_OK);
    /* The backlog is not consumed yet, so the drain cannot be done. */
    bool done_early = natsio_token_is_done(t);
    natsio_status early_status = natsio_token_status(t);

    int got = 0;
    natsio_msg *m = NULL;
    natsio_status st;
    while ((st = natsio_sub_next(s, 2000, &m)) == NATSIO_OK) {
        int k = msg_number(m);
        natsio_msg_free(m);
        if (k != got) break;
        got++;
    }
    natsio_status waited = natsio_token_wait(t, 2000);
    natsio_status final_status = natsio_token_status(t);
    bool done = natsio_token_is_done(t);
    natsio_token_free(t);

    NT_CHECK(!done_early);
    NT_CHECK_INT_EQ(early_status, NATSIO_PENDING);
    NT_CHECK_INT_EQ(got, 5);
    /* Drained: the iteration ended without error. */
    NT_CHECK_INT_EQ(st, NATSIO_DONE);
    NT_CHECK(m == NULL);
    NT_CHECK_INT_EQ(waited, NATSIO_OK);
    NT_CHECK_INT_EQ(final_status, NATSIO_OK);
    NT_CHECK(done);
    NT_CHECK(natsio_sub_is_closed(s));
}

static void test_client_drain_handles_backlog(void) {
    enum { N = 20 };
    char subj[128];
    reset_cb_state();
    atomic_store(&g_cb.sleep_ms, 10);
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    natsio_sub *s = subscribe_ordered(c, case_subject(subj, sizeof subj, "d"));
    NT_CHECK(s != NULL);
    nt_cleanup(sub_free_cb, s);
    NT_CHECK_INT_EQ(publish_numbered(c, subj, N), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_flush(c, 2000), NATSIO_OK);

    NT_CHECK_INT_EQ(natsio_client_drain(c, 10000), NATSIO_OK);
    NT_CHECK_INT_EQ(atomic_load(&g_cb.count), N);
    NT_CHECK_INT_EQ(atomic_load(&g_cb.out_of_order), 0);
    /* The drained subscription ended without error. */
    NT_CHECK(wait_at_least(&g_cb.final_calls, 1, 2000));
    check_final_call(NATSIO_DONE);
    NT_CHECK_INT_EQ(natsio_client_status(c), NATSIO_CONN_CLOSED);
    NT_CHECK(natsio_sub_is_closed(s));
    NT_CHECK_INT_EQ(publish_str(c, subj, "x"), NATSIO_ERR_CONNECTION_CLOSED);
    NT_CHECK_INT_EQ(natsio_client_drain(c, 1000), NATSIO_ERR_CONNECTION_CLOSED);
}

static void test_client_drain_async_token(void) {
    char subj[128];
    reset_cb_state();
    atomic_store(&g_cb.sleep_ms, 5);
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    natsio_sub *s = subscribe_ordered(c, case_subject(subj, sizeof subj, "d"));
    NT_CHECK(s != NULL);
    nt_cleanup(sub_free_cb, s);
    NT_CHECK_INT_EQ(publish_numbered(c, subj, 10), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_flush(c, 2000), NATSIO_OK);
    natsio_token *t = NULL;
    NT_CHECK_INT_EQ(natsio_client_drain_async(c, 10000, &t), NATSIO_OK);
    natsio_status waited = natsio_token_wait(t, 10000);
    natsio_status st = natsio_token_status(t);
    natsio_token_free(t);
    NT_CHECK_INT_EQ(waited, NATSIO_OK);
    NT_CHECK_INT_EQ(st, NATSIO_OK);
    NT_CHECK_INT_EQ(atomic_load(&g_cb.count), 10);
    NT_CHECK_INT_EQ(natsio_client_status(c), NATSIO_CONN_CLOSED);
    NT_CHECK(wait_at_least(&g_cb.final_calls, 1, 2000));
    check_final_call(NATSIO_DONE);
}

static struct {
    atomic_long drain_timeouts;
    atomic_long other_errors;
} g_errors;

static void record_error(void *user_data, natsio_status status, const char *text, uint64_t sid,
                         const char *subject) {
    (void)user_data;
    (void)text;
    (void)sid;
    (void)subject;
    if (status == NATSIO_ERR_DRAIN_TIMEOUT)
        atomic_fetch_add(&g_errors.drain_timeouts, 1);
    else
        atomic_fetch_add(&g_errors.other_errors, 1);
}

static void test_client_drain_timeout(void) {
    char subj[128];
    reset_cb_state();
    atomic_store(&g_errors.drain_timeouts, 0);
    atomic_store(&g_cb.sleep_ms, 200); /* 10 messages: 2 s of work */
    natsio_options *o = options_for_url(nt_server_url(g_server), 0);
    NT_CHECK(o != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_error_callback(o, record_error, NULL, NULL), NATSIO_OK);
    natsio_client *c = connect_with(o);
    NT_CHECK(c != NULL);
    natsio_sub *s = subscribe_ordered(c, case_subject(subj, sizeof subj, "slow"));
    NT_CHECK(s != NULL);
    nt_cleanup(sub_free_cb, s);
    NT_CHECK_INT_EQ(publish_numbered(c, subj, 10), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_flush(c, 2000), NATSIO_OK);

    NT_CHECK_INT_EQ(natsio_client_drain(c, 300), NATSIO_ERR_DRAIN_TIMEOUT);
    NT_CHECK_INT_EQ(natsio_client_status(c), NATSIO_CONN_CLOSED);
    NT_CHECK(wait_at_least(&g_errors.drain_timeouts, 1, 3000));
    NT_CHECK(atomic_load(&g_cb.count) < 10);
    /* Cut short by the close: the subscription ended with the closed
     * connection, not as drained. */
    NT_CHECK(wait_at_least(&g_cb.final_calls, 1, 3000));
    check_final_call(NATSIO_ERR_CONNECTION_CLOSED);
}

/* ---- the publish ring (natsio_pub_ring) --------------------------------- */

/* A producer as natsio.h describes it: false when the record does not fit. */
static bool ring_push(natsio_client *c, const natsio_pub_ring *r, const char *subject,
                      const void *data, uint32_t len) {
    uint32_t slen = (uint32_t)strlen(subject);
    uint64_t padded = (8 + slen + len + 7) & ~(uint64_t)7;
    _Atomic uint64_t *tail = (_Atomic uint64_t *)r->tail;
    _Atomic uint64_t *head = (_Atomic uint64_t *)r->head;
    uint64_t old_tail = atomic_load(tail);
    uint64_t at = old_tail % r->capacity, pos = old_tail;
    if (r->capacity - at < padded) pos += r->capacity - at;
    if (pos + padded - atomic_load(head) > r->capacity) return false;
    if (pos != old_tail) {
        uint32_t skip = UINT32_MAX;
        memcpy(r->data + at, &skip, 4);
    }
    uint8_t *rec = r->data + pos % r->capacity;
    memcpy(rec, &slen, 4);
    memcpy(rec + 4, &len, 4);
    memcpy(rec + 8, subject, slen);
    memcpy(rec + 8 + slen, data, len);
    atomic_store(tail, pos + padded);
    if (atomic_load(head) == old_tail) natsio_client_pub_ring_kick(c);
    return true;
}

/* Records written into the ring go out in order with the client's calls;
 * a record the library refuses is reported and dropped, the rest flows;
 * the gate closes with the connection. */
static void test_pub_ring(void) {
    char subj[128];
    atomic_store(&g_errors.other_errors, 0);
    natsio_options *o = options_for_url(nt_server_url(g_server), 0);
    NT_CHECK(o != NULL);
    NT_CHECK_INT_EQ(natsio_options_set_error_callback(o, record_error, NULL, NULL), NATSIO_OK);
    natsio_client *c = connect_with(o);
    NT_CHECK(c != NULL);
    natsio_sub *s = subscribe(c, case_subject(subj, sizeof subj, "ring"), NULL);
    NT_CHECK(s != NULL);

    natsio_pub_ring r, again;
    NT_CHECK_INT_EQ(natsio_client_pub_ring(NULL, &r), NATSIO_ERR_NULL_ARGUMENT);
    NT_CHECK_INT_EQ(natsio_client_pub_ring(c, NULL), NATSIO_ERR_NULL_ARGUMENT);
    NT_CHECK_INT_EQ(natsio_client_pub_ring_kick(NULL), NATSIO_ERR_NULL_ARGUMENT);
    NT_CHECK_INT_EQ(natsio_client_pub_ring(c, &r), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_pub_ring(c, &again), NATSIO_OK);
    NT_CHECK(r.data == again.data && r.tail == again.tail && r.capacity >= 4096);
    NT_CHECK_INT_EQ(atomic_load((_Atomic uint64_t *)r.gate), natsio_client_max_payload(c));

    /* Several laps of the ring, every 100th message through the call. */
    for (int i = 0; i < 5000; i++) {
        char num[16];
        int n = snprintf(num, sizeof num, "%d", i);
        if (i % 100 == 0) {
            NT_CHECK_INT_EQ(natsio_client_publish(c, subj, num, (size_t)n), NATSIO_OK);
        } else {
            while (!ring_push(c, &r, subj, num, (uint32_t)n)) nt_sleep_ms(1);
        }
    }
    NT_CHECK(ring_push(c, &r, "bad subject", "x", 1));
    NT_CHECK(ring_push(c, &r, subj, "5000", 4));
    NT_CHECK_INT_EQ(natsio_client_flush(c, 5000), NATSIO_OK);
    for (int i = 0; i <= 5000; i++) {
        natsio_msg *m = NULL;
        NT_CHECK_INT_EQ(natsio_sub_next(s, 5000, &m), NATSIO_OK);
        NT_CHECK_INT_EQ(msg_number(m), i);
        natsio_msg_free(m);
    }
    NT_CHECK(wait_at_least(&g_errors.other_errors, 1, 3000));

    NT_CHECK_INT_EQ(natsio_client_close(c), NATSIO_OK);
    NT_CHECK_INT_EQ(atomic_load((_Atomic uint64_t *)r.gate), 0);
}

/* ---- flush, sub stats ------------------------------------------------------ */

static void test_flush_and_flush_async(void) {
    char subj[128];
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    case_subject(subj, sizeof subj, "f");
    NT_CHECK_INT_EQ(publish_str(c, subj, "x"), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_flush(c, NATSIO_WAIT_FOREVER), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_flush(c, NATSIO_TIMEOUT_DEFAULT), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_flush(c, 2000), NATSIO_OK);

    natsio_token *t = NULL;
    NT_CHECK_INT_EQ(natsio_client_flush_async(c, NATSIO_TIMEOUT_DEFAULT, &t), NATSIO_OK);
    natsio_status waited = natsio_token_wait(t, 2000);
    bool done = natsio_token_is_done(t);
    natsio_status st = natsio_token_status(t);
    natsio_msg *m = NULL;
    natsio_status msg_st = natsio_token_msg(t, &m);
    natsio_token_free(t);
    NT_CHECK_INT_EQ(waited, NATSIO_OK);
    NT_CHECK(done);
    NT_CHECK_INT_EQ(st, NATSIO_OK);
    /* A flush produces no message. */
    NT_CHECK_INT_EQ(msg_st, NATSIO_ERR_ILLEGAL_STATE);
    NT_CHECK(m == NULL);
}

static void test_sub_stats(void) {
    char subj[128];
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    natsio_sub *s = subscribe(c, case_subject(subj, sizeof subj, "stats"), NULL);
    NT_CHECK(s != NULL);
    natsio_iter_stats st;
    NT_CHECK_INT_EQ(natsio_sub_get_stats(s, &st), NATSIO_OK);
    NT_CHECK_INT_EQ(st.delivered, 0);
    NT_CHECK_INT_EQ(st.pending_items, 0);
    NT_CHECK_INT_EQ(st.pending_bytes, 0);
    NT_CHECK_INT_EQ(st.dropped, 0);
    NT_CHECK_INT_EQ(st.stalls, 0);

    for (int i = 0; i < 5; i++) NT_CHECK_INT_EQ(publish_str(c, subj, "1234"), NATSIO_OK);
    NT_CHECK(wait_pending(s, 5, 5000));
    NT_CHECK_INT_EQ(natsio_sub_get_stats(s, &st), NATSIO_OK);
    NT_CHECK_INT_EQ(st.pending_items, 5);
    NT_CHECK_INT_EQ(st.pending_bytes, 20);
    NT_CHECK_INT_EQ(st.delivered, 0);

    for (int i = 0; i < 2; i++) {
        natsio_msg *m = NULL;
        NT_CHECK_INT_EQ(natsio_sub_next(s, 2000, &m), NATSIO_OK);
        natsio_msg_free(m);
    }
    NT_CHECK_INT_EQ(natsio_sub_get_stats(s, &st), NATSIO_OK);
    NT_CHECK_INT_EQ(st.delivered, 2);
    NT_CHECK_INT_EQ(st.pending_items, 3);
    NT_CHECK_INT_EQ(st.pending_bytes, 12);
    NT_CHECK_INT_EQ(st.dropped, 0);
    NT_CHECK_INT_EQ(st.stalls, 0); /* a subscription never stalls */
}

static void test_next_msg_timeout(void) {
    char subj[128];
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    natsio_sub *s = subscribe(c, case_subject(subj, sizeof subj, "quiet"), NULL);
    NT_CHECK(s != NULL);
    natsio_msg *m = (natsio_msg *)&g_cb; /* sentinel: must stay untouched */
    NT_CHECK_INT_EQ(natsio_sub_next(s, 50, &m), NATSIO_ERR_TIMEOUT);
    NT_CHECK(m == (natsio_msg *)&g_cb);
}

int main(int argc, char **argv) {
    static const nt_case cases[] = {
        NT_CASE(test_roundtrip_binary_payload),
        NT_CASE(test_publish_with_subject_length),
        NT_CASE(test_empty_payload),
        NT_CASE(test_subscription_accessors),
        NT_CASE(test_wildcards),
        NT_CASE(test_queue_group_splits_messages),
        NT_CASE(test_reply_subject_passthrough),
        NT_CASE(test_headers_map_api),
        NT_CASE(test_headers_roundtrip),
        NT_CASE(test_msg_get_fields),
        NT_CASE(test_echo_off_skips_own_messages),
        NT_CASE(test_new_inbox_prefix),
        NT_CASE(test_client_status_transitions),
        NT_CASE(test_server_info_and_limits),
        NT_CASE(test_client_stats_exact),
        NT_CASE(test_callback_in_order_one_at_a_time),
        NT_CASE(test_batch_callback),
        NT_CASE(test_release_once_on_free_without_unsubscribe),
        NT_CASE(test_msg_clone_outlives_callback),
        NT_CASE(test_free_sub_inside_its_callback),
        NT_CASE(test_unsubscribe_discards_backlog),
        NT_CASE(test_unsubscribe_after_three),
        NT_CASE(test_unsubscribe_after_counts_already_received),
        NT_CASE(test_sub_drain_callback_backlog),
        NT_CASE(test_sub_drain_async_iterator),
        NT_CASE(test_client_drain_handles_backlog),
        NT_CASE(test_client_drain_async_token),
        NT_CASE(test_client_drain_timeout),
        NT_CASE(test_pub_ring),
        NT_CASE(test_flush_and_flush_async),
        NT_CASE(test_sub_stats),
        NT_CASE(test_next_msg_timeout),
    };
    return run_cases_with_shared_server(argc, argv, "pubsub", cases, NT_COUNT(cases));
}
