// Each verb of the binding against a real nats-server.
#include "support.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <set>
#include <vector>

using namespace natsio_test;
using natsio::Msg;
using natsio::MsgView;

TEST(Verbs, PublishAndNextMsgCarryBinaryPayload) {
    natsio::Client client = connect();
    natsio::Subscription sub = client.subscribe(subject("bin"));
    client.flush();

    const std::vector<std::uint8_t> payload{0x00, 0x01, 0xff, 0x00, 0x7f};
    client.publish(subject("bin"), payload);

    Msg msg = next_item(sub);
    EXPECT_EQ(msg.subject(), subject("bin"));
    ASSERT_EQ(msg.bytes().size(), payload.size());
    EXPECT_TRUE(std::equal(payload.begin(), payload.end(), msg.bytes().begin(),
                           [](std::uint8_t a, std::byte b) { return std::byte{a} == b; }));
    EXPECT_FALSE(msg.reply().has_value());
    EXPECT_FALSE(msg.headers());
    EXPECT_EQ(msg.headers().size(), 0u);
    EXPECT_FALSE(msg.headers().get("anything").has_value());
    EXPECT_EQ(msg.sid(), sub.sid());
    EXPECT_EQ(sub.subject(), subject("bin"));
    EXPECT_FALSE(sub.queue().has_value());
}

TEST(Verbs, PublishWithReplyAndHeaders) {
    natsio::Client client = connect();
    natsio::Subscription sub = client.subscribe(subject("h"));
    client.flush();

    natsio::Headers headers;
    headers.add("X-Multi", "one").add("X-Multi", "two").set("X-Single", "a");
    headers.set("X-Single", "b");
    headers.add("X-Gone", "soon");
    EXPECT_TRUE(headers.remove("X-Gone"));
    EXPECT_FALSE(headers.remove("X-Gone"));
    client.publish_with(subject("h"), subject("reply"), headers, "body");

    Msg msg = next_item(sub);
    EXPECT_EQ(msg.data(), "body");
    ASSERT_TRUE(msg.reply().has_value());
    EXPECT_EQ(*msg.reply(), subject("reply"));
    natsio::HeadersView received = msg.headers();
    ASSERT_TRUE(received);
    EXPECT_EQ(received.get("X-Single"), std::optional<std::string_view>("b"));
    EXPECT_EQ(received.count("X-Multi"), 2u);
    EXPECT_EQ(received.values("X-Multi"), (std::vector<std::string_view>{"one", "two"}));
    EXPECT_EQ(received.get_nth("X-Multi", 1), std::optional<std::string_view>("two"));
    EXPECT_FALSE(received.get("x-single").has_value()) << "lookup is case-sensitive";
    EXPECT_FALSE(received.get("X-Gone").has_value());

    std::vector<std::pair<std::string, std::string>> pairs;
    for (auto [name, value] : received) {
        pairs.emplace_back(name, value);
    }
    EXPECT_EQ(pairs.size(), received.size());
    EXPECT_NE(std::find(pairs.begin(), pairs.end(),
                        std::pair<std::string, std::string>("X-Multi", "two")),
              pairs.end());

    // An owned copy survives the message.
    natsio::Headers copy = natsio::Headers::copy_of(received);
    msg = Msg();
    EXPECT_EQ(copy.get("X-Single"), std::optional<std::string_view>("b"));
}

TEST(Verbs, CallbackSubscriptionDeliversInOrder) {
    natsio::Client client = connect();
    std::mutex mutex;
    std::vector<std::string> seen;
    natsio::Subscription sub = client.subscribe(subject("cb"), [&](MsgView msg) {
        std::lock_guard<std::mutex> lock(mutex);
        seen.emplace_back(msg.data());
    });
    client.flush();
    for (int i = 0; i < 100; ++i) {
        client.publish(subject("cb"), std::to_string(i));
    }
    client.flush();
    ASSERT_TRUE(wait_until([&] {
        std::lock_guard<std::mutex> lock(mutex);
        return seen.size() == 100;
    }));
    std::lock_guard<std::mutex> lock(mutex);
    for (int i = 0; i < 100; ++i) {
        EXPECT_EQ(seen[static_cast<std::size_t>(i)], std::to_string(i));
    }
}

