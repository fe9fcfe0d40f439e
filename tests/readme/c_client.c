/* README fragments that use `client` (a connected natsio_client *). */
#include <natsio.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/*@TOP@*/

int main(void) {
    natsio_client *client = NULL;
    if (natsio_client_connect_url("nats://127.0.0.1:4222", &client) != NATSIO_OK) {
        fprintf(stderr, "connect: %s\n", natsio_last_error());
        return 1;
    }
    /*@BODY@*/
    natsio_client_free(client);
    return 0;
}
