// Helpers shared by the C++ binding's JetStream, consumer and watch tests
// (on top of support.hpp).
#ifndef NATSIO_CPP_TEST_JS_SUPPORT_HPP
#define NATSIO_CPP_TEST_JS_SUPPORT_HPP

#include "support.hpp"

#include <natsio/jetstream.hpp>

#include <chrono>
#include <exception>
#include <optional>
#include <string>
#include <typeinfo>

namespace natsio_test {

/// make_error(status) is exactly Expected and can be caught as Base.
template <class Expected, class Base>
void expect_mapped(natsio::Status status) {
    std::exception_ptr error = natsio::make_error(status, "detail");
    try {
        std::rethrow_exception(error);
    } catch (const Base& e) {
        EXPECT_EQ(typeid(e), typeid(Expected)) << "status " << status;
        EXPECT_EQ(e.status(), status);
        EXPECT_EQ(e.detail(), "detail");
        EXPECT_NE(std::string(e.what()).find("detail"), std::string::npos);
    } catch (...) {
        ADD_FAILURE() << "status " << status << " is not caught as the expected base";
    }
}

/// True when `t` is within a minute of the system clock's now.
inline bool near_now(std::chrono::system_clock::time_point t) {
    auto diff = std::chrono::system_clock::now() - t;
    return diff < std::chrono::minutes(1) && diff > -std::chrono::minutes(1);
}

/// Deletes `stream` and the bucket `bucket` through a new connection (for
/// tests that closed their own).
inline void delete_through_new_client(const std::string& stream, const std::string& bucket) {
    natsio::Client again = connect();
    natsio::JetStream cleanup(again);
    cleanup.delete_stream(stream);
    cleanup.delete_key_value(bucket);
}

/// A number field of a JSON object, read the plain way (-1 if missing).
inline long long json_number(const std::string& json, const std::string& field) {
    const std::string key = "\"" + field + "\":";
    const auto at = json.find(key);
    return at == std::string::npos ? -1 : std::stoll(json.substr(at + key.size()));
}

/// Polls until `key` of `kv` reads as `want`, up to `timeout`; the entry
/// read then, or nullopt. A mirror or a source copies asynchronously, and
/// a mirror (mirror_direct) answers its origin's Direct Gets too, so even
/// the origin's read right after a write through its mirror can come from
/// the mirror before it has the write.
inline std::optional<natsio::KvEntry> read_when(const natsio::KeyValue& kv, const std::string& key,
                                                const std::string& want,
                                                std::chrono::milliseconds timeout = 10s) {
    std::optional<natsio::KvEntry> entry;
    wait_until(
        [&] {
            try {
                entry = kv.get(key);
                return entry->value() == want;
            } catch (const natsio::Error&) {
                entry.reset();
                return false;
            }
        },
        timeout);
    if (entry && entry->value() != want) {
        entry.reset();
    }
    return entry;
}

/// Whether `key` of `kv` comes to read as `want` within `timeout` (see
/// read_when).
inline bool eventually_reads(const natsio::KeyValue& kv, const std::string& key,
                             const std::string& want, std::chrono::milliseconds timeout = 10s) {
    return read_when(kv, key, want, timeout).has_value();
}

}  // namespace natsio_test

#endif