TEST(Verbs, QueueGroupDeliversEachMessageOnce) {
    natsio::Client client = connect();
    std::atomic<int> first{0};
    std::atomic<int> second{0};
    natsio::SubscribeOptions options;
    options.queue = "workers";
    natsio::Subscription a = client.subscribe(subject("q"), [&](MsgView) { ++first; }, options);
    natsio::Subscription b = client.subscribe(subject("q"), [&](MsgView) { ++second; }, options);
    EXPECT_EQ(a.queue(), std::optional<std::string_view>("workers"));
    client.flush();
    for (int i = 0; i < 200; ++i) {
        client.publish(subject("q"), "x");
    }
    client.flush();
    ASSERT_TRUE(wait_until([&] { return first + second == 200; }));
    std::this_thread::sleep_for(50ms); // an absence: no duplicate within 50 ms
    EXPECT_EQ(first + second, 200);
}

TEST(Verbs, RequestGetsTheResponderReply) {
    natsio::Client client = connect();
    natsio::Subscription responder = client.subscribe(subject("svc"), [](MsgView msg) {
        std::string answer = "re:" + std::string(msg.data());
        auto tag = msg.headers().get("X-Tag");
        natsio::Headers headers;
        headers.set("X-Tag", tag ? *tag : "none");
        msg.respond(headers, answer);
    });
    client.flush();

    Msg reply = client.request(subject("svc"), "ping", 5s);
    EXPECT_EQ(reply.data(), "re:ping");
    EXPECT_EQ(reply.headers().get("X-Tag"), std::optional<std::string_view>("none"));

    natsio::Headers headers;
    headers.set("X-Tag", "t1");
    Msg tagged = client.request(subject("svc"), "x", 5s, headers);
    EXPECT_EQ(tagged.headers().get("X-Tag"), std::optional<std::string_view>("t1"));
}

// natsio::set_wait_spin changes how a blocked thread waits, not what it
// gets: replies with spinning off and with a spin far longer than the
// timeout, and that timeout kept.
TEST(Verbs, WaitSpinKeepsRepliesAndTimeouts) {
    natsio::Client client = connect();
    natsio::Subscription responder =
        client.subscribe(subject("svc"), [](MsgView msg) { msg.respond(msg.data()); });
    natsio::Subscription silent = client.subscribe(subject("silent"));
    client.flush();
    for (auto spin : {0us, 200us, std::chrono::microseconds(5s)}) {
        natsio::set_wait_spin(spin);
        EXPECT_EQ(client.request(subject("svc"), "ping", 5s).data(), "ping");
        auto start = std::chrono::steady_clock::now();
        EXPECT_THROW(client.request(subject("silent"), "?", 100ms), natsio::TimeoutError);
        EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
    }
    natsio::set_wait_spin(200us);
}

TEST(Verbs, RequestAsyncFulfilsTheFuture) {
    natsio::Client client = connect();
    natsio::Subscription responder =
        client.subscribe(subject("svc"), [](MsgView msg) { msg.respond(msg.data()); });
    client.flush();

    natsio::Future<Msg> result = client.request_async(subject("svc"), "async", 5s);
    EXPECT_TRUE(result);
    EXPECT_TRUE(result.wait_for(5s));
    EXPECT_TRUE(result.ready());
    EXPECT_EQ(result.status(), NATSIO_OK);
    EXPECT_EQ(result.get().data(), "async");
    // A reply is a copy each time it is read.
    EXPECT_EQ(result.get().data(), "async");

    // A std::future taken from it stays valid when the Future is gone.
    std::future<Msg> future;
    {
        natsio::Future<Msg> scoped = client.request_async(subject("svc"), "detached", 5s);
        future = scoped.to_std_future();
    }
    ASSERT_EQ(future.wait_for(5s), std::future_status::ready);
    EXPECT_EQ(future.get().data(), "detached");

    // Waiting with the named timeouts.
    natsio::Future<Msg> waited = client.request_async(subject("svc"), "w");
    EXPECT_TRUE(waited.wait_for(natsio::forever));
    EXPECT_TRUE(waited.wait_for(natsio::no_wait));
    EXPECT_EQ(waited.get().data(), "w");
}

