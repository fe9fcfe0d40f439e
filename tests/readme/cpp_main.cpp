// README fragments that set up everything themselves (but for the chrono
// literals, 2s, 500ms, which a README declares once, in its first
// fragment). An exception that escapes the fragment fails the run.
#include <natsio/natsio.hpp>
#include <natsio/jetstream.hpp>
#include <chrono>
#include <cstdint>
#include <exception>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>
using namespace std::chrono_literals;
/*@TOP@*/

int main() {
    try {
        /*@BODY@*/
    } catch (const std::exception& e) {
        std::cerr << "uncaught: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
