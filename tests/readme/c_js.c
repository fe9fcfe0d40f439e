/* README fragments that use `js` (a natsio_js * of a connected client) and
 * stdio streams: `f` reads big.bin (the runner creates it), `out` writes
 * big.copy, `buf`/`n` are the usual read buffer and count. The object read
 * back must equal the file. */
#include <natsio.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/*@TOP@*/

static bool same_files(const char *a, const char *b) {
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    bool same = fa && fb;
    while (same) {
        int ca = fgetc(fa), cb = fgetc(fb);
        if (ca != cb) same = false;
        if (ca == EOF || cb == EOF) break;
    }
    if (fa) fclose(fa);
    if (fb) fclose(fb);
    return same;
}

int main(void) {
    natsio_client *client = NULL;
    natsio_js *js = NULL;
    if (natsio_client_connect_url("nats://127.0.0.1:4222", &client) != NATSIO_OK ||
        natsio_client_jetstream(client, NULL, &js) != NATSIO_OK) {
        fprintf(stderr, "connect: %s\n", natsio_last_error());
        return 1;
    }
    FILE *f = fopen("big.bin", "rb"), *out = fopen("big.copy", "wb");
    if (!f || !out) { perror("big.bin"); return 1; }
    char buf[65536];
    size_t n;
    /*@BODY@*/
    fclose(f);
    fclose(out);
    if (!same_files("big.bin", "big.copy")) {
        fprintf(stderr, "big.copy differs from big.bin\n");
        return 1;
    }
    natsio_js_free(js);
    natsio_client_free(client);
    return 0;
}
