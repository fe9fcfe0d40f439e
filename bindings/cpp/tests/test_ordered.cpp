// The ordered consumer (ADR-17) through natsio/jetstream.hpp:
// JetStream::ordered_consumer, OrderedConsumer::start/messages/stop (and
// their futures), deliver policies, filters, headers only, the server-side
// consumer's name prefix, inactive threshold, max_deliver, filter form and
// metadata, until_drained, idle_timeout, healing after its consumer is
// deleted, and bad input.
#include "js_support.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

using namespace natsio_test;

static_assert(!std::is_copy_constructible_v<natsio::OrderedConsumer>);
static_assert(std::is_nothrow_move_constructible_v<natsio::OrderedConsumer>);

namespace {

natsio::OrderedMessagesOptions short_pulls(bool until_drained,
                                           natsio::milliseconds idle_timeout = natsio::milliseconds(0)) {
    natsio::OrderedMessagesOptions options;
    options.expires = std::chrono::milliseconds(2000);
    options.idle_heartbeat = std::chrono::milliseconds(500);
    options.until_drained = until_drained;
    options.idle_timeout = idle_timeout;
    return options;
}

/// The stream sequences of a whole until_drained run.
std::vector<std::uint64_t> drained_seqs(const natsio::JetStream& js, const std::string& stream,
                                        const natsio::OrderedConsumerConfig& config) {
    natsio::OrderedConsumer oc = js.ordered_consumer(stream, config);
    natsio::Messages msgs = oc.messages(short_pulls(true));
    std::vector<std::uint64_t> seqs;
    while (auto msg = msgs.next(std::chrono::milliseconds(5000))) {
        seqs.push_back(msg->js_metadata().stream_seq);
    }
    oc.stop();
    return seqs;
}

std::string json_name(const std::string& info) {
    const std::string key = R"("name":")";
    auto at = info.find(key);
    if (at == std::string::npos) return {};
    at += key.size();
    return info.substr(at, info.find('"', at) - at);
}

bool has_consumer(const natsio::JetStream& js, const std::string& stream, const std::string& name) {
    for (const auto& n : js.consumer_names(stream)) {
        if (n == name) return true;
    }
    return false;
}

}  // namespace

TEST(Ordered, DeliversInOrderAndStopDeletesTheConsumer) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    js.create_stream(R"({"name":"CPP_ORD","subjects":["cpp.ord.>"],"storage":"memory"})");
    for (int i = 0; i < 10; ++i) {
        js.publish("cpp.ord." + std::to_string(i % 2), "m" + std::to_string(i));
    }
    natsio::OrderedConsumer oc = js.ordered_consumer("CPP_ORD");
    std::string info = oc.start();
    std::string name = json_name(info);
    // Named as nats.go names its: a NUID, "_", the serial (1: the first).
    EXPECT_EQ(name.size(), 24u) << info;
    EXPECT_EQ(name.substr(22), "_1") << info;
    EXPECT_TRUE(contains(info, R"("num_pending":10)")) << info;
    EXPECT_TRUE(contains(info, R"("ack_policy":"none")")) << info;
    EXPECT_TRUE(has_consumer(js, "CPP_ORD", name));

    natsio::Messages msgs = oc.messages(short_pulls(false));
    for (int i = 0; i < 10; ++i) {
        natsio::Msg msg = next_item(msgs);
        EXPECT_EQ(msg.data(), "m" + std::to_string(i));
        natsio::JsMsgMetadata md = msg.js_metadata();
        EXPECT_EQ(md.stream_seq, static_cast<std::uint64_t>(i) + 1);
        EXPECT_EQ(md.consumer, name);
    }
    // One run at a time.
    expect_throws<natsio::IllegalStateError>(NATSIO_ERR_ILLEGAL_STATE,
                                             [&] { (void)oc.messages(); });
    oc.stop();
    EXPECT_FALSE(has_consumer(js, "CPP_ORD", name));
    EXPECT_EQ(msgs.next(std::chrono::milliseconds(1000)), std::nullopt);
    oc.stop();  // idempotent
    expect_throws<natsio::IllegalStateError>(NATSIO_ERR_ILLEGAL_STATE, [&] { (void)oc.start(); });
    js.delete_stream("CPP_ORD");
}