TEST(Verbs, RequestManyIteratesReplies) {
    natsio::Client client = connect();
    std::vector<natsio::Subscription> responders;
    for (int i = 0; i < 3; ++i) {
        responders.push_back(client.subscribe(subject("many"), [i](MsgView msg) {
            msg.respond("responder-" + std::to_string(i));
        }));
    }
    client.flush();

    natsio::RequestManyOptions options;
    options.max_msgs = 3;
    options.timeout = 5s;
    std::set<std::string> answers;
    for (Msg& reply : client.request_many(subject("many"), "who", options)) {
        answers.emplace(reply.data());
    }
    EXPECT_EQ(answers, (std::set<std::string>{"responder-0", "responder-1", "responder-2"}));

    // next() returns std::nullopt once a stall ends the replies.
    natsio::RequestManyOptions stall;
    stall.stall = 300ms;
    stall.timeout = 5s;
    natsio::Replies replies = client.request_many(subject("many"), "who", stall);
    int count = 0;
    while (auto reply = replies.next()) {
        ++count;
    }
    EXPECT_EQ(count, 3);
}

TEST(Verbs, RangeForEndsWhenSubscriptionEnds) {
    natsio::Client client = connect();
    natsio::Subscription sub = client.subscribe(subject("r"));
    sub.unsubscribe_after(3);
    client.flush();
    for (int i = 0; i < 5; ++i) {
        client.publish(subject("r"), std::to_string(i));
    }
    client.flush();
    std::vector<std::string> got;
    for (Msg& msg : sub) {
        got.emplace_back(msg.data());
    }
    EXPECT_EQ(got, (std::vector<std::string>{"0", "1", "2"}));
    EXPECT_TRUE(sub.is_closed());
    // Ended: next() says so again, at once.
    EXPECT_FALSE(sub.next(5s).has_value());
}

TEST(Verbs, NextTimesOutThenDelivers) {
    natsio::Client client = connect();
    natsio::Subscription sub = client.subscribe(subject("quiet"));
    expect_throws<natsio::TimeoutError>(NATSIO_ERR_TIMEOUT, [&] { sub.next(30ms); });
    expect_throws<natsio::TimeoutError>(NATSIO_ERR_TIMEOUT, [&] { sub.next(natsio::no_wait); });
    client.publish(subject("quiet"), "now");
    std::optional<Msg> msg = sub.next(5s);
    ASSERT_TRUE(msg.has_value());
    EXPECT_EQ(msg->data(), "now");
    // A negative timeout other than the named ones is the library's
    // argument error.
    expect_throws<natsio::InvalidArgumentError>(NATSIO_ERR_INVALID_ARGUMENT,
                                                [&] { sub.next(-7ms); });
}

TEST(Verbs, ClientQueriesAndFlush) {
    natsio::Client client = connect();
    EXPECT_EQ(client.status(), natsio::ConnStatus::Connected);
    EXPECT_GT(client.max_payload(), 0);
    EXPECT_NE(client.server_info().find("\"server_id\""), std::string::npos);
    EXPECT_EQ(client.connected_url().find("127.0.0.1:" + std::to_string(nt_server_port(shared_server()))) !=
                  std::string::npos,
              true);
    EXPECT_EQ(client.new_inbox().rfind("_INBOX.", 0), 0u);
    EXPECT_FALSE(natsio::version().empty());

    natsio::Subscription sub = client.subscribe(subject("s"));
    client.flush();
    client.publish(subject("s"), "12345");
    natsio::Future<void> flushed = client.flush_async();
    flushed.get();
    (void)next_item(sub);
    natsio::ClientStats stats = client.stats();
    EXPECT_EQ(stats.out_msgs, 1u);
    EXPECT_EQ(stats.out_bytes, 5u);
    EXPECT_EQ(stats.in_msgs, 1u);
    natsio::IterStats sub_stats = sub.stats();
    EXPECT_EQ(sub_stats.delivered, 1u);
    EXPECT_EQ(sub_stats.dropped, 0u);
    EXPECT_EQ(sub_stats.pending_items, 0u);
}

