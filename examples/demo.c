/*
 * demo: a guided tour of the libnatsio C API against a running server.
 *
 *   demo [URL]            (default nats://127.0.0.1:4222)
 *
 * Steps: connect; subscribe; publish messages with headers and receive
 * them; run a responder in callback mode and make a request (blocking and
 * asynchronous); see how "no responders" and a bad subject are reported;
 * drain and close. Each step prints what it does. The demo checks its own
 * results and exits 0 only if every step behaved as described.
 */
#include <natsio.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int step_number;

static void step(const char *title) {
    printf("\n%d. %s\n", ++step_number, title);
    fflush(stdout);
}

/* Reports an unexpected status; the caller stops the tour. */
static int failed(natsio_status st, const char *what) {
    if (st == NATSIO_OK) return 0;
    fprintf(stderr, "   %s failed: %s (%d): %s\n", what, natsio_status_str(st), (int)st,
            natsio_last_error());
    return 1;
}

/* Reports a result that differs from what the step promised. */
static int wrong(const char *what) {
    fprintf(stderr, "   unexpected: %s\n", what);
    return 1;
}

static void print_message(const natsio_msg *msg) {
    printf("   received [%s] \"%.*s\"\n", natsio_msg_subject(msg), (int)natsio_msg_data_len(msg),
           natsio_msg_data(msg));
    const natsio_headers *headers = natsio_msg_headers(msg);
    for (size_t i = 0; i < natsio_headers_len(headers); i++) {
        const char *name = NULL, *value = NULL;
        if (natsio_headers_entry(headers, i, &name, &value) == NATSIO_OK)
            printf("       %s: %s\n", name, value);
    }
}

/* The responder: runs on the subscription's own dispatcher thread, one
 * request at a time, then once more with request NULL and the status that
 * ended the subscription. `user_data` counts the requests answered. */
static void answer_time_request(void *user_data, const natsio_msg *request, natsio_status status) {
    if (request == NULL) {
        printf("   responder ended: %s\n", natsio_status_str(status));
        return;
    }
    char answer[256];
    int n = snprintf(answer, sizeof answer, "pong (%.*s)",
                     (int)natsio_msg_data_len(request), natsio_msg_data(request));
    natsio_status st = natsio_msg_respond(request, answer, (size_t)n);
    if (st == NATSIO_OK)
        __atomic_add_fetch((int *)user_data, 1, __ATOMIC_SEQ_CST);
    else
        fprintf(stderr, "   responder: %s: %s\n", natsio_status_str(st), natsio_last_error());
}

static int publish_and_receive(natsio_client *client) {
    step("subscribe to demo.greetings.> (iterator mode)");
    natsio_sub *sub = NULL;
    if (failed(natsio_client_subscribe(client, "demo.greetings.>", NULL, NULL, &sub), "subscribe"))
        return 1;
    /* After a flush the server has the subscription: nothing sent later is missed. */
    int rc = failed(natsio_client_flush(client, 5000), "flush");
    if (rc == 0) printf("   subscribed, sid %" PRIu64 "\n", natsio_sub_sid(sub));

    const char *languages[] = {"en", "fr", "de"};
    const char *greetings[] = {"hello", "bonjour", "hallo"};
    if (rc == 0) step("publish 3 messages with headers");
    for (int i = 0; i < 3 && rc == 0; i++) {
        natsio_headers *headers = NULL;
        rc = failed(natsio_headers_new(&headers), "headers_new");
        char index[16];
        snprintf(index, sizeof index, "%d", i + 1);
        if (rc == 0) rc = failed(natsio_headers_add(headers, "X-Index", index), "headers_add");
        if (rc == 0)
            rc = failed(natsio_headers_add(headers, "Content-Language", languages[i]),
                        "headers_add");
        char subject[64];
        snprintf(subject, sizeof subject, "demo.greetings.%s", languages[i]);
        if (rc == 0)
            rc = failed(natsio_client_publish_with(client, subject, NULL, headers, greetings[i],
                                                   strlen(greetings[i])),
                        "publish_with");
        if (rc == 0) printf("   published [%s] \"%s\" (X-Index: %s)\n", subject, greetings[i], index);
        natsio_headers_free(headers);
    }

    if (rc == 0) step("receive them, in order, with their headers");
    for (int i = 0; i < 3 && rc == 0; i++) {
        natsio_msg *msg = NULL;
        rc = failed(natsio_sub_next(sub, 5000, &msg), "next");
        if (rc) break;
        print_message(msg);
        const char *language = NULL;
        if (natsio_msg_data_len(msg) != strlen(greetings[i]) ||
            memcmp(natsio_msg_data(msg), greetings[i], strlen(greetings[i])) != 0)
            rc = wrong("payload differs from what was published");
        else if (natsio_headers_get(natsio_msg_headers(msg), "Content-Language", &language) !=
                     NATSIO_OK ||
                 strcmp(language, languages[i]) != 0)
            rc = wrong("header Content-Language differs from what was published");
        natsio_msg_free(msg);
    }
    natsio_sub_free(sub);
    return rc;
}

