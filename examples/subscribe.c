/*
 * subscribe: prints the messages arriving on a subject (wildcards allowed).
 *
 *   subscribe [URL] [SUBJECT] [MAX_MSGS] [IDLE_TIMEOUT_MS]
 *
 * Defaults: nats://127.0.0.1:4222, "greet.>", 10 messages, 10000 ms.
 * Stops after MAX_MSGS messages, or when none arrives for IDLE_TIMEOUT_MS
 * (a negative value waits forever).
 */
#include <natsio.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int failed(natsio_status st, const char *what) {
    if (st == NATSIO_OK) return 0;
    fprintf(stderr, "%s failed: %s (%d): %s\n", what, natsio_status_str(st), (int)st,
            natsio_last_error());
    return 1;
}

static void print_message(const natsio_msg *msg) {
    printf("received [%s] %.*s\n", natsio_msg_subject(msg), (int)natsio_msg_data_len(msg),
           natsio_msg_data(msg));
    const natsio_headers *headers = natsio_msg_headers(msg);
    for (size_t i = 0; i < natsio_headers_len(headers); i++) {
        const char *name = NULL, *value = NULL;
        if (natsio_headers_entry(headers, i, &name, &value) == NATSIO_OK)
            printf("    %s: %s\n", name, value);
    }
    if (natsio_msg_reply(msg)) printf("    (reply to %s)\n", natsio_msg_reply(msg));
}

int main(int argc, char **argv) {
    const char *url = argc > 1 ? argv[1] : "nats://127.0.0.1:4222";
    const char *subject = argc > 2 ? argv[2] : "greet.>";
    long max_msgs = argc > 3 ? strtol(argv[3], NULL, 10) : 10;
    long idle_ms = argc > 4 ? strtol(argv[4], NULL, 10) : 10000;

    natsio_client *client = NULL;
    if (failed(natsio_client_connect_url(url, &client), "connect")) return 1;

    natsio_sub *sub = NULL;
    int rc = failed(natsio_client_subscribe(client, subject, NULL, NULL, &sub), "subscribe");
    /* After a flush the server knows the subscription: publishers may start. */
    if (rc == 0) rc = failed(natsio_client_flush(client, 5000), "flush");
    if (rc == 0) {
        printf("listening on [%s] at %s\n", subject, url);
        fflush(stdout);
    }

    /* Timeouts are positive milliseconds or a named value; "forever" is
     * NATSIO_WAIT_FOREVER, not any negative number. */
    int64_t wait_ms = idle_ms < 0 ? NATSIO_WAIT_FOREVER : idle_ms;
    long received = 0;
    while (rc == 0 && received < max_msgs) {
        natsio_msg *msg = NULL;
        natsio_status st = natsio_sub_next(sub, wait_ms, &msg);
        if (st == NATSIO_ERR_TIMEOUT) {
            printf("no message for %ld ms, stopping\n", idle_ms);
            break;
        }
        if (st == NATSIO_DONE) { /* the subscription ended without error */
            printf("subscription ended\n");
            break;
        }
        rc = failed(st, "next");
        if (rc) break;
        print_message(msg);
        fflush(stdout);
        natsio_msg_free(msg);
        received++;
    }
    printf("received %ld message(s)\n", received);

    natsio_sub_free(sub);
    natsio_client_free(client);
    return rc;
}
