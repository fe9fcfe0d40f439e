/*
 * jetstream: a tour of JetStream and Key-Value through the C ABI.
 *
 *   jetstream [URL]
 *
 * Default URL: nats://127.0.0.1:4222 (the server needs JetStream: -js).
 * Creates the stream ORDERS on "orders.>", publishes with acks (one
 * deduplicated, a batch asynchronously), reads them with a pull consumer
 * (ack, nak, redelivery), then uses the Key-Value bucket PROFILES (put,
 * get, compare-and-set, delete, keys, history, watch). Both are deleted at
 * the end.
 */
#include <natsio.h>

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static int failed(natsio_status st, const char *what) {
    if (st == NATSIO_OK) return 0;
    fprintf(stderr, "%s failed: %s (%d): %s\n", what, natsio_status_str(st), (int)st,
            natsio_last_error());
    return 1;
}

static int streams_and_consumers(natsio_js *js) {
    /* Configurations are JSON with the server's field names; durations may
     * be written as strings. */
    natsio_js_stream_delete(js, "ORDERS"); /* from an earlier run, if any */
    if (failed(natsio_js_stream_create(js,
                   "{\"name\":\"ORDERS\",\"subjects\":[\"orders.>\"],"
                   "\"max_age\":\"24h\",\"storage\":\"file\"}",
                   NATSIO_CREATE, NULL),
               "create stream"))
        return 1;

    /* A publish waits for the stream's ack; msg_id deduplicates. Options
     * structs start from their _init function. */
    natsio_js_publish_options po;
    natsio_js_publish_options_init(&po);
    po.msg_id = "order-1";
    for (int attempt = 0; attempt < 2; attempt++) {
        natsio_pub_ack *ack = NULL;
        if (failed(natsio_js_publish(js, "orders.new", "pizza", 5, &po, &ack), "publish"))
            return 1;
        printf("stored in %s at seq %" PRIu64 "%s\n", natsio_pub_ack_stream(ack),
               natsio_pub_ack_seq(ack), natsio_pub_ack_duplicate(ack) ? " (duplicate)" : "");
        natsio_pub_ack_free(ack);
    }

    /* Asynchronous publishes: tokens complete with their acks. */
    natsio_token *tokens[3];
    const char *items[3] = {"salad", "soup", "cake"};
    for (int i = 0; i < 3; i++)
        if (failed(natsio_js_publish_async(js, "orders.new", items[i], strlen(items[i]), NULL,
                                           &tokens[i]),
                   "publish_async"))
            return 1;
    if (failed(natsio_js_publish_async_complete(js, 5000), "publish_async_complete")) return 1;
    for (int i = 0; i < 3; i++) {
        natsio_pub_ack *ack = NULL;
        if (!failed(natsio_token_pub_ack(tokens[i], &ack), "async ack"))
            printf("async %s acked at seq %" PRIu64 "\n", items[i], natsio_pub_ack_seq(ack));
        natsio_pub_ack_free(ack);
        natsio_token_free(tokens[i]);
    }

    /* A durable pull consumer; fetch a batch and acknowledge it. */
    if (failed(natsio_js_consumer_create(js, "ORDERS",
                   "{\"durable_name\":\"kitchen\",\"ack_policy\":\"explicit\","
                   "\"ack_wait\":\"30s\"}",
                   NATSIO_CREATE, NULL),
               "create consumer"))
        return 1;
    natsio_fetch_options fo;
    natsio_fetch_options_init(&fo);
    fo.max_messages = 10;
    fo.expires_ms = 1000;
    natsio_msg_list *list = NULL;
    if (failed(natsio_js_fetch(js, "ORDERS", "kitchen", &fo, &list), "fetch")) return 1;
    for (size_t i = 0; i < natsio_msg_list_count(list); i++) {
        const natsio_msg *m = natsio_msg_list_get(list, i);
        natsio_js_msg_metadata md;
        natsio_msg_js_metadata(m, &md);
        printf("cooking %s (stream seq %" PRIu64 ", delivery %" PRIu64 ")\n", natsio_msg_data(m),
               md.stream_seq, md.num_delivered);
        /* The soup is not ready: ask for it again later. */
        if (strcmp(natsio_msg_data(m), "soup") == 0)
            failed(natsio_msg_nak(m, 0), "nak");
        else
            failed(natsio_msg_ack(m), "ack");
    }
    natsio_msg_list_free(list);
    natsio_msg *again = NULL;
    natsio_fetch_options one; /* next: a fetch of one message */
    natsio_fetch_options_init(&one);
    one.expires_ms = 2000;
    if (failed(natsio_js_next(js, "ORDERS", "kitchen", &one, &again), "next")) return 1;
    printf("redelivered: %s\n", natsio_msg_data(again));
    failed(natsio_msg_ack_sync(again, 2000), "ack_sync");
    natsio_msg_free(again);
    return failed(natsio_js_stream_delete(js, "ORDERS"), "delete stream");
}

