// README fragments that use `client`, `js` (its JetStream context) and
//   kv       the bucket "cfg", with app.color = blue and app.size = XL;
//   keys     those two keys; use(KvEntry) takes each entry read;
//   ORDERS   a stream (orders.>) whose pull consumer "work" holds three
//            orders; handle(data) takes each, report(exception_ptr) an
//            error that ended a feed.
// Afterwards every key was used once, the three orders were handled
// (a consume callback may still be at work: waited for, up to 5 s) and
// nothing reached the client's on_error handler.
#include <natsio/natsio.hpp>
#include <natsio/jetstream.hpp>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <fstream>
#include <iostream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>
#include "readme_harness.hpp"
using namespace std::chrono_literals;
/*@TOP@*/

static std::atomic<int> used{0}, handled{0}, reported{0}, async_errors{0};

static void use(const natsio::KvEntry& e) {
    std::cout << "use " << e.key() << " = " << e.value() << "\n";
    ++used;
}

static bool handle(std::string_view data) {
    std::cout << "handle " << data << "\n";
    ++handled;
    return true;
}

static void report(std::exception_ptr error) {
    try {
        std::rethrow_exception(error);
    } catch (const std::exception& e) {
        std::cerr << "report: " << e.what() << "\n";
    }
    ++reported;
}

int main() {
    try {
        natsio::Client client = connect_counting_errors(async_errors);
        natsio::JetStream js(client);
        natsio::KeyValue kv = js.create_key_value(R"({"bucket":"cfg","history":5})");
        kv.put("app.color", "blue");
        kv.put("app.size", "XL");
        const std::vector<std::string> keys = {"app.color", "app.size"};
        js.create_stream(R"({"name":"ORDERS","subjects":["orders.>"]})");
        js.create_consumer("ORDERS", R"({"durable_name":"work","ack_policy":"explicit"})");
        for (const char* order : {"pizza", "pasta", "salad"}) js.publish("orders.new", order);

        /*@BODY@*/

        for (auto deadline = std::chrono::steady_clock::now() + 5s;
             handled < 3 && std::chrono::steady_clock::now() < deadline;) {
            std::this_thread::sleep_for(10ms);
        }
        if (used != static_cast<int>(keys.size()) || handled != 3 || reported != 0 ||
            async_errors != 0) {
            std::cerr << "used " << used << " of " << keys.size() << " keys, handled " << handled
                      << " of 3 orders, " << reported << " reported, " << async_errors
                      << " async errors\n";
            return 1;
        }
    } catch (const std::exception& e) {
        std::cerr << "uncaught: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
