/*
 * reply: answers requests on a subject with "echo: <request payload>".
 *
 *   reply [URL] [SUBJECT] [MAX_REQUESTS] [QUEUE]
 *
 * Defaults: nats://127.0.0.1:4222, "service.echo", 0 (serve forever),
 * queue group "echo-workers" (run several copies to share the load).
 */
#include <natsio.h>

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
    long max_requests = argc > 3 ? strtol(argv[3], NULL, 10) : 0;
    const char *queue = argc > 4 ? argv[4] : "echo-workers";

    natsio_client *client = NULL;
    if (failed(natsio_client_connect_url(url, &client), "connect")) return 1;

    natsio_sub *sub = NULL;
    int rc = failed(natsio_client_subscribe(client, subject, queue, NULL, &sub), "subscribe");
    if (rc == 0) rc = failed(natsio_client_flush(client, 5000), "flush");
    if (rc == 0) {
        printf("serving [%s] in queue group %s at %s\n", subject, queue, url);
        fflush(stdout);
    }

    long served = 0;
    while (rc == 0 && (max_requests <= 0 || served < max_requests)) {
        natsio_msg *request = NULL;
        rc = failed(natsio_sub_next(sub, NATSIO_WAIT_FOREVER, &request), "next");
        if (rc) break;
        char answer[1024];
        int n = snprintf(answer, sizeof answer, "echo: %.*s", (int)natsio_msg_data_len(request),
                         natsio_msg_data(request));
        size_t len = n < (int)sizeof answer ? (size_t)n : sizeof answer - 1;
        printf("request [%s] %.*s\n", natsio_msg_subject(request),
               (int)natsio_msg_data_len(request), natsio_msg_data(request));
        /* A message without a reply subject was published, not requested. */
        natsio_status st = natsio_msg_respond(request, answer, len);
        if (st == NATSIO_ERR_NO_REPLY_SUBJECT)
            printf("  (no reply subject, not answered)\n");
        else
            rc = failed(st, "respond");
        fflush(stdout);
        natsio_msg_free(request);
        served++;
    }
    /* Make sure the last reply left before the connection closes. */
    if (rc == 0) rc = failed(natsio_client_flush(client, 5000), "flush");
    printf("served %ld request(s)\n", served);

    natsio_sub_free(sub);
    natsio_client_free(client);
    return rc;
}
