/*
 * The hub: how library threads reach JavaScript, one per Node environment
 * (main thread or worker).
 *
 *   library thread (feed dispatcher, client events)
 *       -> append an event to the hub's own list (short mutex)
 *       -> ring the doorbell: napi_call_threadsafe_function, nonblocking,
 *          on a tsfn whose queue holds ONE call
 *   library thread completing an operation
 *       -> its tag (the op) goes into the hub's natsio_completion_queue,
 *          whose notify rings the same doorbell when the queue turns
 *          non-empty
 *   JS thread
 *       -> the doorbell takes the whole list and handles every event in
 *          one turn: settles the promises of completed operations, hands
 *          feed items to JS in batches, emits client events.
 *
 * The doorbell never blocks and never loses an event: events travel on the
 * hub's list, the tsfn only wakes the JS thread, and a wake-up that finds
 * the doorbell already rung is redundant by construction.
 *
 * The doorbell is ref'ed (keeps the event loop alive) while the JS layer
 * has open connections or operations are in flight. An environment cleanup
 * hook closes clients and releases the tsfn; the hub is reference counted
 * so that late library callbacks after teardown are harmless.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

hub *get_hub(napi_env env) {
    void *data = NULL;
    napi_get_instance_data(env, &data);
    return data;
}

void hub_retain(hub *h) {
    pthread_mutex_lock(&h->mu);
    h->refs++;
    pthread_mutex_unlock(&h->mu);
}

void hub_event_free(hub_event *e) {
    if (e->feed) feed_release(e->feed);
    free(e->text);
    free(e->subject);
    free(e->detail);
    free(e);
}

void hub_release(hub *h) {
    pthread_mutex_lock(&h->mu);
    int left = --h->refs;
    pthread_mutex_unlock(&h->mu);
    if (left) return;
    hub_event *e = h->head;
    while (e) {
        hub_event *n = e->next;
        hub_event_free(e);
        e = n;
    }
    pthread_mutex_destroy(&h->mu);
    free(h);
}

/* Rings the doorbell unless it is rung already; under h->mu, so that
 * teardown cannot release the tsfn between the alive check and the call. A
 * full queue means a wake-up is already on its way. */
static void ring_locked(hub *h) {
    if (h->alive && !h->rung &&
        napi_call_threadsafe_function(h->doorbell, NULL, napi_tsfn_nonblocking) == napi_ok)
        __atomic_store_n(&h->rung, true, __ATOMIC_RELEASE);
}

void hub_post(hub *h, hub_event *e) {
    e->next = NULL;
    pthread_mutex_lock(&h->mu);
    if (!h->alive) {
        pthread_mutex_unlock(&h->mu);
        hub_event_free(e);
        return;
    }
    if (h->tail)
        h->tail->next = e;
    else
        h->head = e;
    h->tail = e;
    ring_locked(h);
    pthread_mutex_unlock(&h->mu);
}

/* The completion queue's notify: any thread, must not block. */
static void completions_notify(void *user_data) {
    hub *h = user_data;
    pthread_mutex_lock(&h->mu);
    ring_locked(h);
    pthread_mutex_unlock(&h->mu);
}

static void completions_release(void *user_data) { hub_release(user_data); }

void hub_settle_completed(napi_env env, hub *h) {
    uint64_t tags[64];
    size_t n;
    do {
        n = natsio_completion_queue_poll(h->completions, tags, 64);
        for (size_t i = 0; i < n; i++) {
            if (tags[i] & HUB_TAG_KINDS) {
                struct feed *f = (struct feed *)(uintptr_t)(tags[i] & ~HUB_TAG_KINDS);
                if ((tags[i] & HUB_TAG_KINDS) == HUB_TAG_FEED_END)
                    feed_end_watched(env, f);
                else
                    feed_pulled(env, f);
                continue;
            }
            op *o = (op *)(uintptr_t)tags[i];
            if (env == NULL) { /* teardown: nobody to settle for */
                op_free(o);
                continue;
            }
            napi_handle_scope scope;
            napi_open_handle_scope(env, &scope);
            op_settle(env, o); /* settles and frees */
            napi_close_handle_scope(env, scope);
        }
    } while (n == 64);
}

