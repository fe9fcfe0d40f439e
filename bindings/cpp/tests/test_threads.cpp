// Publishing from several std::threads on one client: every message
// arrives exactly once, and each thread's messages stay in order.
#include "support.hpp"

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace natsio_test;

TEST(Threads, ConcurrentPublishersDeliverExactCounts) {
    constexpr int kThreads = 4;
    constexpr int kPerThread = 2500;

    natsio::Client subscriber = connect();
    natsio::Client publisher = connect();
    std::mutex mutex;
    std::vector<int> received(kThreads, 0);
    std::vector<int> last_seq(kThreads, -1);
    std::atomic<int> out_of_order{0};
    std::atomic<int> total{0};
    natsio::Subscription sub = subscriber.subscribe(subject("mt"), [&](natsio::MsgView msg) {
        // Payload "<thread>:<sequence>".
        std::string_view data = msg.data();
        std::size_t colon = data.find(':');
        int thread = std::stoi(std::string(data.substr(0, colon)));
        int seq = std::stoi(std::string(data.substr(colon + 1)));
        {
            std::lock_guard<std::mutex> lock(mutex);
            auto index = static_cast<std::size_t>(thread);
            if (seq != last_seq[index] + 1) {
                ++out_of_order;
            }
            last_seq[index] = seq;
            ++received[index];
        }
        ++total;
    });
    subscriber.flush();

    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    const std::string mt_subject = subject("mt");
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            try {
                for (int i = 0; i < kPerThread; ++i) {
                    publisher.publish(mt_subject, std::to_string(t) + ":" + std::to_string(i));
                }
            } catch (const natsio::Error&) {
                ++failures;
            }
        });
    }
    for (std::thread& thread : threads) {
        thread.join();
    }
    publisher.flush(10s);
    EXPECT_EQ(failures, 0);
    ASSERT_TRUE(wait_until([&] { return total == kThreads * kPerThread; }, 20s))
        << "received " << total;
    std::this_thread::sleep_for(50ms); // an absence: no duplicate within 50 ms
    EXPECT_EQ(total, kThreads * kPerThread) << "no duplicates";
    std::lock_guard<std::mutex> lock(mutex);
    for (int t = 0; t < kThreads; ++t) {
        EXPECT_EQ(received[static_cast<std::size_t>(t)], kPerThread) << "thread " << t;
    }
    EXPECT_EQ(out_of_order, 0);
    EXPECT_EQ(publisher.stats().out_msgs, static_cast<std::uint64_t>(kThreads * kPerThread));
    EXPECT_EQ(sub.stats().dropped, 0u);
}

TEST(Threads, ConcurrentRequestsFromThreads) {
    natsio::Client client = connect();
    natsio::Subscription responder = client.subscribe(
        subject("echo"), [](natsio::MsgView msg) { msg.respond(msg.data()); });
    client.flush();
    std::atomic<int> correct{0};
    std::vector<std::thread> threads;
    const std::string echo_subject = subject("echo");
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            try {
                for (int i = 0; i < 50; ++i) {
                    std::string payload = std::to_string(t) + "/" + std::to_string(i);
                    if (client.request(echo_subject, payload, 5s).data() == payload) {
                        ++correct;
                    }
                }
            } catch (const natsio::Error&) {
                // counted as missing replies below
            }
        });
    }
    for (std::thread& thread : threads) {
        thread.join();
    }
    EXPECT_EQ(correct, 200);
}