static int request_reply(natsio_client *client) {
    step("start a responder on demo.time (callback mode, queue group demo-workers)");
    int answered = 0;
    natsio_sub *responder = NULL;
    if (failed(natsio_client_subscribe(client, "demo.time", "demo-workers", NULL, &responder),
               "subscribe"))
        return 1;
    /* Push mode: from now on the callback gets the messages. */
    int rc = failed(natsio_sub_set_callback(responder, answer_time_request, &answered, NULL),
                    "set_callback");
    if (rc == 0) rc = failed(natsio_client_flush(client, 5000), "flush");

    if (rc == 0) step("request demo.time and wait for the reply");
    natsio_msg *reply = NULL;
    if (rc == 0)
        rc = failed(natsio_client_request(client, "demo.time", NULL, "ping 1", 6, 2000, &reply),
                    "request");
    if (rc == 0) {
        printf("   reply \"%.*s\"\n", (int)natsio_msg_data_len(reply), natsio_msg_data(reply));
        const char *expected = "pong (ping 1)";
        if (natsio_msg_data_len(reply) != strlen(expected) ||
            memcmp(natsio_msg_data(reply), expected, strlen(expected)) != 0)
            rc = wrong("reply payload");
        natsio_msg_free(reply);
    }

    if (rc == 0) step("request asynchronously: a token completes when the reply arrives");
    natsio_token *token = NULL;
    if (rc == 0)
        rc = failed(natsio_client_request_async(client, "demo.time", NULL, "ping 2", 6, 2000,
                                                &token),
                    "request_async");
    if (rc == 0) {
        printf("   request sent; the caller is free until it waits\n");
        rc = failed(natsio_token_wait(token, 5000), "token_wait");
    }
    if (rc == 0) rc = failed(natsio_token_msg(token, &reply), "token_msg");
    if (rc == 0) {
        printf("   reply \"%.*s\"\n", (int)natsio_msg_data_len(reply), natsio_msg_data(reply));
        natsio_msg_free(reply);
    }
    natsio_token_free(token);

    /* Freeing the subscription waits for a running callback to return and
     * for its final call. */
    natsio_sub_free(responder);
    if (rc == 0 && __atomic_load_n(&answered, __ATOMIC_SEQ_CST) != 2)
        rc = wrong("the responder did not answer both requests");
    if (rc == 0) printf("   responder answered %d requests and was removed\n", answered);
    return rc;
}

static int error_handling(natsio_client *client) {
    step("request a subject nobody listens to");
    natsio_msg *reply = NULL;
    natsio_status st =
        natsio_client_request(client, "demo.nobody", NULL, "anyone?", 7, 2000, &reply);
    if (st != NATSIO_ERR_NO_RESPONDERS) {
        failed(st, "request");
        return wrong("expected NATSIO_ERR_NO_RESPONDERS");
    }
    printf("   failed at once with NATSIO_ERR_NO_RESPONDERS: %s\n", natsio_status_str(st));
    printf("   detail: %s\n", natsio_last_error());

    step("publish to an invalid subject");
    st = natsio_client_publish(client, "demo.bad subject", "x", 1);
    if (st != NATSIO_ERR_BAD_SUBJECT) {
        failed(st, "publish");
        return wrong("expected NATSIO_ERR_BAD_SUBJECT");
    }
    printf("   rejected before sending, NATSIO_ERR_BAD_SUBJECT: %s\n", natsio_last_error());
    return 0;
}

int main(int argc, char **argv) {
    const char *url = argc > 1 ? argv[1] : "nats://127.0.0.1:4222";
    printf("libnatsio %s demo\n", natsio_version());

    step("connect");
    natsio_client *client = NULL;
    if (failed(natsio_client_connect_url(url, &client), "connect")) {
        fprintf(stderr, "   is a nats-server running at %s?\n", url);
        return 1;
    }
    char *connected = NULL;
    int rc = failed(natsio_client_connected_url(client, &connected), "connected_url");
    if (rc == 0) {
        printf("   connected to %s, server max_payload %" PRId64 " bytes\n", connected,
               natsio_client_max_payload(client));
        natsio_string_free(connected);
    }

    if (rc == 0) rc = publish_and_receive(client);
    if (rc == 0) rc = request_reply(client);
    if (rc == 0) rc = error_handling(client);

    if (rc == 0) {
        step("drain: finish pending work, then close");
        struct natsio_client_stats stats;
        rc = failed(natsio_client_get_stats(client, &stats), "stats");
        if (rc == 0)
            printf("   sent %" PRIu64 " and received %" PRIu64 " messages\n", stats.out_msgs,
                   stats.in_msgs);
        if (rc == 0) rc = failed(natsio_client_drain(client, 5000), "drain");
        if (rc == 0 && natsio_client_status(client) != NATSIO_CONN_CLOSED)
            rc = wrong("the client is not closed after drain");
        if (rc == 0) printf("   closed\n");
    }
    natsio_client_free(client);

    printf("\n%s\n", rc == 0 ? "demo finished: every step worked" : "demo FAILED");
    return rc;
}