void hub_update_ref(napi_env env, hub *h) {
    bool want = h->alive && (h->js_active || h->pending > 0);
    if (want == h->refed || !h->doorbell) return;
    if (want)
        napi_ref_threadsafe_function(env, h->doorbell);
    else
        napi_unref_threadsafe_function(env, h->doorbell);
    h->refed = want;
}

void hub_dispatch(napi_env env, hub *h, uint32_t id, int kind, napi_value *args, size_t nargs) {
    napi_value dispatch, argv[7], result;
    if (!h->dispatch_fn || napi_get_reference_value(env, h->dispatch_fn, &dispatch) != napi_ok) return;
    napi_create_uint32(env, id, &argv[0]);
    napi_create_int32(env, kind, &argv[1]);
    for (size_t i = 0; i < 5; i++) argv[i + 2] = i < nargs ? args[i] : undefined_value(env);
    if (napi_call_function(env, undefined_value(env), dispatch, 7, argv, &result) == napi_pending_exception) {
        /* A user callback threw: report it as Node does for any uncaught
         * exception of an event callback. */
        napi_value exc;
        napi_get_and_clear_last_exception(env, &exc);
        napi_fatal_exception(env, exc);
    }
}

static void client_event_to_js(napi_env env, hub *h, hub_event *e) {
    napi_value info, v, args[3];
    napi_create_object(env, &info);
    if (e->kind == HEV_ERROR) {
        napi_create_string_utf8(env, e->text ? e->text : "", NAPI_AUTO_LENGTH, &v);
        napi_set_named_property(env, info, "text", v);
        napi_create_double(env, (double)e->sid, &v);
        napi_set_named_property(env, info, "sid", v);
        if (e->subject)
            napi_create_string_utf8(env, e->subject, NAPI_AUTO_LENGTH, &v);
        else
            napi_get_null(env, &v);
        napi_set_named_property(env, info, "subject", v);
        args[0] = undefined_value(env);
        args[1] = info;
        args[2] = make_error(env, e->status, e->text);
        hub_dispatch(env, h, e->target, EV_ERROR, args, 3);
    } else if (e->kind == HEV_SVC_ERROR) {
        napi_value a[4];
        napi_create_int32(env, e->status, &a[0]); /* the reply's code */
        a[1] = str_or_null(env, e->text);
        a[2] = str_or_null(env, e->subject);
        a[3] = str_or_null(env, e->detail);
        hub_dispatch(env, h, e->target, EV_SVC_ERROR, a, 4);
    } else if (e->kind == HEV_LOG) {
        napi_create_int32(env, e->status, &args[0]); /* the natsio_log_level */
        napi_create_string_utf8(env, e->text ? e->text : "", NAPI_AUTO_LENGTH, &args[1]);
        hub_dispatch(env, h, e->target, EV_LOG, args, 2);
    } else {
        napi_create_int32(env, e->conn_kind, &v);
        napi_set_named_property(env, info, "kind", v);
        napi_create_string_utf8(env, e->text ? e->text : "", NAPI_AUTO_LENGTH, &v);
        napi_set_named_property(env, info, "text", v);
        args[0] = undefined_value(env);
        args[1] = info;
        args[2] = e->status != NATSIO_OK ? make_error(env, e->status, e->text) : undefined_value(env);
        hub_dispatch(env, h, e->target, EV_CONN, args, 3);
    }
}

/* Calls one of index.js's schedulers (each setImmediate()s a native step);
 * true when it did. An exception there is never the caller's: scheduling
 * is only a hint. */