TEST(Ordered, PoliciesFiltersAndHeadersOnly) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    js.create_stream(R"({"name":"CPP_ORDP","subjects":["cpp.ordp.>"],"storage":"memory"})");
    js.publish("cpp.ordp.x", "x0");  // 1
    js.publish("cpp.ordp.y", "y0");  // 2
    js.publish("cpp.ordp.x", "x1");  // 3
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    auto between = std::chrono::system_clock::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    js.publish("cpp.ordp.y", "y1");  // 4
    js.publish("cpp.ordp.x", "x2");  // 5

    using Seqs = std::vector<std::uint64_t>;
    natsio::OrderedConsumerConfig config;
    EXPECT_EQ(drained_seqs(js, "CPP_ORDP", config), (Seqs{1, 2, 3, 4, 5}));
    config.filter_subjects = {"cpp.ordp.y"};
    EXPECT_EQ(drained_seqs(js, "CPP_ORDP", config), (Seqs{2, 4}));
    config = {};
    config.deliver_policy = natsio::DeliverPolicy::Last;
    EXPECT_EQ(drained_seqs(js, "CPP_ORDP", config), (Seqs{5}));
    config.deliver_policy = natsio::DeliverPolicy::LastPerSubject;
    EXPECT_EQ(drained_seqs(js, "CPP_ORDP", config), (Seqs{4, 5}));
    config.deliver_policy = natsio::DeliverPolicy::ByStartSequence;
    config.opt_start_seq = 3;
    EXPECT_EQ(drained_seqs(js, "CPP_ORDP", config), (Seqs{3, 4, 5}));
    config = {};
    config.deliver_policy = natsio::DeliverPolicy::ByStartTime;
    config.opt_start_time = between;
    EXPECT_EQ(drained_seqs(js, "CPP_ORDP", config), (Seqs{4, 5}));

    config = {};
    config.headers_only = true;
    natsio::OrderedConsumer oc = js.ordered_consumer("CPP_ORDP", config);
    natsio::Messages msgs = oc.messages(short_pulls(true));
    natsio::Msg first = next_item(msgs);
    EXPECT_EQ(first.data(), "");
    EXPECT_EQ(first.headers().get("Nats-Msg-Size"), "2");

    // NEW: only what comes after the start.
    config = {};
    config.deliver_policy = natsio::DeliverPolicy::New;
    natsio::OrderedConsumer fresh = js.ordered_consumer("CPP_ORDP", config);
    EXPECT_TRUE(contains(fresh.start(), R"("num_pending":0)"));
    js.publish("cpp.ordp.z", "z0");
    natsio::Messages news = fresh.messages(short_pulls(false));
    EXPECT_EQ(next_item(news).js_metadata().stream_seq, 6u);
    fresh.stop();
    js.delete_stream("CPP_ORDP");
}

// The server-side consumer as a user reads it back: named and configured
// as asked (name prefix, inactive threshold, max_deliver, one filter sent
// as a list), and the defaults where nothing is asked.
TEST(Ordered, ConsumerConfigAsReadBack) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    js.create_stream(R"({"name":"CPP_ORDC","subjects":["cpp.ordc.>"],"storage":"memory"})");
    js.publish("cpp.ordc.a", "a0");
    js.publish("cpp.ordc.b", "b0");

    natsio::OrderedConsumerConfig config;
    config.filter_subjects = {"cpp.ordc.b"};
    config.name_prefix = "cppmine";
    config.inactive_threshold = std::chrono::milliseconds(20000);
    config.max_deliver = 1;
    config.filter_subjects_as_list = true;
    config.metadata = {{"team", "billing"}, {"tier", "2"}, {"quote", "say \"hi\""}};
    natsio::OrderedConsumer oc = js.ordered_consumer("CPP_ORDC", config);
    std::string started = oc.start();
    EXPECT_EQ(json_name(started), "cppmine_1") << started;
    std::string info = js.consumer_info("CPP_ORDC", "cppmine_1");
    EXPECT_TRUE(contains(info, R"("inactive_threshold":20000000000)")) << info;
    EXPECT_TRUE(contains(info, R"("max_deliver":1,)")) << info;
    EXPECT_TRUE(contains(info, R"("filter_subjects":["cpp.ordc.b"])")) << info;
    EXPECT_FALSE(contains(info, R"("filter_subject":)")) << info;
    EXPECT_TRUE(contains(info, R"("team":"billing")")) << info;
    EXPECT_TRUE(contains(info, R"("tier":"2")")) << info;
    EXPECT_TRUE(contains(info, R"("quote":"say \"hi\"")")) << info;
    natsio::Messages msgs = oc.messages(short_pulls(true));
    EXPECT_EQ(next_item(msgs).data(), "b0");
    // The next run's consumer (the second one) carries it too.
    msgs.stop();
    natsio::Messages again = oc.messages(short_pulls(false));
    ASSERT_TRUE(wait_until([&] { return has_consumer(js, "CPP_ORDC", "cppmine_2"); }));
    std::string info2nd = js.consumer_info("CPP_ORDC", "cppmine_2");
    EXPECT_TRUE(contains(info2nd, R"("team":"billing")")) << info2nd;
    oc.stop();
    EXPECT_FALSE(has_consumer(js, "CPP_ORDC", "cppmine_1"));
    EXPECT_FALSE(has_consumer(js, "CPP_ORDC", "cppmine_2"));

    // Nothing asked: a NUID name, 5 minutes, max_deliver not set, the one
    // filter as filter_subject (as nats.go).
    natsio::OrderedConsumerConfig plain;
    plain.filter_subjects = {"cpp.ordc.b"};
    natsio::OrderedConsumer defaults = js.ordered_consumer("CPP_ORDC", plain);
    std::string info2 = defaults.start();
    EXPECT_EQ(json_name(info2).size(), 24u) << info2;
    EXPECT_TRUE(contains(info2, R"("inactive_threshold":300000000000)")) << info2;
    EXPECT_TRUE(contains(info2, R"("max_deliver":-1)")) << info2;
    EXPECT_TRUE(contains(info2, R"("filter_subject":"cpp.ordc.b")")) << info2;
    EXPECT_FALSE(contains(info2, R"("team":)")) << info2;
    defaults.stop();

    natsio::OrderedConsumerConfig bad;
    auto make_bad = [&] { (void)js.ordered_consumer("CPP_ORDC", bad); };
    bad.name_prefix = "a.b";
    expect_throws<natsio::InvalidArgumentError>(NATSIO_ERR_INVALID_ARGUMENT, make_bad);
    bad.name_prefix = "bad\xff";
    expect_throws<natsio::InvalidUtf8Error>(NATSIO_ERR_INVALID_UTF8, make_bad);
    bad.name_prefix = std::string("nul\0byte", 8);
    expect_throws<natsio::InvalidArgumentError>(NATSIO_ERR_INVALID_ARGUMENT, make_bad);
    bad = {};
    bad.metadata = {{"team", "bad\xff"}};
    std::string not_utf8 = expect_throws<natsio::InvalidUtf8Error>(NATSIO_ERR_INVALID_UTF8, make_bad);
    EXPECT_TRUE(contains(not_utf8, "metadata_json")) << not_utf8;
    bad = {};
    bad.inactive_threshold = std::chrono::milliseconds(-1);
    std::string what =
        expect_throws<natsio::InvalidArgumentError>(NATSIO_ERR_INVALID_ARGUMENT, make_bad);
    EXPECT_TRUE(contains(what, "inactive_threshold")) << what;
    js.delete_stream("CPP_ORDC");
}

