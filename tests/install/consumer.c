/* A program of a libnatsio user, built against an installed libnatsio (not
 * this tree): scripts/test-install.sh builds it through find_package(natsio)
 * (shared and static) and through pkg-config (natsio, natsio-static), then
 * runs it against a nats-server with JetStream.
 *
 *   consumer <url> <name>
 *
 * Checks the header and the library agree, then publishes, requests and
 * does a Key-Value put/get; prints "ok <name>" and exits 0 when all worked.
 */
#include <natsio.h>

#include <stdio.h>
#include <string.h>

#if !defined(NATSIO_VERSION_MAJOR) || NATSIO_VERSION_NUMBER < 100
#error "natsio.h has no NATSIO_VERSION_* macros"
#endif

static int failed(const char *what, natsio_status st) {
    fprintf(stderr, "consumer: %s: %s (%s)\n", what, natsio_status_str(st), natsio_last_error());
    return 1;
}

#define TRY(what, call)                                     \
    do {                                                    \
        natsio_status st_ = (call);                         \
        if (st_ != NATSIO_OK) return failed((what), st_);   \
    } while (0)

static void echo(void *user_data, const natsio_msg *msg, natsio_status status) {
    (void)user_data;
    (void)status;
    if (msg) natsio_msg_respond(msg, natsio_msg_data(msg), natsio_msg_data_len(msg));
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: consumer <url> <name>\n");
        return 2;
    }
    const char *name = argv[2];
    if (!NATSIO_VERSION_IS_COMPATIBLE() || strcmp(natsio_version(), NATSIO_VERSION_STRING) != 0) {
        fprintf(stderr, "consumer: header %s, library %s\n", NATSIO_VERSION_STRING, natsio_version());
        return 1;
    }
    natsio_client *c = NULL;
    TRY("connect", natsio_client_connect_url(argv[1], &c));

    /* publish: a subscriber of our own sees it */
    char subject[128];
    snprintf(subject, sizeof subject, "install.%s.pub", name);
    natsio_sub *sub = NULL;
    TRY("subscribe", natsio_client_subscribe(c, subject, NULL, NULL, &sub));
    TRY("publish", natsio_client_publish(c, subject, "hello", 5));
    natsio_msg *msg = NULL;
    TRY("next", natsio_sub_next(sub, 2000, &msg));
    if (natsio_msg_data_len(msg) != 5 || memcmp(natsio_msg_data(msg), "hello", 5) != 0) {
        fprintf(stderr, "consumer: published \"hello\", received \"%s\"\n", natsio_msg_data(msg));
        return 1;
    }
    natsio_msg_free(msg);
    natsio_sub_free(sub);

    /* request: answered by an echo service of our own */
    snprintf(subject, sizeof subject, "install.%s.echo", name);
    natsio_sub *service = NULL;
    TRY("subscribe service", natsio_client_subscribe(c, subject, NULL, NULL, &service));
    TRY("set callback", natsio_sub_set_callback(service, echo, NULL, NULL));
    natsio_msg *reply = NULL;
    TRY("request", natsio_client_request(c, subject, NULL, "ping", 4, 2000, &reply));
    if (natsio_msg_data_len(reply) != 4 || memcmp(natsio_msg_data(reply), "ping", 4) != 0) {
        fprintf(stderr, "consumer: requested \"ping\", got \"%s\"\n", natsio_msg_data(reply));
        return 1;
    }
    natsio_msg_free(reply);
    natsio_sub_free(service);

    /* Key-Value put and get */
    natsio_js *js = NULL;
    TRY("jetstream", natsio_client_jetstream(c, NULL, &js));
    char config[128];
    snprintf(config, sizeof config, "{\"bucket\":\"install_%s\"}", name);
    natsio_kv *kv = NULL;
    TRY("kv create", natsio_js_kv_create(js, config, NATSIO_CREATE, &kv));
    uint64_t revision = 0;
    TRY("kv put", natsio_kv_put(kv, "greeting", "hi there", 8, NULL, &revision));
    natsio_kv_entry *entry = NULL;
    TRY("kv get", natsio_kv_get(kv, "greeting", &entry));
    if (natsio_kv_entry_revision(entry) != revision || natsio_kv_entry_value_len(entry) != 8 ||
        memcmp(natsio_kv_entry_value(entry), "hi there", 8) != 0) {
        fprintf(stderr, "consumer: KV get did not return the put\n");
        return 1;
    }
    natsio_kv_entry_free(entry);
    natsio_kv_free(kv);
    natsio_js_free(js);
    natsio_client_free(c);
    printf("ok %s (libnatsio %s)\n", name, natsio_version());
    return 0;
}