static bool call_scheduler(napi_env env, napi_ref fn_ref) {
    napi_value fn;
    if (!fn_ref || napi_get_reference_value(env, fn_ref, &fn) != napi_ok || !fn) return false;
    if (napi_call_function(env, undefined_value(env), fn, 0, NULL, NULL) == napi_ok) return true;
    bool pending_exception = false;
    napi_is_exception_pending(env, &pending_exception);
    if (pending_exception) {
        napi_value ignored;
        napi_get_and_clear_last_exception(env, &ignored);
    }
    return false;
}

/*
 * Spinning for one awaited answer.
 *
 * A reply reaches JS through two thread wake-ups: the library's reader
 * thread, then this JS thread (the doorbell's uv_async). On a virtual
 * machine an idle thread's wake-up can cost as much as the round trip
 * itself (spin.rs in the core measures it), and nats.js, reading its socket
 * on the event loop, pays only one. So while exactly one operation is in
 * flight, the JS thread does not go to sleep at once: it checks for the
 * doorbell in steps of SPIN_STEP_US (natsio_runtime_spin_until_set: the
 * core's spin, in its slots), each scheduled with setImmediate (so timers
 * and other I/O are served between steps, the loop never blocked longer
 * than a step), up to the library's wait spin
 * (natsio_runtime_wait_spin_us: 200 us by default, 0 turns it off, none on
 * a single CPU). A step that sees the doorbell rung returns, and the loop's
 * next poll finds the doorbell's wake-up already there. With more than one
 * operation in flight nothing spins: throughput does not need it, and the
 * JS thread would take a CPU from the library's threads.
 *
 *   op_track: pending 0 -> 1 starts a spin budget, spin_kick
 *   spin_kick: calls index.js's spin_fn, which setImmediate()s spinStep
 *   spinStep (js_spin_step): one step; true when another is wanted
 *   the doorbell: after handling its events, spin_kick again if budget is
 *                left (a responder in this thread answered; its reply is near)
 */
enum { SPIN_STEP_US = 20 };

static void spin_kick(napi_env env, hub *h) {
    if (h->spin_scheduled || h->pending != 1 || now_ns() >= h->spin_until_ns) return;
    h->spin_scheduled = call_scheduler(env, h->spin_fn);
}

void hub_op_started(napi_env env, hub *h) {
    if (h->pending != 1) return;
    uint32_t us = natsio_runtime_wait_spin_us();
    h->spin_until_ns = us ? now_ns() + (int64_t)us * 1000 : 0;
    spin_kick(env, h);
}

/* spinStep() -> bool: one step of the spin; true when the JS side should
 * schedule another. */
EXPORT(js_spin_step) {
    hub *h = get_hub(env);
    bool again = false;
    h->spin_scheduled = false;
    int64_t left_ns = h->spin_until_ns - now_ns();
    if (h->pending == 1 && left_ns > 0) {
        uint32_t step_us = left_ns < SPIN_STEP_US * 1000 ? (uint32_t)(left_ns / 1000) + 1 : SPIN_STEP_US;
        /* The core spins within its policy: a spinning slot (at most half
         * the CPUs spin, the library's own waiters included), yielding the
         * CPU now and then to the thread that will ring. Declined: sleep. */
        again = natsio_runtime_spin_until_set(&h->rung, step_us) == NATSIO_SPIN_TIMED_OUT &&
                now_ns() < h->spin_until_ns;
    }
    h->spin_scheduled = again;
    napi_value v;
    napi_get_boolean(env, again, &v);
    return v;
}

/*
 * Acks and publishes sent once per turn.
 *
 * A consumed message's ack and an asynchronous JetStream publish are
 * queued with the library's deferred send (natsio_msg_ack_deferred,
 * natsio_js_publish_options.defer_send): they do not wake the connection's
 * writer thread each. The first of a turn schedules sendDeferred with
 * setImmediate, which sends what every client of this environment queued:
 * a loop's acks or publishes go out in one write once the loop yields, as
 * nats.js's buffered writes do. (Without it the library sends them within
 * about a millisecond.)
 */
