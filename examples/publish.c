/*
 * publish: sends messages to a subject.
 *
 *   publish [URL] [SUBJECT] [MESSAGE] [COUNT]
 *
 * Defaults: nats://127.0.0.1:4222, "greet.hello", "hello", 1.
 * Try it with `subscribe` running in another terminal.
 */
#include <natsio.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Prints why a natsio call failed and says whether it did. */
static int failed(natsio_status st, const char *what) {
    if (st == NATSIO_OK) return 0;
    fprintf(stderr, "%s failed: %s (%d): %s\n", what, natsio_status_str(st), (int)st,
            natsio_last_error());
    return 1;
}

int main(int argc, char **argv) {
    const char *url = argc > 1 ? argv[1] : "nats://127.0.0.1:4222";
    const char *subject = argc > 2 ? argv[2] : "greet.hello";
    const char *message = argc > 3 ? argv[3] : "hello";
    long count = argc > 4 ? strtol(argv[4], NULL, 10) : 1;
    if (count < 1) {
        fprintf(stderr, "usage: %s [URL] [SUBJECT] [MESSAGE] [COUNT>=1]\n", argv[0]);
        return 2;
    }

    natsio_client *client = NULL;
    if (failed(natsio_client_connect_url(url, &client), "connect")) return 1;
    printf("connected to %s\n", url);

    int rc = 0;
    for (long i = 0; i < count && rc == 0; i++) {
        /* publish returns once the frame is buffered, not when it arrived */
        rc = failed(natsio_client_publish(client, subject, message, strlen(message)), "publish");
        if (rc == 0) printf("published [%s] %s\n", subject, message);
    }
    /* flush waits until the server has processed everything sent so far */
    if (rc == 0) rc = failed(natsio_client_flush(client, 5000), "flush");
    if (rc == 0) printf("flushed %ld message(s)\n", count);

    natsio_client_free(client);
    return rc;
}
