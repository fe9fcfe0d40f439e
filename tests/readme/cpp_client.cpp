// README fragments that use `client` (a connected natsio::Client). An
// exception that escapes the fragment fails the run.
#include <natsio/natsio.hpp>
#include <natsio/jetstream.hpp>
#include <chrono>
#include <cstdint>
#include <exception>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>
/*@TOP@*/

int main() {
    try {
        natsio::Client client = natsio::Client::connect("nats://127.0.0.1:4222");
        /*@BODY@*/
    } catch (const std::exception& e) {
        std::cerr << "uncaught: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
