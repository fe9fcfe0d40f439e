/*
 * service: an echo service (ADR-32) with two endpoints in a group, found
 * and monitored by any NATS tool (`nats micro ls`, nats.go's micro client).
 *
 *   service [URL] [MAX_REQUESTS]
 *
 * Endpoints: echo.v1.echo (answers with the request's payload) and
 * echo.v1.upper (answers with it in upper case; an empty request gets a
 * 400 error reply). Defaults: nats://127.0.0.1:4222, 0 (serve until
 * killed). After MAX_REQUESTS requests the service stops (draining what it
 * received) and prints its STATS.
 */
#include <natsio.h>

#include <ctype.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failed(natsio_status st, const char *what) {
    if (st == NATSIO_OK) return 0;
    fprintf(stderr, "%s failed: %s (%d): %s\n", what, natsio_status_str(st), (int)st,
            natsio_last_error());
    return 1;
}

struct served {
    natsio_service *service;
    long max;
    atomic_long count;
};

/* Counts a request; the last one starts the stop (a callback may not wait
 * for the stop: the stop waits for the callbacks). */
static void count_request(struct served *s) {
    if (atomic_fetch_add(&s->count, 1) + 1 == s->max) {
        natsio_token *stop = NULL;
        if (natsio_service_stop_async(s->service, &stop) == NATSIO_OK) natsio_token_free(stop);
    }
}

static natsio_status echo(void *user_data, const natsio_service_request *req, natsio_status status) {
    if (req == NULL) return status; /* the endpoint ended */
    const natsio_msg *m = natsio_service_request_msg(req);
    natsio_status st = natsio_service_request_respond(req, NULL, natsio_msg_data(m), natsio_msg_data_len(m));
    count_request(user_data);
    return st;
}

static natsio_status upper(void *user_data, const natsio_service_request *req, natsio_status status) {
    if (req == NULL) return status;
    const natsio_msg *m = natsio_service_request_msg(req);
    size_t len = natsio_msg_data_len(m);
    natsio_status st;
    if (len == 0) {
        st = natsio_service_request_respond_error(req, 400, "nothing to shout", NULL, NULL, 0);
    } else {
        char *out = malloc(len);
        if (out == NULL) return NATSIO_ERR_INTERNAL; /* a 500 reply */
        for (size_t i = 0; i < len; i++) out[i] = (char)toupper((unsigned char)natsio_msg_data(m)[i]);
        st = natsio_service_request_respond(req, NULL, out, len);
        free(out);
    }
    count_request(user_data);
    return st;
}

int main(int argc, char **argv) {
    const char *url = argc > 1 ? argv[1] : "nats://127.0.0.1:4222";
    struct served served = {.max = argc > 2 ? strtol(argv[2], NULL, 10) : 0};

    natsio_client *client = NULL;
    if (failed(natsio_client_connect_url(url, &client), "connect")) return 1;

    natsio_service_group *group = NULL;
    natsio_endpoint *echo_ep = NULL, *upper_ep = NULL;
    int rc = failed(natsio_client_add_service(client,
                                              "{\"name\":\"echo\",\"version\":\"1.0.0\","
                                              "\"description\":\"echoes requests\","
                                              "\"metadata\":{\"example\":\"service.c\"}}",
                                              &served.service),
                    "add service");
    if (rc == 0) rc = failed(natsio_service_add_group(served.service, NULL, "{\"name\":\"echo.v1\"}", &group), "add group");
    if (rc == 0)
        rc = failed(natsio_service_add_endpoint(served.service, group, "{\"name\":\"echo\"}", &echo_ep), "add echo");
    if (rc == 0)
        rc = failed(natsio_service_add_endpoint(served.service, group, "{\"name\":\"upper\"}", &upper_ep),
                    "add upper");
    if (rc == 0) rc = failed(natsio_endpoint_set_callback(echo_ep, echo, &served, NULL), "echo callback");
    if (rc == 0) rc = failed(natsio_endpoint_set_callback(upper_ep, upper, &served, NULL), "upper callback");
    if (rc == 0) rc = failed(natsio_client_flush(client, 5000), "flush");
    if (rc == 0) {
        printf("service echo %s serving [%s] and [%s] at %s\n", natsio_service_id(served.service),
               natsio_endpoint_subject(echo_ep), natsio_endpoint_subject(upper_ep), url);
        fflush(stdout);
        /* Until the stop (after MAX_REQUESTS) or the connection's close. */
        natsio_token *end = NULL;
        rc = failed(natsio_service_end_async(served.service, &end), "wait");
        if (rc == 0) rc = failed(natsio_token_wait(end, NATSIO_WAIT_FOREVER), "wait");
        natsio_token_free(end);
    }
    if (rc == 0) {
        char *stats = NULL;
        rc = failed(natsio_service_stats_json(served.service, &stats), "stats");
        if (rc == 0) printf("served %ld request(s)\nstats: %s\n", atomic_load(&served.count), stats);
        natsio_string_free(stats);
    }

    natsio_endpoint_free(echo_ep);
    natsio_endpoint_free(upper_ep);
    natsio_service_group_free(group);
    natsio_service_free(served.service);
    natsio_client_free(client);
    return rc;
}
