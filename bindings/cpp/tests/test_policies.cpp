// Pending-limit policies of the C++ binding under real overload: a
// publisher client floods an iterator subscription of another client that
// is not read until the flood has been received, so each policy's outcome
// is exact (as in tests/c/test_policies.c): DropNew keeps the first LIMIT,
// DropOld the last LIMIT, Block loses nothing while the queue stays at the
// limit (the reader is held back), Error fails the subscription.
//
// "Received" without sleeping: the publisher flushes (the server has routed
// every message to the subscriber's connection), then the subscriber
// flushes (its PONG is queued behind those messages). Under Block that
// second flush cannot complete until the consumer reads: that is the test.
#include "support.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

using namespace natsio_test;

namespace {

constexpr int kFlood = 2000;
constexpr std::int64_t kLimit = 50;

struct Reports {
    std::mutex mutex;
    std::vector<natsio::AsyncError> errors;

    std::vector<natsio::AsyncError> snapshot() {
        std::lock_guard<std::mutex> lock(mutex);
        return errors;
    }
};

natsio::Client connect_reporting(const std::shared_ptr<Reports>& reports) {
    natsio::Options options;
    options.set_url(server_url()).on_error([reports](const natsio::AsyncError& e) {
        std::lock_guard<std::mutex> lock(reports->mutex);
        reports->errors.push_back(e);
    });
    return natsio::Client::connect(options);
}

natsio::Subscription subscribe_limited(const natsio::Client& client, const std::string& subj,
                                       natsio::PendingPolicy policy) {
    natsio::SubscribeOptions options;
    options.pending_msgs_limit = kLimit;
    options.pending_bytes_limit = -1;
    options.policy = policy;
    natsio::Subscription sub = client.subscribe(subj, options);
    client.flush();  // the server knows the subscription before the flood
    return sub;
}

// Publishes "0".."kFlood-1" and waits until the server has routed them all.
void flood(const natsio::Client& publisher, const std::string& subj) {
    for (int i = 0; i < kFlood; ++i) {
        publisher.publish(subj, std::to_string(i));
    }
    publisher.flush(10s);
}

// Reads until nothing comes for 200 ms: the payloads as numbers.
std::vector<int> read_all(const natsio::Subscription& sub) {
    std::vector<int> got;
    try {
        while (auto msg = sub.next(200ms)) {
            got.push_back(std::stoi(std::string(msg->data())));
        }
        ADD_FAILURE() << "the subscription ended";
    } catch (const natsio::TimeoutError&) {
    }
    return got;
}

std::vector<int> range(int from, int to) {
    std::vector<int> out;
    for (int i = from; i < to; ++i) {
        out.push_back(i);
    }
    return out;
}

// The error handler got a slow-consumer report naming `sub`.
void expect_slow_consumer_reported(const std::shared_ptr<Reports>& reports,
                                   const natsio::Subscription& sub) {
    auto reported = [&] {
        for (const natsio::AsyncError& e : reports->snapshot()) {
            if (e.status == NATSIO_ERR_SLOW_CONSUMER) {
                return true;
            }
        }
        return false;
    };
    ASSERT_TRUE(wait_until(reported)) << "no SlowConsumer report";
    for (const natsio::AsyncError& e : reports->snapshot()) {
        if (e.status == NATSIO_ERR_SLOW_CONSUMER) {
            EXPECT_EQ(e.source, natsio::AsyncError::Source::Library);
            EXPECT_EQ(e.sid, sub.sid());
            EXPECT_EQ(e.subject, sub.subject());
            EXPECT_THROW(e.rethrow(), natsio::SlowConsumerError);
        }
    }
}

}  // namespace

namespace {

// DropNew and DropOld differ only in which kLimit of the kFlood messages
// they keep: both hold exactly kLimit, count the rest as dropped and report
// the slow consumer once.
void expect_keeps(natsio::PendingPolicy policy, const std::vector<int>& kept) {
    auto reports = std::make_shared<Reports>();
    natsio::Client client = connect_reporting(reports);
    natsio::Client publisher = connect();
    natsio::Subscription sub = subscribe_limited(client, subject("f"), policy);
    flood(publisher, subject("f"));
    client.flush(10s);

    natsio::IterStats stats = sub.stats();
    EXPECT_EQ(stats.pending_items, static_cast<std::uint64_t>(kLimit));
    EXPECT_EQ(stats.dropped, static_cast<std::uint64_t>(kFlood - kLimit));
    EXPECT_EQ(read_all(sub), kept);
    stats = sub.stats();
    EXPECT_EQ(stats.delivered, static_cast<std::uint64_t>(kLimit));
    EXPECT_EQ(stats.dropped, static_cast<std::uint64_t>(kFlood - kLimit));
    EXPECT_EQ(client.stats().in_msgs, static_cast<std::uint64_t>(kFlood));
    expect_slow_consumer_reported(reports, sub);
}

}  // namespace

TEST(Policies, DropNewKeepsTheFirstMessages) {
    expect_keeps(natsio::PendingPolicy::DropNew, range(0, kLimit));
}

TEST(Policies, DropOldKeepsTheLastMessages) {
    expect_keeps(natsio::PendingPolicy::DropOld, range(kFlood - kLimit, kFlood));
}