TEST(Ordered, UntilDrainedIdleTimeoutHealingAndFutures) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    js.create_stream(R"({"name":"CPP_ORDH","subjects":["cpp.ordh"],"storage":"memory"})");
    natsio::OrderedConsumer oc = js.ordered_consumer("CPP_ORDH");
    // Empty stream: until_drained ends at once.
    natsio::Messages empty = oc.messages_async(short_pulls(true)).get();
    EXPECT_EQ(empty.next(std::chrono::milliseconds(2000)), std::nullopt);

    for (int i = 0; i < 3; ++i) js.publish("cpp.ordh", "m" + std::to_string(i));
    std::string info = oc.start_async().get();
    std::string name = json_name(info);
    natsio::Messages msgs = oc.messages(short_pulls(false, std::chrono::milliseconds(400)));
    for (std::uint64_t seq = 1; seq <= 3; ++seq) {
        EXPECT_EQ(next_item(msgs).js_metadata().stream_seq, seq);
    }
    // Healing: the consumer deleted under the run; no gap, no duplicate.
    js.delete_consumer("CPP_ORDH", name);
    for (int i = 3; i < 6; ++i) js.publish("cpp.ordh", "m" + std::to_string(i));
    for (std::uint64_t seq = 4; seq <= 6; ++seq) {
        natsio::Msg msg = next_item(msgs);
        EXPECT_EQ(msg.js_metadata().stream_seq, seq);
        EXPECT_NE(msg.js_metadata().consumer, name);
    }
    // Then nothing for the idle timeout: NoMessagesError.
    expect_throws<natsio::NoMessagesError>(NATSIO_ERR_NO_MESSAGES,
                                           [&] { (void)msgs.next(std::chrono::milliseconds(5000)); });
    oc.stop_async().get();
    js.delete_stream("CPP_ORDH");
}

TEST(Ordered, BadInput) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    expect_throws<natsio::InvalidArgumentError>(NATSIO_ERR_INVALID_ARGUMENT,
                                                [&] { (void)js.ordered_consumer("a.b"); });
    natsio::OrderedConsumerConfig config;
    config.filter_subjects = {"bad..subject"};
    expect_throws<natsio::BadSubjectError>(NATSIO_ERR_BAD_SUBJECT,
                                           [&] { (void)js.ordered_consumer("S", config); });
    config = {};
    config.deliver_policy = natsio::DeliverPolicy::ByStartSequence;
    expect_throws<natsio::InvalidArgumentError>(NATSIO_ERR_INVALID_ARGUMENT,
                                                [&] { (void)js.ordered_consumer("S", config); });
    config.opt_start_seq = 0;
    expect_throws<natsio::InvalidArgumentError>(NATSIO_ERR_INVALID_ARGUMENT,
                                                [&] { (void)js.ordered_consumer("S", config); });
    natsio::OrderedConsumer missing = js.ordered_consumer("CPP_ORD_MISSING");
    expect_throws<natsio::StreamNotFoundError>(NATSIO_ERR_STREAM_NOT_FOUND,
                                               [&] { (void)missing.start(); });
    natsio::OrderedMessagesOptions options;
    options.expires = std::chrono::milliseconds(10);
    expect_throws<natsio::InvalidArgumentError>(NATSIO_ERR_INVALID_ARGUMENT,
                                                [&] { (void)missing.messages(options); });
    natsio::OrderedConsumer none;
    expect_throws<natsio::NullArgumentError>(NATSIO_ERR_NULL_ARGUMENT, [&] { none.stop(); });
}
