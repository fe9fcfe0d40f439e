// Publish/subscribe/request with the C++ binding of libnatsio.
//
//   pubsub [nats://127.0.0.1:4222]
//
// Subscribes to "greet.*" with a handler that answers requests, publishes a
// few messages, makes a request, collects replies with request_many and an
// async request, then drains. Exits non-zero (with the error) if anything
// fails, e.g. when no server is running.
#include <natsio/natsio.hpp>

#include <atomic>
#include <chrono>
#include <iostream>
#include <mutex>
#include <optional>
#include <string>

using namespace std::chrono_literals;

namespace {

// The handler runs on a library thread: keep its lines whole.
std::mutex output_mutex;

void say(const std::string& line) {
    std::lock_guard<std::mutex> lock(output_mutex);
    std::cout << line << std::endl;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string url = argc > 1 ? argv[1] : "nats://127.0.0.1:4222";
    try {
        natsio::Options options;
        options.set_url(url).set_name("cpp-pubsub-example").on_error([](const natsio::AsyncError& e) {
            std::lock_guard<std::mutex> lock(output_mutex);
            std::cerr << "async error on '" << e.subject << "': " << e.text << std::endl;
        });
        natsio::Client client = natsio::Client::connect(options);
        say("connected to " + client.connected_url());

        // A callback subscription: prints what it gets and answers requests.
        std::atomic<int> received{0};
        natsio::Subscription greeter = client.subscribe("greet.*", [&](natsio::MsgView msg) {
            ++received;
            say("got '" + std::string(msg.data()) + "' on " + std::string(msg.subject()));
            if (msg.reply()) {
                msg.respond("hello, " + std::string(msg.data()));
            }
        });

        // An iterator subscription, read with next (std::nullopt once it
        // has ended; TimeoutError when nothing came in time).
        natsio::Subscription audit = client.subscribe("greet.>");
        client.flush();

        natsio::Headers headers;
        headers.set("X-Example", "pubsub");
        client.publish("greet.plain", "one");
        client.publish_with("greet.headers", std::nullopt, headers, "two");

        if (std::optional<natsio::Msg> seen = audit.next(2s)) {
            say("audit saw '" + std::string(seen->data()) + "'");
        }
        // Draining waits for an iterator subscription's backlog to be read;
        // this one is done, so stop it.
        audit.stop();

        natsio::Msg reply = client.request("greet.request", "world", 2s);
        say("reply: " + std::string(reply.data()));

        // Every operation also has a future-returning form.
        natsio::Future<natsio::Msg> pending = client.request_async("greet.async", "future", 2s);
        say("async reply: " + std::string(pending.get().data()));

        natsio::RequestManyOptions many;
        many.stall = 200ms;
        for (natsio::Msg& answer : client.request_many("greet.many", "everyone", many)) {
            say("one of many: " + std::string(answer.data()));
        }

        try {
            client.request("nobody.home", "anyone?", 1s);
        } catch (const natsio::NoRespondersError& e) {
            say(std::string("as expected: ") + e.what());
        }

        client.drain(5s);
        say("handled " + std::to_string(received) + " messages");
        return 0;
    } catch (const natsio::Error& e) {
        std::cerr << "pubsub: " << e.what() << " (status " << e.status() << ")\n";
        return 1;
    }
}
