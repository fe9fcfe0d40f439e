/*
 * natsio Node addon: a thin node-api (ABI-stable) layer over libnatsio.
 * This file only registers the functions; internal.h says which file does
 * what, and how threads meet.
 */
#include "internal.h"

#ifdef __GLIBC__
#include <malloc.h>
#include <stdlib.h>

/*
 * glibc gives each thread that allocates an arena of its own, up to 8 per
 * CPU: Node's and V8's threads have theirs when this loads; the library's
 * threads (runtime worker, readers, dispatcher) would add more, and a block
 * allocated on one and freed on another (a message read on the reader,
 * freed on the JS thread) leaves each arena's free space unreturned. From
 * here on, new threads share the existing arenas: pubsub of 1 KiB messages
 * peaked ~10 MB lower (issue 45). A process started with MALLOC_ARENA_MAX
 * keeps its own choice.
 */
__attribute__((constructor)) static void limit_malloc_arenas(void) {
    if (getenv("MALLOC_ARENA_MAX") == NULL) mallopt(M_ARENA_MAX, 1);
}
#endif

NAPI_MODULE_INIT(/* napi_env env, napi_value exports */) {
    hub_module_init(env);
    if (exception_pending(env)) return NULL;
    napi_property_descriptor props[] = {
#define FN(js, c) {js, NULL, c, NULL, NULL, NULL, napi_default, NULL}
        FN("init", js_init),
        FN("spinStep", js_spin_step),
        FN("sendDeferred", js_send_deferred),
        FN("setWaitSpin", js_set_wait_spin),
        FN("setActive", js_set_active),
        FN("reportUncaught", js_report_uncaught),
        FN("statusStr", js_status_str),
        FN("statusParent", js_status_parent),
        FN("statusIs", js_status_is),
        FN("version", js_version),
        FN("liveHandles", js_live_handles),
        /* connections */
        FN("connect", js_connect),
        FN("authReply", js_auth_reply),
        FN("nkeySign", js_nkey_sign),
        FN("optionsSetReconnectDelay", js_options_set_reconnect_delay),
        FN("releaseFeeds", js_release_feeds),
        FN("optionsNew", js_options_new),
        FN("publish", js_publish),
        FN("stats", js_stats),
        FN("serverPool", js_server_pool),
        /* feeds: subscriptions, request-many, consume, watch */
        FN("feedStart", js_feed_start),
        FN("feedCredit", js_feed_credit),
        FN("feedStop", js_feed_stop),
        FN("feedStats", js_feed_stats),
        /* JetStream */
        FN("jsClose", js_jsh_close),
        FN("jsPublish", js_js_publish),
        FN("jsPublishAsync", js_js_publish_async),
        FN("ocClose", js_jsh_close),
        FN("jsMsgAck", js_msg_ack),
        FN("jsMsgAckSync", js_msg_ack_sync),
        FN("jsMsgMetadata", js_msg_metadata),
        /* Key-Value */
        FN("kvClose", js_jsh_close),
        FN("kvWithCodecs", js_kv_with_codecs),
        /* Object Store */
        FN("objClose", js_jsh_close),
        FN("objReaderNext", js_obj_reader_next),
        FN("objAddLink", js_obj_add_link),
        /* services */
        FN("serviceAddGroup", js_service_add_group),
        FN("serviceAddEndpoint", js_service_add_endpoint),
        FN("serviceRequestRelease", js_service_request_release),
        FN("serviceSetHandlers", js_service_set_handlers),
#undef FN
    };
    napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
    gen_register_verbs(env, exports);
    napi_value url;
    napi_create_string_utf8(env, NATSIO_DEFAULT_URL, NAPI_AUTO_LENGTH, &url);
    napi_set_named_property(env, exports, "DEFAULT_URL", url);
    /* JS_HEADERS: { MSG_ID: "Nats-Msg-Id", ... }, every NATSIO_JS_HEADER_. */
    napi_value headers, name;
    napi_create_object(env, &headers);
#define JS_HEADER(suffix)                                                                          \
    napi_create_string_utf8(env, NATSIO_JS_HEADER_##suffix, NAPI_AUTO_LENGTH, &name);              \
    napi_set_named_property(env, headers, #suffix, name);
    NATSIO_JS_HEADERS(JS_HEADER)
#undef JS_HEADER
    napi_object_freeze(env, headers);
    napi_set_named_property(env, exports, "JS_HEADERS", headers);
    return exports;
}