TEST(Verbs, SubscriptionDrainHandlesBacklog) {
    natsio::Client client = connect();
    std::atomic<int> handled{0};
    natsio::Subscription sub = client.subscribe(subject("d"), [&](MsgView) {
        std::this_thread::sleep_for(1ms);
        ++handled;
    });
    client.flush();
    for (int i = 0; i < 30; ++i) {
        client.publish(subject("d"), "x");
    }
    client.flush();
    sub.drain(5s);
    EXPECT_EQ(handled, 30);
    EXPECT_TRUE(sub.is_closed());

    natsio::Subscription other = client.subscribe(subject("d2"), [](MsgView) {});
    other.drain_async().get();
    EXPECT_TRUE(other.is_closed());
}

TEST(Verbs, ClientDrainClosesTheClient) {
    natsio::Client client = connect();
    std::atomic<int> handled{0};
    natsio::Subscription sub = client.subscribe(subject("cd"), [&](MsgView) { ++handled; });
    client.flush();
    for (int i = 0; i < 10; ++i) {
        client.publish(subject("cd"), "x");
    }
    client.drain(5s);
    EXPECT_EQ(handled, 10);
    EXPECT_EQ(client.status(), natsio::ConnStatus::Closed);

    natsio::Client second = connect();
    second.drain_async(5s).get();
    EXPECT_EQ(second.status(), natsio::ConnStatus::Closed);
}

TEST(Verbs, CloneKeepsMessageBeyondHandler) {
    natsio::Client client = connect();
    std::promise<Msg> kept;
    natsio::Subscription sub = client.subscribe(subject("c"), [&](MsgView msg) {
        kept.set_value(msg.clone());
    });
    client.flush();
    client.publish(subject("c"), "keep me");
    auto future = kept.get_future();
    ASSERT_EQ(future.wait_for(5s), std::future_status::ready);
    Msg msg = future.get();
    sub = natsio::Subscription();
    EXPECT_EQ(msg.data(), "keep me");
    EXPECT_EQ(msg.subject(), subject("c"));
}

TEST(Verbs, OptionsApplyToTheConnection) {
    natsio::Options options;
    options.set_url(server_url())
        .set_name("cpp-options")
        .set_echo(false)
        .set_inbox_prefix("_CPP_INBOX")
        .set_connect_timeout(2s)
        .set_request_timeout(2s)
        .set_flush_timeout(2s)
        .set_drain_timeout(2s)
        .set_ping(10s, 2)
        .set_pending_limits(1000, 1 << 20)
        .set_max_pending_size(1 << 20)
        .set_wait_for_write_room(true)
        .set_max_control_line(4096);
    natsio::Client client = natsio::Client::connect(options);
    EXPECT_EQ(client.new_inbox().rfind("_CPP_INBOX.", 0), 0u);

    // echo off: the client does not receive its own publishes.
    natsio::Subscription sub = client.subscribe(subject("echo"));
    client.flush();
    client.publish(subject("echo"), "x");
    client.flush();
    expect_quiet(sub, 100ms);

    natsio::Options servers;
    servers.set_servers({server_url()});
    EXPECT_EQ(natsio::Client::connect(servers).status(), natsio::ConnStatus::Connected);
}