void hub_send_after_turn(napi_env env, hub *h) {
    if (!h->send_scheduled) h->send_scheduled = call_scheduler(env, h->send_fn);
}

/* sendDeferred(): sends what the clients of this environment deferred. */
EXPORT(js_send_deferred) {
    (void)info;
    hub *h = get_hub(env);
    h->send_scheduled = false;
    for (client_wrap *c = h->clients; c; c = c->next) natsio_client_send_deferred(c->client);
    return NULL;
}

/* The doorbell: runs on the JS thread, handles every event posted so far. */
static void doorbell_call_js(napi_env env, napi_value js_cb, void *context, void *data) {
    (void)js_cb;
    (void)data;
    hub *h = context;
    pthread_mutex_lock(&h->mu);
    hub_event *e = h->head;
    h->head = h->tail = NULL;
    __atomic_store_n(&h->rung, false, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&h->mu);
    if (env == NULL || !h->dispatch_fn) { /* the environment is going away */
        while (e) {
            hub_event *n = e->next;
            hub_event_free(e);
            e = n;
        }
        return;
    }
    hub_settle_completed(env, h);
    while (e) {
        hub_event *n = e->next;
        napi_handle_scope scope;
        napi_open_handle_scope(env, &scope);
        switch (e->kind) {
        case HEV_FEED:
            feed_process(env, e->feed);
            break;
        default:
            client_event_to_js(env, h, e);
            break;
        }
        napi_close_handle_scope(env, scope);
        hub_event_free(e);
        e = n;
    }
    hub_update_ref(env, h);
    spin_kick(env, h); /* an answer awaited still may be near */
}

/* init(dispatch, makeError, spin, send): the JS entry points (spin and
 * send schedule spinStep and sendDeferred with setImmediate). */
EXPORT(js_init) {
    ARGS(4);
    hub *h = get_hub(env);
    if (h->dispatch_fn) napi_delete_reference(env, h->dispatch_fn);
    if (h->make_error_fn) napi_delete_reference(env, h->make_error_fn);
    if (h->spin_fn) napi_delete_reference(env, h->spin_fn);
    if (h->send_fn) napi_delete_reference(env, h->send_fn);
    napi_create_reference(env, argv[0], 1, &h->dispatch_fn);
    napi_create_reference(env, argv[1], 1, &h->make_error_fn);
    napi_create_reference(env, argv[2], 1, &h->spin_fn);
    napi_create_reference(env, argv[3], 1, &h->send_fn);
    return NULL;
}

/* setActive(bool): the JS layer has open connections. */
EXPORT(js_set_active) {
    ARGS(1);
    hub *h = get_hub(env);
    bool on = false;
    napi_get_value_bool(env, argv[0], &on);
    h->js_active = on;
    hub_update_ref(env, h);
    return NULL;
}

/* reportUncaught(error): a user callback of a message batch threw; reported
 * as Node reports any uncaught exception of an event callback. */
EXPORT(js_report_uncaught) {
    ARGS(1);
    napi_fatal_exception(env, argv[0]);
    return NULL;
}

EXPORT(js_status_str) {
    ARGS(1);
    int32_t code = 0;
    napi_value r;
    napi_get_value_int32(env, argv[0], &code);
    napi_create_string_utf8(env, natsio_status_str(code), NAPI_AUTO_LENGTH, &r);
    return r;
}

/* statusParent(status, index) -> the index-th parent status in the
 * library's error tree, 0 for none (natsio_status_parent). */
EXPORT(js_status_parent) {
    ARGS(2);
    int32_t code = 0, index = 0;
    napi_value r;
    napi_get_value_int32(env, argv[0], &code);
    napi_get_value_int32(env, argv[1], &index);
    napi_create_int32(env, index < 0 ? 0 : natsio_status_parent(code, (size_t)index), &r);
    return r;
}