static int key_value(natsio_js *js) {
    natsio_js_kv_delete(js, "PROFILES"); /* from an earlier run, if any */
    natsio_kv *kv = NULL;
    if (failed(natsio_js_kv_create(js, "{\"bucket\":\"PROFILES\",\"history\":5}", NATSIO_CREATE, &kv),
               "create bucket"))
        return 1;
    uint64_t rev = 0;
    natsio_kv_put(kv, "alice.color", "blue", 4, NULL, &rev);
    natsio_kv_put(kv, "bob.color", "red", 3, NULL, NULL);
    printf("alice.color = blue at revision %" PRIu64 "\n", rev);

    /* Compare-and-set: only if nobody changed it since `rev`. */
    if (failed(natsio_kv_update(kv, "alice.color", "green", 5, rev, &rev), "update")) return 1;
    natsio_status st = natsio_kv_update(kv, "alice.color", "pink", 4, rev - 1, NULL);
    printf("stale update: %s\n", natsio_status_str(st));

    natsio_kv_entry *e = NULL;
    if (failed(natsio_kv_get(kv, "alice.color", &e), "get")) return 1;
    printf("alice.color = %s (revision %" PRIu64 ")\n", natsio_kv_entry_value(e),
           natsio_kv_entry_revision(e));
    natsio_kv_entry_free(e);

    uint64_t marker = 0;
    natsio_kv_delete(kv, "bob.color", NULL, &marker);
    st = natsio_kv_get(kv, "bob.color", &e);
    printf("bob.color after delete: %s (delete marker at revision %" PRIu64 ")\n", natsio_status_str(st),
           marker);

    /* Listings are string lists: count, get, free. */
    natsio_string_list *keys = NULL;
    if (!failed(natsio_kv_keys(kv, &keys), "keys")) {
        printf("keys:");
        for (size_t i = 0; i < natsio_string_list_count(keys); i++)
            printf(" %s", natsio_string_list_get(keys, i));
        printf("\n");
    }
    natsio_string_list_free(keys);

    natsio_kv_entry_list *history = NULL;
    if (!failed(natsio_kv_history(kv, "alice.color", &history), "history")) {
        for (size_t i = 0; i < natsio_kv_entry_list_count(history); i++) {
            const natsio_kv_entry *h = natsio_kv_entry_list_get(history, i);
            printf("  history: %s at revision %" PRIu64 "\n", natsio_kv_entry_value(h),
                   natsio_kv_entry_revision(h));
        }
    }
    natsio_kv_entry_list_free(history);

    /* Watch (a list of key patterns): the current values, a marker entry
     * (operation NATSIO_KV_INITIAL_DONE), then live changes. */
    natsio_kv_watcher *w = NULL;
    const char *patterns[] = {"alice.*"};
    if (failed(natsio_kv_watch(kv, patterns, 1, NULL, &w), "watch")) return 1;
    for (;;) {
        natsio_kv_entry *ev = NULL;
        if (failed(natsio_kv_watcher_next(w, 2000, &ev), "watch next")) return 1;
        bool marker_entry = natsio_kv_entry_operation(ev) == NATSIO_KV_INITIAL_DONE;
        if (marker_entry)
            printf("watch: initial values done\n");
        else
            printf("watch: %s = %s\n", natsio_kv_entry_key(ev), natsio_kv_entry_value(ev));
        natsio_kv_entry_free(ev);
        if (marker_entry) break;
    }
    natsio_kv_put(kv, "alice.city", "Oslo", 4, NULL, NULL);
    natsio_kv_entry *change = NULL;
    if (!failed(natsio_kv_watcher_next(w, 2000, &change), "watch next"))
        printf("watch: changed %s = %s\n", natsio_kv_entry_key(change), natsio_kv_entry_value(change));
    natsio_kv_entry_free(change);
    natsio_kv_watcher_free(w);
    natsio_kv_free(kv);
    return failed(natsio_js_kv_delete(js, "PROFILES"), "delete bucket");
}

int main(int argc, char **argv) {
    const char *url = argc > 1 ? argv[1] : "nats://127.0.0.1:4222";
    natsio_client *client = NULL;
    if (failed(natsio_client_connect_url(url, &client), "connect")) return 1;
    natsio_js *js = NULL;
    int rc = failed(natsio_client_jetstream(client, NULL, &js), "jetstream");
    if (rc == 0) rc = streams_and_consumers(js);
    if (rc == 0) rc = key_value(js);
    if (rc == 0) printf("jetstream tour finished\n");
    natsio_js_free(js);
    natsio_client_free(client);
    return rc;
}