TEST(Verbs, VerboseAndPedanticAreSentAndVerboseAcksAreHarmless) {
    std::mutex mu;
    std::vector<std::string> lines;
    natsio::Options options;
    options.set_url(server_url()).set_verbose(true).set_pedantic(true).on_log(
        natsio::LogLevel::Trace, [&](natsio::LogLevel, std::string_view text) {
            std::lock_guard<std::mutex> lock(mu);
            lines.emplace_back(text);
        });
    {
        natsio::Client client = natsio::Client::connect(options);
        natsio::Subscription sub = client.subscribe(subject("verbose"));
        client.publish(subject("verbose"), "hi");
        EXPECT_EQ(next_item(sub).data(), "hi");
        client.flush();
        EXPECT_EQ(client.status(), natsio::ConnStatus::Connected);
    }
    std::lock_guard<std::mutex> lock(mu);
    auto has = [&](const std::string& part) {
        return std::any_of(lines.begin(), lines.end(), [&](const auto& l) { return l.find(part) != std::string::npos; });
    };
    EXPECT_TRUE(has("\"verbose\":true"));
    EXPECT_TRUE(has("\"pedantic\":true"));
    EXPECT_TRUE(has("<<< +OK"));
    EXPECT_FALSE(has("<<< -ERR"));
}

TEST(Verbs, InboxPrefixReadsBack) {
    EXPECT_EQ(connect().inbox_prefix(), "_INBOX");
    natsio::Options options;
    options.set_url(server_url()).set_inbox_prefix("_CPP_INBOX");
    natsio::Client client = natsio::Client::connect(options);
    EXPECT_EQ(client.inbox_prefix(), "_CPP_INBOX");
    client.close();
    EXPECT_EQ(client.inbox_prefix(), "_CPP_INBOX");
}

TEST(Verbs, RequestManyClosedFromAnotherThread) {
    natsio::Client client = connect();
    natsio::Subscription silent = client.subscribe(subject("silent"));  // never answers
    client.flush();
    natsio::RequestManyOptions options;
    options.timeout = 30s;
    natsio::Replies replies = client.request_many(subject("silent"), "?", options);
    const auto start = std::chrono::steady_clock::now();
    std::thread reader([&] { EXPECT_FALSE(replies.next().has_value()); });
    std::this_thread::sleep_for(100ms);
    replies.stop();
    reader.join();
    EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST(Verbs, OnLogTracesFramesAndNamesTheBinding) {
    std::mutex mu;
    std::vector<std::pair<natsio::LogLevel, std::string>> lines;
    natsio::Options options;
    options.set_url(server_url()).on_log(natsio::LogLevel::Trace, [&](natsio::LogLevel level, std::string_view text) {
        std::lock_guard<std::mutex> lock(mu);
        lines.emplace_back(level, std::string(text));
    });
    {
        natsio::Client client = natsio::Client::connect(options);
        natsio::Subscription sub = client.subscribe(subject("log"));
        client.publish(subject("log"), "hi");
        (void)next_item(sub);
    }
    std::lock_guard<std::mutex> lock(mu);
    auto has = [&](natsio::LogLevel level, const std::string& part) {
        return std::any_of(lines.begin(), lines.end(), [&](const auto& l) {
            return l.first == level && l.second.find(part) != std::string::npos;
        });
    };
    EXPECT_TRUE(has(natsio::LogLevel::Info, "connected to nats://"));
    EXPECT_TRUE(has(natsio::LogLevel::Trace, ">>> CONNECT {"));
    EXPECT_TRUE(has(natsio::LogLevel::Trace, "\"lang\":\"natsio-cpp\""));
    EXPECT_TRUE(has(natsio::LogLevel::Trace, "\"version\":\"" NATSIO_VERSION_STRING "\""));
    EXPECT_TRUE(has(natsio::LogLevel::Trace, ">>> PUB " + subject("log") + " 2 \"hi\""));
    EXPECT_TRUE(has(natsio::LogLevel::Trace, "<<< MSG " + subject("log")));
    EXPECT_TRUE(has(natsio::LogLevel::Info, "closed"));
}
