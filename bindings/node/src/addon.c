/*
 * natsio Node addon: a thin node-api (ABI-stable) layer over libnatsio.
 * This file only registers the functions; internal.h says which file does
 * what, and how threads meet.
 */
#include "internal.h"

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
        FN("close", js_close),
        FN("publish", js_publish),
        FN("request", js_request),
        FN("flush", js_flush),
        FN("drain", js_drain),
        FN("rtt", js_rtt),
        FN("status", js_status),
        FN("maxPayload", js_max_payload),
        FN("serverInfo", js_server_info),
        FN("connectedUrl", js_connected_url),
        FN("newInbox", js_new_inbox),
        FN("stats", js_stats),
        FN("servers", js_servers),
        FN("forceReconnect", js_force_reconnect),
        /* feeds: subscriptions, request-many, consume, watch */
        FN("subscribe", js_subscribe),
        FN("requestMany", js_request_many),
        FN("feedStart", js_feed_start),
        FN("feedCredit", js_feed_credit),
        FN("feedStop", js_feed_stop),
        FN("feedStats", js_feed_stats),
        FN("subUnsubscribeAfter", js_sub_unsubscribe_after),
        FN("subDrain", js_sub_drain),
        FN("subInfo", js_sub_info),
        /* JetStream */
        FN("jetstream", js_jetstream),
        FN("jsClose", js_jsh_close),
        FN("jsPublish", js_js_publish),
        FN("jsPublishAsync", js_js_publish_async),
        FN("jsPublishAsyncComplete", js_js_publish_async_complete),
        FN("jsPublishAsyncPending", js_js_publish_async_pending),
        FN("jsAccountInfo", js_js_account_info),
        FN("jsStreamPut", js_js_stream_put),
        FN("jsStreamInfo", js_js_stream_info),
        FN("jsStreamDelete", js_js_stream_delete),
        FN("jsStreamPurge", js_js_stream_purge),
        FN("jsStreamNames", js_js_stream_names),
        FN("jsStreamGetMsg", js_js_stream_get_msg),
        FN("jsStreamGetNextMsg", js_js_stream_get_next_msg),
        FN("jsStreamInfoWithSubjects", js_js_stream_info_with_subjects),
        FN("jsStreamInfos", js_js_stream_infos),
        FN("jsApiLevel", js_js_api_level),
        FN("jsStreamDeleteMsg", js_js_stream_delete_msg),
        FN("jsStreamGetLastMsgsFor", js_js_stream_get_last_msgs_for),
        FN("jsConsumerPut", js_js_consumer_put),
        FN("jsConsumerInfo", js_js_consumer_info),
        FN("jsConsumerDelete", js_js_consumer_delete),
        FN("jsConsumerNames", js_js_consumer_names),
        FN("jsConsumerInfos", js_js_consumer_infos),
        FN("jsConsumerPause", js_js_consumer_pause),
        FN("jsConsumerUnpin", js_js_consumer_unpin),
        FN("jsConsumerResume", js_js_consumer_resume),
        FN("jsFetch", js_js_fetch),
        FN("jsNext", js_js_next),
        FN("jsConsume", js_js_consume),
        FN("jsOrderedConsumer", js_js_ordered_consumer),
        FN("ocStart", js_oc_start),
        FN("ocMessages", js_oc_messages),
        FN("ocStop", js_oc_stop),
        FN("ocClose", js_jsh_close),
        FN("jsMsgAck", js_msg_ack),
        FN("jsMsgAckSync", js_msg_ack_sync),
        FN("jsMsgMetadata", js_msg_metadata),
        /* Key-Value */
        FN("kvClose", js_jsh_close),
        /* Object Store */
        FN("objClose", js_jsh_close),
        FN("objWriterOpen", js_obj_writer_open),
        FN("objReaderNext", js_obj_reader_next),
        FN("objAddLink", js_obj_add_link),
#undef FN
    };
    napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
    gen_register_verbs(env, exports);
    napi_value url;
    napi_create_string_utf8(env, NATSIO_DEFAULT_URL, NAPI_AUTO_LENGTH, &url);
    napi_set_named_property(env, exports, "DEFAULT_URL", url);
    return exports;
}
