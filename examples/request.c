/*
 * request: sends one request and prints the reply.
 *
 *   request [URL] [SUBJECT] [PAYLOAD] [TIMEOUT_MS]
 *
 * Defaults: nats://127.0.0.1:4222, "service.echo", "ping", 2000 ms (0 or
 * less: the client's default request timeout).
 * Start `reply` first; without it the request fails at once with
 * NATSIO_ERR_NO_RESPONDERS (exit code 3).
 */
#include <natsio.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failed(natsio_status st, const char *what) {
    if (st == NATSIO_OK) return 0;
    fprintf(stderr, "%s failed: %s (%d): %s\n", what, natsio_status_str(st), (int)st,
            natsio_last_error());
    return 1;
}

int main(int argc, char **argv) {
    const char *url = argc > 1 ? argv[1] : "nats://127.0.0.1:4222";
    const char *subject = argc > 2 ? argv[2] : "service.echo";
    const char *payload = argc > 3 ? argv[3] : "ping";
    long timeout_ms = argc > 4 ? strtol(argv[4], NULL, 10) : 2000;

    natsio_client *client = NULL;
    if (failed(natsio_client_connect_url(url, &client), "connect")) return 1;

    printf("request [%s] %s\n", subject, payload);
    natsio_msg *reply = NULL;
    /* A timeout is positive milliseconds or a named value. */
    int64_t timeout = timeout_ms > 0 ? timeout_ms : NATSIO_TIMEOUT_DEFAULT;
    natsio_status st = natsio_client_request(client, subject, NULL, payload, strlen(payload),
                                             timeout, &reply);
    int rc = 0;
    if (st == NATSIO_ERR_NO_RESPONDERS) {
        printf("nobody is listening on [%s] (%s)\n", subject, natsio_status_str(st));
        rc = 3;
    } else if (st == NATSIO_ERR_TIMEOUT) {
        printf("no reply within %ld ms\n", timeout_ms);
        rc = 4;
    } else if (!failed(st, "request")) {
        printf("reply   [%s] %.*s\n", natsio_msg_subject(reply), (int)natsio_msg_data_len(reply),
               natsio_msg_data(reply));
        natsio_msg_free(reply);
    } else {
        rc = 1;
    }

    natsio_client_free(client);
    return rc;
}
