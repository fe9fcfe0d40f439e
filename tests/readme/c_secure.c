/* The README's "secured cluster" fragment: it must connect (s, nc). */
#include <natsio.h>
#include <stdio.h>
/*@TOP@*/

static void on_event(void *user_data, natsio_event_kind kind, natsio_status status, const char *text) {
    (void)user_data;
    printf("event %d (%s): %s\n", (int)kind, natsio_status_str(status), text ? text : "");
}

int main(void) {
    /*@BODY@*/
    if (s != NATSIO_OK) {
        fprintf(stderr, "connect: %s: %s\n", natsio_status_str(s), natsio_last_error());
        return 1;
    }
    printf("connected\n");
    natsio_client_free(nc);
    return 0;
}