TEST(Policies, BlockHoldsTheReaderAtTheLimitAndLosesNothing) {
    auto reports = std::make_shared<Reports>();
    natsio::Client client = connect_reporting(reports);
    natsio::Client publisher = connect();
    natsio::Subscription sub =
        subscribe_limited(client, subject("f"), natsio::PendingPolicy::Block);
    flood(publisher, subject("f"));

    // The reader pauses at the limit: the subscriber's PONG, behind the
    // flood, cannot be read while nobody reads the subscription (an
    // unlimited queue would take the whole flood and the PONG at once).
    ASSERT_TRUE(wait_until([&] { return sub.stats().pending_items >= kLimit; }));
    expect_throws<natsio::TimeoutError>(NATSIO_ERR_TIMEOUT, [&] { client.flush(500ms); });
    // The message that found the queue full is kept: at most one over.
    natsio::IterStats stats = sub.stats();
    EXPECT_LE(stats.pending_items, static_cast<std::uint64_t>(kLimit + 1));
    EXPECT_EQ(stats.dropped, 0u);

    // Everything arrives in order as the consumer catches up, and the
    // queue never grows past the limit on the way.
    std::uint64_t most_pending = 0;
    for (int i = 0; i < kFlood; ++i) {
        natsio::Msg msg = next_item(sub);
        ASSERT_EQ(std::string(msg.data()), std::to_string(i));
        std::uint64_t pending = sub.stats().pending_items;
        most_pending = pending > most_pending ? pending : most_pending;
    }
    EXPECT_LE(most_pending, static_cast<std::uint64_t>(kLimit + 1));
    expect_quiet(sub);
    stats = sub.stats();
    EXPECT_EQ(stats.dropped, 0u);
    EXPECT_EQ(stats.delivered, static_cast<std::uint64_t>(kFlood));
    // Caught up: the connection works normally again, nothing was reported.
    client.flush(10s);
    for (const natsio::AsyncError& e : reports->snapshot()) {
        ADD_FAILURE() << "unexpected report: " << e.status << " " << e.text;
    }
}

TEST(Policies, ErrorFailsTheSubscription) {
    auto reports = std::make_shared<Reports>();
    natsio::Client client = connect_reporting(reports);
    natsio::Client publisher = connect();
    natsio::Subscription sub =
        subscribe_limited(client, subject("f"), natsio::PendingPolicy::Error);
    flood(publisher, subject("f"));
    client.flush(10s);

    // The first message over the limit ended it: the backlog is discarded
    // and the failure is what every call gets.
    EXPECT_TRUE(sub.is_closed());
    EXPECT_EQ(sub.stats().pending_items, 0u);
    expect_throws<natsio::SlowConsumerError>(NATSIO_ERR_SLOW_CONSUMER, [&] { sub.next(1s); });
    expect_throws<natsio::SlowConsumerError>(NATSIO_ERR_SLOW_CONSUMER, [&] { sub.next(1s); });
    expect_slow_consumer_reported(reports, sub);
    // The connection itself is unaffected.
    client.flush(10s);
}

namespace {

// Sends `frames` as a raw client of the shared server and waits for the
// PONG of a PING sent after them (the server has handled them then).
bool raw_client_send(const std::string& frames) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<std::uint16_t>(nt_server_port(shared_server())));
    const std::string out = "CONNECT {\"verbose\":false,\"headers\":true}\r\n" + frames + "PING\r\n";
    bool ok = fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
              ::send(fd, out.data(), out.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(out.size());
    std::string in;
    while (ok && in.find("PONG\r\n") == std::string::npos) {
        char buf[512];
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        ok = n > 0 && in.find("-ERR") == std::string::npos;
        if (n > 0) in.append(buf, static_cast<std::size_t>(n));
    }
    if (fd >= 0) ::close(fd);
    return ok;
}

}  // namespace

// A header block with a corrupt line is delivered with its good lines and
// flagged (the reference client's headers_error); a clean one is not.
TEST(Messages, CorruptHeaderBlockIsFlagged) {
    natsio::Client client = connect();
    natsio::Subscription sub = client.subscribe("cpp.hdr.>");
    client.flush();
    const std::string bad = "NATS/1.0\r\nGood: yes\r\nno colon here\r\n\r\n";
    const std::string good = "NATS/1.0\r\nGood: yes\r\n\r\n";
    std::string frames;
    for (const auto& [tail, block] : {std::pair{"bad", bad}, std::pair{"good", good}}) {
        frames += std::string("HPUB cpp.hdr.") + tail + " " + std::to_string(block.size()) + " " +
                  std::to_string(block.size() + 4) + "\r\n" + block + "data\r\n";
    }
    ASSERT_TRUE(raw_client_send(frames));
    natsio::Msg first = next_item(sub);
    EXPECT_EQ(first.subject(), "cpp.hdr.bad");
    EXPECT_TRUE(first.headers_malformed());
    EXPECT_EQ(first.headers().get("Good"), std::optional<std::string_view>("yes"));
    EXPECT_EQ(first.data(), "data");
    natsio::Msg second = next_item(sub);
    EXPECT_EQ(second.subject(), "cpp.hdr.good");
    EXPECT_FALSE(second.headers_malformed());
}
