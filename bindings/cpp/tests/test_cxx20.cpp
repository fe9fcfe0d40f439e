// The binding compiled as C++20: std::span payloads, designated
// initializers for option structs, and a publish/request round trip.
#include "support.hpp"

#include <array>
#include <span>

#if __cplusplus < 202002L
#error "this translation unit must be compiled as C++20"
#endif

using namespace natsio_test;

TEST(Cxx20, SpanPayloadAndDesignatedInitializers) {
    natsio::Client client = connect();
    natsio::Subscription sub = client.subscribe(subject("span"), {.pending_msgs_limit = 100});
    client.flush();
    const std::array<std::byte, 3> bytes{std::byte{1}, std::byte{0}, std::byte{2}};
    client.publish(subject("span"), std::span<const std::byte>(bytes));
    natsio::Msg msg = next_item(sub);
    ASSERT_EQ(msg.bytes().size(), 3u);
    EXPECT_EQ(msg.bytes()[1], std::byte{0});
    EXPECT_EQ(msg.bytes()[2], std::byte{2});
}

TEST(Cxx20, RequestRoundTrip) {
    natsio::Client client = connect();
    natsio::Subscription responder = client.subscribe(
        subject("svc"), [](natsio::MsgView msg) { msg.respond(msg.data()); },
        {.queue = "svc"});
    client.flush();
    EXPECT_EQ(client.request(subject("svc"), "c++20", 5s).data(), "c++20");
    natsio::Replies replies = client.request_many(subject("svc"), "x", {.max_msgs = 1});
    int count = 0;
    for (natsio::Msg& reply : replies) {
        EXPECT_EQ(reply.data(), "x");
        ++count;
    }
    EXPECT_EQ(count, 1);
    EXPECT_THROW(client.request(subject("nobody"), "x", 2s), natsio::NoRespondersError);
}
