// The C++ side of tests/install/consumer.c: a program of a libnatsio user,
// built through find_package(natsio) and natsio::cpp against an installed
// libnatsio. Publishes, requests and does a Key-Value put/get.
//
//   consumer_cpp <url> <name>
#include <natsio/jetstream.hpp>
#include <natsio/natsio.hpp>

#include <chrono>
#include <iostream>
#include <optional>
#include <string>

int main(int argc, char** argv) {
    using namespace std::chrono_literals;
    if (argc != 3) {
        std::cerr << "usage: consumer_cpp <url> <name>\n";
        return 2;
    }
    const std::string name = argv[2];
    try {
        natsio::Client client = natsio::Client::connect(argv[1]);

        natsio::Subscription sub = client.subscribe("install." + name + ".pub");
        client.publish("install." + name + ".pub", "hello");
        std::optional<natsio::Msg> got = sub.next(2s);
        if (!got || got->data() != "hello") throw std::runtime_error("published hello, did not receive it");

        natsio::Subscription service = client.subscribe(
            "install." + name + ".echo", [](natsio::MsgView m) { m.respond(m.data()); });
        natsio::Msg reply = client.request("install." + name + ".echo", "ping", 2s);
        if (reply.data() != "ping") throw std::runtime_error("requested ping, got " + std::string(reply.data()));

        natsio::JetStream js(client);
        natsio::KeyValue kv = js.create_key_value(R"({"bucket":"install_)" + name + R"("})");
        std::uint64_t revision = kv.put("greeting", "hi there");
        natsio::KvEntry entry = kv.get("greeting");
        if (entry.value() != "hi there" || entry.revision() != revision)
            throw std::runtime_error("KV get did not return the put");
    } catch (const natsio::Error& e) {
        std::cerr << "consumer_cpp: " << e.what() << "\n";
        return 1;
    } catch (const std::exception& e) {
        std::cerr << "consumer_cpp: " << e.what() << "\n";
        return 1;
    }
    std::cout << "ok " << name << " (libnatsio " << natsio_version() << ")\n";
    return 0;
}