/* statusIs(status, ancestor) -> natsio_status_is: `status` is `ancestor`
 * or below it in the error tree. */
EXPORT(js_status_is) {
    ARGS(2);
    int32_t code = 0, ancestor = 0;
    napi_get_value_int32(env, argv[0], &code);
    napi_get_value_int32(env, argv[1], &ancestor);
    return boolean(env, natsio_status_is(code, ancestor));
}

/* setWaitSpin(us): the library's wait spin, process-wide (see index.js). */
EXPORT(js_set_wait_spin) {
    ARGS(1);
    int64_t us = get_i64(env, argv[0], 0);
    natsio_runtime_set_wait_spin_us(us < 0 ? 0 : us > UINT32_MAX ? UINT32_MAX : (uint32_t)us);
    return NULL;
}

EXPORT(js_version) {
    (void)info;
    napi_value r;
    napi_create_string_utf8(env, natsio_version(), NAPI_AUTO_LENGTH, &r);
    return r;
}

static void env_cleanup(void *arg) {
    hub *h = arg;
    /* From here on hub_post frees events, and the tsfn is never called again. */
    pthread_mutex_lock(&h->mu);
    h->alive = false;
    napi_threadsafe_function tsfn = h->doorbell;
    h->doorbell = NULL;
    pthread_mutex_unlock(&h->mu);
    /* No dispatcher may wait for this JS thread any more; then close every
     * client (which waits for its callbacks), so no library thread keeps
     * working for an environment that is gone. */
    feeds_release_client(h, NULL);
    for (client_wrap *c = h->clients; c; c = c->next) natsio_client_close(c->client);
    if (tsfn) napi_release_threadsafe_function(tsfn, napi_tsfn_abort);
    /* Every client is closed, so every operation has completed: free the
     * ops still queued, then the queue (late tags of tokens of clients
     * closed later are dropped with it). */
    hub_settle_completed(NULL, h);
    natsio_completion_queue_free(h->completions);
    h->completions = NULL;
    hub_release(h);
}

static void doorbell_finalize(napi_env env, void *data, void *hint) {
    (void)env;
    (void)hint;
    hub_release(data);
}

static void hub_instance_finalize(napi_env env, void *data, void *hint) {
    (void)hint;
    hub *h = data;
    if (h->dispatch_fn) napi_delete_reference(env, h->dispatch_fn);
    if (h->make_error_fn) napi_delete_reference(env, h->make_error_fn);
    if (h->spin_fn) napi_delete_reference(env, h->spin_fn);
    if (h->send_fn) napi_delete_reference(env, h->send_fn);
    h->dispatch_fn = h->make_error_fn = h->spin_fn = h->send_fn = NULL;
    hub_release(h);
}

void hub_module_init(napi_env env) {
    hub *h = calloc(1, sizeof *h);
    pthread_mutex_init(&h->mu, NULL);
    h->refs = 4; /* the cleanup hook, the doorbell tsfn, the instance data, the completion queue */
    h->alive = true;
    if (natsio_completion_queue_new(completions_notify, h, completions_release, &h->completions) != NATSIO_OK) {
        napi_throw_error(env, NULL, "natsio: could not create the completion queue");
        free(h);
        return;
    }
    napi_value name;
    napi_create_string_utf8(env, "natsio.doorbell", NAPI_AUTO_LENGTH, &name);
    if (napi_create_threadsafe_function(env, NULL, NULL, name, 1, 1, h, doorbell_finalize, h, doorbell_call_js,
                                        &h->doorbell) != napi_ok) {
        napi_throw_error(env, NULL, "natsio: could not create the thread-safe function");
        natsio_completion_queue_free(h->completions); /* no token was registered */
        free(h);
        return;
    }
    napi_unref_threadsafe_function(env, h->doorbell);
    napi_set_instance_data(env, h, hub_instance_finalize, NULL);
    napi_add_env_cleanup_hook(env, env_cleanup, h);
}
