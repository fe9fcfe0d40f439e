// Key-Value additions of natsio/jetstream.hpp (ADR-8 / ADR-48): a watch
// resumed at a revision (KvWatchOptions::resume_from_revision),
// KeyValue::purge_deletes, per-key TTLs (create and purge with a
// std::chrono::seconds TTL), the bucket listings JetStream::key_value_names
// and key_value_statuses, the typed KeyValue::get_status (KvStatus), each
// `_async` form, the exception classes of bad arguments, and key listings
// (KeyValue::keys with filters, KeyValue::list_keys as a KvKeyLister feed),
// mirrors (of this server's bucket, and through a leaf node of one in
// another JetStream domain, on servers of their own) and sources. Built into both
// the C++17 and the C++20 test programs (each has its own server); every
// bucket is named "cppkv2_*".
#include "js_support.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <type_traits>
#include <vector>

using namespace natsio_test;

namespace {

static_assert(std::is_copy_constructible_v<natsio::KvStatus>);
static_assert(std::is_same_v<decltype(std::declval<const natsio::KeyValue&>().get_status_async()),
                             natsio::Future<natsio::KvStatus>>);
static_assert(
    std::is_same_v<decltype(std::declval<const natsio::JetStream&>().key_value_statuses_async()),
                   natsio::Future<std::vector<natsio::KvStatus>>>);
static_assert(natsio::all_markers.count() < 0);

constexpr natsio::KvOperation Put = natsio::KvOperation::Put;
constexpr natsio::KvOperation Del = natsio::KvOperation::Del;
constexpr natsio::KvOperation Purge = natsio::KvOperation::Purge;

/// The (key, value, operation, revision) of a watched entry.
using Rev = std::tuple<std::string, std::string, natsio::KvOperation, std::uint64_t>;

Rev rev_of(const natsio::KvEntryView& entry) {
    return Rev(std::string(entry.key()), std::string(entry.value()), entry.operation(),
               entry.revision());
}

/// The next entry of `w`, which must be a revision (not the marker).
Rev next_rev(const natsio::KvWatcher& w) {
    natsio::KvEntry entry = next_item(w);
    EXPECT_FALSE(entry.initial_done()) << "the initial-done marker, expected an entry";
    return rev_of(entry);
}

/// The next entry of `w` must be the initial-values marker.
void expect_initial_done(const natsio::KvWatcher& w) {
    natsio::KvEntry entry = next_item(w);
    EXPECT_TRUE(entry.initial_done()) << "an entry for key " << entry.key();
    EXPECT_EQ(entry.revision(), 0u);
}

/// How many revisions KeyValue::history has of `key` (0: none at all).
std::size_t revisions_of(const natsio::KeyValue& kv, const std::string& key) {
    try {
        return kv.history(key).size();
    } catch (const natsio::KeyNotFoundError&) {
        return 0;
    }
}

/// The status KeyValue::get gives for `key`: NATSIO_OK, or the error's.
natsio::Status get_status_of(const natsio::KeyValue& kv, const std::string& key) {
    try {
        kv.get(key);
        return NATSIO_OK;
    } catch (const natsio::Error& e) {
        return e.status();
    }
}

/// The application's part of a bucket's metadata (the server adds its own
/// "_nats.*" entries).
std::map<std::string, std::string> user_metadata(const natsio::KvStatus& s) {
    std::map<std::string, std::string> out;
    for (const auto& pair : s.metadata) {
        if (pair.first.rfind("_nats.", 0) != 0) {
            out.insert(pair);
        }
    }
    return out;
}

bool has(const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

const natsio::KvStatus* status_in(const std::vector<natsio::KvStatus>& list,
                                  const std::string& bucket) {
    for (const natsio::KvStatus& s : list) {
        if (s.bucket == bucket) {
            return &s;
        }
    }
    return nullptr;
}

const char* const kTypedConfig =
    R"({"bucket":"cppkv2_typed","history":5,"ttl":"1h","storage":"memory",)"
    R"("description":"typed status","compression":true,"metadata":{"team":"red"}})";

/// The fields of the bucket kTypedConfig makes, holding `values` revisions.
void expect_typed_status(const natsio::KvStatus& s, std::uint64_t values) {
    EXPECT_EQ(s.bucket, "cppkv2_typed");
    EXPECT_EQ(s.values, values);
    EXPECT_EQ(s.history, 5);
    EXPECT_EQ(s.ttl, std::chrono::hours(1));
    EXPECT_EQ(s.storage, "memory");
    EXPECT_EQ(s.replicas, 1);
    EXPECT_TRUE(s.is_compressed);
    EXPECT_EQ(s.description, std::optional<std::string>("typed status"));
    EXPECT_EQ(user_metadata(s), (std::map<std::string, std::string>{{"team", "red"}}));
    EXPECT_EQ(s.limit_marker_ttl, std::chrono::nanoseconds(0));
    EXPECT_TRUE(contains(s.stream_info_json, R"("name":"KV_cppkv2_typed")")) << s.stream_info_json;
    EXPECT_EQ(s.bytes > 0, values > 0);
}

}  // namespace

TEST(KvV2, ResumedWatchYieldsRevisionsFromItThenMarkerThenLive) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    natsio::KeyValue kv =
        js.create_key_value(R"({"bucket":"cppkv2_resume","history":10,"storage":"memory"})");
    std::uint64_t r1 = kv.put("a", "1");
    std::uint64_t r2 = kv.put("b", "1");
    std::uint64_t r3 = kv.put("a", "2");
    std::uint64_t r4 = kv.del("b");
    std::uint64_t r5 = kv.put("c", "1");
    EXPECT_EQ(r5, r1 + 4);
    (void)r2;

    // Every revision from r3 on, markers included, then the marker, then
    // live changes.
    natsio::KvWatchOptions from_r3;
    from_r3.resume_from_revision = r3;
    natsio::KvWatcher w = kv.watch(from_r3);
    EXPECT_EQ(next_rev(w), Rev("a", "2", Put, r3));
    EXPECT_EQ(next_rev(w), Rev("b", "", Del, r4));
    EXPECT_EQ(next_rev(w), Rev("c", "1", Put, r5));
    expect_initial_done(w);
    expect_quiet(w);
    std::uint64_t r6 = kv.put("d", "live");
    EXPECT_EQ(next_rev(w), Rev("d", "live", Put, r6));
    expect_quiet(w);

    // With a pattern: the matching key's revisions from r1 on (its whole
    // history, not only the latest), through watch_async.
    natsio::KvWatchOptions from_r1;
    from_r1.resume_from_revision = r1;
    natsio::KvWatcher a = kv.watch_async("a", from_r1).get();
    EXPECT_EQ(next_rev(a), Rev("a", "1", Put, r1));
    EXPECT_EQ(next_rev(a), Rev("a", "2", Put, r3));
    expect_initial_done(a);
    expect_quiet(a);

    // ignore_deletes leaves the marker out; a revision past the last one
    // gives the marker at once, then the changes from it on.
    natsio::KvWatchOptions no_deletes = from_r3;
    no_deletes.ignore_deletes = true;
    natsio::KvWatcher nd = kv.watch(no_deletes);
    EXPECT_EQ(next_rev(nd), Rev("a", "2", Put, r3));
    EXPECT_EQ(next_rev(nd), Rev("c", "1", Put, r5));
    EXPECT_EQ(next_rev(nd), Rev("d", "live", Put, r6));
    expect_initial_done(nd);
    natsio::KvWatchOptions ahead;
    ahead.resume_from_revision = r6 + 1;
    natsio::KvWatcher future = kv.watch(ahead);
    expect_initial_done(future);
    std::uint64_t r7 = kv.put("e", "next");
    EXPECT_EQ(next_rev(future), Rev("e", "next", Put, r7));
    js.delete_key_value("cppkv2_resume");
}

TEST(KvV2, PurgeDeletesKeepsYoungMarkersByDefaultAndRemovesAllWhenNegative) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    natsio::KeyValue kv =
        js.create_key_value(R"({"bucket":"cppkv2_pdel","history":10,"storage":"memory"})");
    // a: two values and a delete marker; b: a purge marker; c: live values.
    kv.put("a", "1");
    kv.put("a", "2");
    kv.del("a");
    kv.put("b", "1");
    kv.purge("b");
    kv.put("c", "1");
    kv.put("c", "2");

    // The default threshold (30 minutes): the markers are young and stay;
    // only the revisions before them go (a's two values).
    EXPECT_EQ(kv.purge_deletes(), 2u);
    EXPECT_EQ(revisions_of(kv, "a"), 1u);
    EXPECT_EQ(revisions_of(kv, "b"), 1u);
    EXPECT_EQ(revisions_of(kv, "c"), 2u);
    expect_throws<natsio::KeyDeletedError>(NATSIO_ERR_KEY_DELETED, [&] { kv.get("a"); });
    expect_throws<natsio::KeyDeletedError>(NATSIO_ERR_KEY_DELETED, [&] { kv.get("b"); });

    // all_markers: every marker, whatever its age; the key leaves no trace.
    EXPECT_EQ(kv.purge_deletes(natsio::all_markers), 2u);
    EXPECT_EQ(revisions_of(kv, "a"), 0u);
    EXPECT_EQ(revisions_of(kv, "b"), 0u);
    expect_throws<natsio::KeyNotFoundError>(NATSIO_ERR_KEY_NOT_FOUND, [&] { kv.get("a"); });
    EXPECT_EQ(revisions_of(kv, "c"), 2u);
    EXPECT_EQ(kv.get("c").value(), "2");

    // Any negative duration does the same (the future form): c's two
    // values and its marker.
    kv.del("c");
    EXPECT_EQ(kv.purge_deletes_async(std::chrono::milliseconds(-5)).get(), 3u);
    EXPECT_EQ(revisions_of(kv, "c"), 0u);
    EXPECT_EQ(kv.purge_deletes(natsio::all_markers), 0u);
    EXPECT_EQ(kv.get_status().values, 0u);
    // The scans left no consumers behind.
    EXPECT_TRUE(wait_until([&] { return js.consumer_names("KV_cppkv2_pdel").empty(); }));
    js.delete_key_value("cppkv2_pdel");
}

TEST(KvV2, CreateWithTtlExpiresTheKey) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    natsio::KeyValue kv = js.create_key_value(
        R"({"bucket":"cppkv2_ttl","history":5,"storage":"memory","limit_marker_ttl":"1s"})");
    EXPECT_EQ(kv.get_status().limit_marker_ttl, std::chrono::seconds(1));
    natsio::KvWatchOptions updates;
    updates.updates_only = true;
    natsio::KvWatcher w = kv.watch("eph", updates);
    expect_initial_done(w);

    std::uint64_t rev = kv.create("eph", "short", std::chrono::seconds(1));
    EXPECT_GT(rev, 0u);
    EXPECT_EQ(kv.get("eph").value(), "short");
    // Creating it again while it lives fails.
    expect_throws<natsio::KeyExistsError>(NATSIO_ERR_KEY_EXISTS,
                                          [&] { kv.create("eph", "again", std::chrono::seconds(1)); });
    EXPECT_EQ(next_rev(w), Rev("eph", "short", Put, rev));
    // Gone within 5 s: the server's purge marker reaches the watcher...
    natsio::KvEntry marker = next_item(w, 5s);
    EXPECT_EQ(marker.operation(), Purge);
    EXPECT_EQ(marker.key(), "eph");
    EXPECT_GT(marker.revision(), rev);
    EXPECT_FALSE(kv.try_get("eph").has_value());
    // ...and then the marker expires in turn (limit_marker_ttl).
    EXPECT_TRUE(wait_until(
        [&] { return get_status_of(kv, "eph") == NATSIO_ERR_KEY_NOT_FOUND; }, 10s));

    // natsio::ttl_never (the future form): the value stays.
    std::uint64_t kept = kv.create_async("forever", "x", natsio::ttl_never).get();
    EXPECT_GT(kept, rev);
    std::this_thread::sleep_for(1500ms); // an absence: the value does not expire
    EXPECT_EQ(kv.get("forever").value(), "x");
    js.delete_key_value("cppkv2_ttl");
}

TEST(KvV2, PutWithTtlExpiresTheValue) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    natsio::KeyValue kv = js.create_key_value(
        R"({"bucket":"cppkv2_putttl","history":5,"storage":"memory","limit_marker_ttl":"1s"})");
    natsio::KvWatchOptions updates;
    updates.updates_only = true;
    natsio::KvWatcher w = kv.watch("brief", updates);
    expect_initial_done(w);

    std::uint64_t rev = kv.put("brief", "short", std::chrono::seconds(1));
    EXPECT_EQ(kv.get("brief").value(), "short");
    EXPECT_EQ(next_rev(w), Rev("brief", "short", Put, rev));
    // Gone with the server's purge marker, which expires in turn.
    natsio::KvEntry marker = next_item(w, 5s);
    EXPECT_EQ(marker.operation(), Purge);
    EXPECT_EQ(marker.key(), "brief");
    EXPECT_GT(marker.revision(), rev);
    EXPECT_TRUE(wait_until(
        [&] { return get_status_of(kv, "brief") == NATSIO_ERR_KEY_NOT_FOUND; }, 10s));

    // The future form; a bad TTL is thrown at once.
    std::uint64_t kept = kv.put_async("kept", "x", natsio::ttl_never).get();
    EXPECT_GT(kept, rev);
    expect_throws<natsio::InvalidArgumentError>(
        NATSIO_ERR_INVALID_ARGUMENT, [&] { kv.put_async("k", "x", std::chrono::seconds(-5)); });
    EXPECT_EQ(kv.get("kept").value(), "x");
    js.delete_key_value("cppkv2_putttl");

    // A bucket without limit_marker_ttl refuses it.
    natsio::KeyValue plain = js.create_key_value(R"({"bucket":"cppkv2_putplain","storage":"memory"})");
    expect_throws<natsio::ApiError>(NATSIO_ERR_JS_API, [&] { plain.put("k", "x", std::chrono::seconds(1)); });
    js.delete_key_value("cppkv2_putplain");
}

TEST(KvV2, PurgeWithTtlLeavesAMarkerThatExpires) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    natsio::KeyValue kv = js.create_key_value(
        R"({"bucket":"cppkv2_pttl","history":5,"storage":"memory","limit_marker_ttl":"1s"})");
    kv.put("p", "1");
    std::uint64_t r1 = kv.put("p", "2");
    expect_throws<natsio::WrongLastSequenceError>(NATSIO_ERR_WRONG_LAST_SEQUENCE, [&] {
        kv.purge("p", std::chrono::seconds(1), r1 - 1);
    });
    std::uint64_t marker = kv.purge("p", std::chrono::seconds(1), r1);
    EXPECT_EQ(marker, r1 + 1);
    // The marker replaced the values...
    expect_throws<natsio::KeyDeletedError>(NATSIO_ERR_KEY_DELETED, [&] { kv.get("p"); });
    EXPECT_EQ(revisions_of(kv, "p"), 1u);
    // ...and expires, leaving no trace of the key.
    EXPECT_TRUE(wait_until(
        [&] { return get_status_of(kv, "p") == NATSIO_ERR_KEY_NOT_FOUND; }, 10s));
    EXPECT_EQ(revisions_of(kv, "p"), 0u);

    // The future form, without `last`.
    kv.put("q", "1");
    std::uint64_t q_marker = kv.purge_async("q", std::chrono::seconds(1)).get();
    EXPECT_GT(q_marker, marker);
    expect_throws<natsio::KeyDeletedError>(NATSIO_ERR_KEY_DELETED, [&] { kv.get("q"); });
    EXPECT_TRUE(wait_until(
        [&] { return get_status_of(kv, "q") == NATSIO_ERR_KEY_NOT_FOUND; }, 10s));
    js.delete_key_value("cppkv2_pttl");
}

TEST(KvV2, NamesAndStatusesListBucketsOnly) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    natsio::KeyValue la = js.create_key_value(kTypedConfig);
    natsio::KeyValue lb = js.create_key_value(R"({"bucket":"cppkv2_lb","storage":"memory"})");
    lb.put("k", "v");
    // Streams that are no buckets: a plain one, one named like a bucket
    // without the $KV subjects.
    js.create_stream(R"({"name":"cppkv2_plain","subjects":["cppkv2plain.>"],"storage":"memory"})");
    js.create_stream(
        R"({"name":"KV_cppkv2_notsubj","subjects":["cppkv2notsubj.>"],"storage":"memory"})");

    std::vector<std::string> names = js.key_value_names();
    EXPECT_TRUE(has(names, "cppkv2_typed"));
    EXPECT_TRUE(has(names, "cppkv2_lb"));
    EXPECT_FALSE(has(names, "cppkv2_plain"));
    EXPECT_FALSE(has(names, "cppkv2_notsubj"));
    EXPECT_FALSE(has(names, "KV_cppkv2_notsubj"));
    EXPECT_FALSE(has(names, "KV_cppkv2_lb"));
    std::vector<std::string> async_names = js.key_value_names_async().get();
    std::sort(names.begin(), names.end());
    std::sort(async_names.begin(), async_names.end());
    EXPECT_EQ(async_names, names);

    std::vector<natsio::KvStatus> statuses = js.key_value_statuses();
    EXPECT_EQ(statuses.size(), names.size());
    const natsio::KvStatus* a = status_in(statuses, "cppkv2_typed");
    ASSERT_NE(a, nullptr);
    expect_typed_status(*a, 0);
    const natsio::KvStatus* b = status_in(statuses, "cppkv2_lb");
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(b->values, 1u);
    EXPECT_EQ(b->history, 1);
    EXPECT_EQ(b->description, std::nullopt);
    EXPECT_TRUE(user_metadata(*b).empty());
    EXPECT_EQ(status_in(statuses, "cppkv2_plain"), nullptr);
    EXPECT_EQ(status_in(statuses, "cppkv2_notsubj"), nullptr);
    std::vector<natsio::KvStatus> async_statuses = js.key_value_statuses_async().get();
    EXPECT_EQ(async_statuses.size(), statuses.size());
    EXPECT_NE(status_in(async_statuses, "cppkv2_lb"), nullptr);

    js.delete_stream("cppkv2_plain");
    js.delete_stream("KV_cppkv2_notsubj");
    js.delete_key_value("cppkv2_typed");
    js.delete_key_value("cppkv2_lb");
    EXPECT_FALSE(has(js.key_value_names(), "cppkv2_lb"));
}

TEST(KvV2, TypedStatusMatchesTheConfig) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    natsio::KeyValue kv = js.create_key_value(kTypedConfig);
    expect_typed_status(kv.get_status(), 0);
    kv.put("x", "1");
    kv.put("x", "2");
    kv.del("y");
    natsio::KvStatus status = kv.get_status();
    expect_typed_status(status, 3);
    // A copyable value, also from the future form.
    natsio::KvStatus copy = status;
    expect_typed_status(copy, 3);
    expect_typed_status(kv.get_status_async().get(), 3);
    // The JSON status stays.
    std::string json = kv.status();
    EXPECT_TRUE(contains(json, R"("max_msgs_per_subject":5)")) << json;
    EXPECT_TRUE(contains(json, R"("name":"KV_cppkv2_typed")")) << json;

    js.delete_key_value("cppkv2_typed");
    expect_throws<natsio::BucketNotFoundError>(NATSIO_ERR_BUCKET_NOT_FOUND,
                                               [&] { kv.get_status(); });
    natsio::Future<natsio::KvStatus> gone = kv.get_status_async();
    expect_throws<natsio::BucketNotFoundError>(NATSIO_ERR_BUCKET_NOT_FOUND, [&] { gone.get(); });
}

TEST(KvV2, BadArgumentsThrowTheirClasses) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    natsio::KeyValue kv = js.create_key_value(
        R"({"bucket":"cppkv2_bad","storage":"memory","limit_marker_ttl":"1s"})");
    using std::chrono::seconds;
    using natsio::InvalidArgumentError;
    // A TTL negative other than ttl_never: thrown at once, also by the
    // `_async` forms (zero is no TTL of its own, as a write's options say).
    expect_throws<InvalidArgumentError>(NATSIO_ERR_INVALID_ARGUMENT,
                                        [&] { kv.create("k", "x", seconds(-2)); });
    expect_throws<InvalidArgumentError>(NATSIO_ERR_INVALID_ARGUMENT,
                                        [&] { kv.create("k", "x", seconds(-5)); });
    expect_throws<InvalidArgumentError>(NATSIO_ERR_INVALID_ARGUMENT,
                                        [&] { kv.create_async("k", "x", seconds(-3)); });
    expect_throws<InvalidArgumentError>(NATSIO_ERR_INVALID_ARGUMENT,
                                        [&] { kv.purge("k", seconds(-2)); });
    expect_throws<InvalidArgumentError>(NATSIO_ERR_INVALID_ARGUMENT,
                                        [&] { kv.purge_async("k", seconds(-7), 1); });
    // Bad keys.
    expect_throws<natsio::InvalidKeyError>(NATSIO_ERR_INVALID_KEY,
                                           [&] { kv.create("a..b", "x", seconds(5)); });
    expect_throws<natsio::InvalidKeyError>(NATSIO_ERR_INVALID_KEY,
                                           [&] { kv.purge("a..b", seconds(5)); });
    expect_throws<InvalidArgumentError>(NATSIO_ERR_INVALID_ARGUMENT, [&] {
        kv.create(std::string_view("n\0ul", 4), "x", seconds(5));
    });
    // resume_from_revision contradicts updates_only.
    natsio::KvWatchOptions both;
    both.resume_from_revision = 1;
    both.updates_only = true;
    expect_throws<InvalidArgumentError>(NATSIO_ERR_INVALID_ARGUMENT, [&] { kv.watch(both); });
    expect_throws<InvalidArgumentError>(NATSIO_ERR_INVALID_ARGUMENT,
                                        [&] { kv.watch_async("k", both).get(); });
    // Nothing was stored.
    EXPECT_EQ(kv.get_status().values, 0u);

    // A bucket without limit_marker_ttl: the server refuses per-key TTLs.
    natsio::KeyValue plain =
        js.create_key_value(R"({"bucket":"cppkv2_plainkv","storage":"memory"})");
    expect_throws<natsio::ApiError>(NATSIO_ERR_JS_API, [&] { plain.create("k", "x", seconds(1)); });
    expect_throws<natsio::ApiError>(NATSIO_ERR_JS_API, [&] { plain.purge("k", seconds(1)); });
    natsio::Future<std::uint64_t> refused = plain.create_async("k", "x", seconds(1));
    expect_throws<natsio::ApiError>(NATSIO_ERR_JS_API, [&] { refused.get(); });
    EXPECT_EQ(plain.get_status().values, 0u);

    // No handle.
    natsio::KeyValue none;
    natsio::JetStream no_js;
    expect_throws<natsio::NullArgumentError>(NATSIO_ERR_NULL_ARGUMENT, [&] { none.purge_deletes(); });
    expect_throws<natsio::NullArgumentError>(NATSIO_ERR_NULL_ARGUMENT,
                                        [&] { none.purge_deletes_async(); });
    expect_throws<natsio::NullArgumentError>(NATSIO_ERR_NULL_ARGUMENT, [&] { none.get_status(); });
    expect_throws<natsio::NullArgumentError>(NATSIO_ERR_NULL_ARGUMENT,
                                        [&] { none.create("k", "x", seconds(1)); });
    expect_throws<natsio::NullArgumentError>(NATSIO_ERR_NULL_ARGUMENT,
                                        [&] { none.purge("k", seconds(1)); });
    expect_throws<natsio::NullArgumentError>(NATSIO_ERR_NULL_ARGUMENT, [&] { no_js.key_value_names(); });
    expect_throws<natsio::NullArgumentError>(NATSIO_ERR_NULL_ARGUMENT,
                                        [&] { no_js.key_value_statuses_async(); });

    js.delete_key_value("cppkv2_bad");
    js.delete_key_value("cppkv2_plainkv");

    // After the client is closed.
    natsio::KeyValue gone = js.create_key_value(R"({"bucket":"cppkv2_closed","storage":"memory"})");
    client.close();
    expect_throws<natsio::ConnectionClosedError>(NATSIO_ERR_CONNECTION_CLOSED,
                                                 [&] { gone.purge_deletes(natsio::all_markers); });
    expect_throws<natsio::ConnectionClosedError>(NATSIO_ERR_CONNECTION_CLOSED,
                                                 [&] { gone.get_status(); });
    expect_throws<natsio::ConnectionClosedError>(NATSIO_ERR_CONNECTION_CLOSED,
                                                 [&] { js.key_value_statuses(); });
    natsio::Client again = connect();
    natsio::JetStream cleanup(again);
    cleanup.delete_key_value("cppkv2_closed");
}

namespace {

static_assert(std::is_same_v<natsio::KvKeyLister::value_type, std::string>);
static_assert(std::is_same_v<decltype(std::declval<const natsio::KvKeyLister&>().next_async()),
                             natsio::Future<std::optional<std::string>>>);

std::vector<std::string> sorted(std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
}

using Keys = std::vector<std::string>;

TEST(KvKeys, FiltersWithWildcardsLeaveOutDeletedKeys) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    natsio::KeyValue kv =
        js.create_key_value(R"({"bucket":"cppkv2_keysf","history":3,"storage":"memory"})");
    EXPECT_TRUE(kv.keys("app.*").empty());  // an empty bucket
    for (const char* key : {"app.a", "app.b", "app.b.deep", "app.gone", "users.x.name",
                            "users.y.mail", "other"}) {
        kv.put(key, "v");
    }
    kv.put("app.a", "again");
    kv.del("app.gone");
    EXPECT_EQ(sorted(kv.keys("app.*")), (Keys{"app.a", "app.b"}));
    EXPECT_EQ(sorted(kv.keys("users.>")), (Keys{"users.x.name", "users.y.mail"}));
    EXPECT_EQ(sorted(kv.keys({"app.*.deep", "users.*.mail", "other"})),
              (Keys{"app.b.deep", "other", "users.y.mail"}));
    const std::vector<std::string> filters = {"users.x.*", "nothing.>"};
    EXPECT_EQ(kv.keys(filters), (Keys{"users.x.name"}));
    EXPECT_EQ(kv.keys(std::vector<std::string>{}).size(), 6u);  // none: every key
    EXPECT_EQ(sorted(kv.keys_async({"app.*"}).get()), (Keys{"app.a", "app.b"}));
    EXPECT_EQ(kv.keys_async("users.*.name").get(), (Keys{"users.x.name"}));
    // Bad filters, thrown at once by both forms.
    expect_throws<natsio::InvalidKeyError>(NATSIO_ERR_INVALID_KEY, [&] { kv.keys("a.>.b"); });
    expect_throws<natsio::InvalidKeyError>(NATSIO_ERR_INVALID_KEY, [&] { kv.keys({"ok", ""}); });
    expect_throws<natsio::InvalidKeyError>(NATSIO_ERR_INVALID_KEY,
                                           [&] { kv.keys_async("a b"); });
    expect_throws<natsio::InvalidKeyError>(NATSIO_ERR_INVALID_KEY, [&] { kv.list_keys("a..b"); });
    expect_throws<natsio::InvalidArgumentError>(NATSIO_ERR_INVALID_ARGUMENT, [&] {
        kv.keys(std::string_view("n\0ul", 4));
    });
    js.delete_key_value("cppkv2_keysf");
}

TEST(KvKeys, ListKeysYieldsEveryKeyThenEndsAndStops) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    natsio::KeyValue kv = js.create_key_value(R"({"bucket":"cppkv2_keysl","storage":"memory"})");
    // An empty bucket ends at once.
    natsio::KvKeyLister empty = kv.list_keys();
    EXPECT_EQ(empty.next(5s), std::nullopt);

    constexpr int many = 1000;
    for (int i = 0; i < many; i++) {
        js.publish_async("$KV.cppkv2_keysl.k." + std::to_string(i), "v");
    }
    js.publish_async_complete(10s);
    kv.put("other", "v");
    kv.del("k.5");
    // Range-for over a filtered listing: each key once, then the end.
    std::vector<std::string> seen;
    for (auto& key : kv.list_keys("k.*")) {
        seen.push_back(std::move(key));
    }
    EXPECT_EQ(seen.size(), static_cast<std::size_t>(many - 1));
    std::sort(seen.begin(), seen.end());
    EXPECT_TRUE(std::adjacent_find(seen.begin(), seen.end()) == seen.end());
    EXPECT_FALSE(std::binary_search(seen.begin(), seen.end(), "k.5"));
    EXPECT_TRUE(std::binary_search(seen.begin(), seen.end(), "k.999"));

    // Stopped midway: the end at once.
    natsio::KvKeyLister half = kv.list_keys({"k.*", "other"});
    for (int i = 0; i < 10; i++) {
        EXPECT_TRUE(half.next(5s).has_value());
    }
    half.stop();
    EXPECT_EQ(half.next(1s), std::nullopt);
    EXPECT_EQ(half.stats().delivered, 10u);

    // Futures, then push mode.
    natsio::KvKeyLister one = kv.list_keys("other");
    EXPECT_EQ(one.next_async().get(), std::optional<std::string>("other"));
    EXPECT_EQ(one.next_async().get(), std::nullopt);
    natsio::KvKeyLister pushed = kv.list_keys(std::vector<std::string_view>{"k.*"});
    std::promise<std::exception_ptr> ended;
    std::atomic<int> count{0};
    pushed.set_callback(
        [&](std::string_view key) {
            if (key.substr(0, 2) == "k.") count++;
        },
        [&](std::exception_ptr error) { ended.set_value(error); });
    std::future<std::exception_ptr> end = ended.get_future();
    ASSERT_EQ(end.wait_for(10s), std::future_status::ready);
    EXPECT_EQ(end.get(), nullptr);
    EXPECT_EQ(count.load(), many - 1);

    // A deleted bucket: the listing fails with BucketNotFoundError.
    js.delete_key_value("cppkv2_keysl");
    natsio::KvKeyLister gone = kv.list_keys();
    expect_throws<natsio::BucketNotFoundError>(NATSIO_ERR_BUCKET_NOT_FOUND,
                                               [&] { gone.next(5s); });
}

}  // namespace

// Key-Value codecs (KeyValue::with_codecs): built-ins in their stored forms
// (read through the plain handle), a chain, codecs of C++ functions with a
// failing step, and a wildcard filter without a filter form.
TEST(KvCodecs, EveryVerbGoesThroughTheCodecs) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    natsio::KeyValue plain =
        js.create_key_value(R"({"bucket":"cppkv2_codec","history":3,"storage":"memory"})");
    const natsio::KeyCodec b64 = natsio::KeyCodec::base64();
    const natsio::ValueCodec zlib = natsio::ValueCodec::zlib(9);
    natsio::KeyValue kv = plain.with_codecs(&b64, &zlib);
    EXPECT_EQ(kv.bucket(), "cppkv2_codec");
    std::uint64_t r1 = kv.put("user.john doe", "first");
    EXPECT_EQ(plain.keys(), (Keys{"dXNlcg==.am9obiBkb2U="}));
    EXPECT_EQ(b64.encode("user.john doe"), "dXNlcg==.am9obiBkb2U=");
    EXPECT_EQ(b64.decode("dXNlcg.am9obiBkb2U"), "user.john doe");  // either form
    EXPECT_EQ(kv.get("user.john doe").value(), "first");
    EXPECT_EQ(kv.get("user.john doe").key(), "user.john doe");
    kv.update("user.john doe", "second", r1);
    EXPECT_EQ(kv.keys("user.*"), (Keys{"user.john doe"}));
    EXPECT_EQ(kv.history("user.john doe").size(), 2u);
    kv.del("user.john doe");
    expect_throws<natsio::KeyDeletedError>(NATSIO_ERR_KEY_DELETED, [&] { kv.get("user.john doe"); });

    const natsio::KeyCodec chain =
        natsio::KeyCodec::chain({natsio::KeyCodec::path(), natsio::KeyCodec::base64_url()});
    const natsio::ValueCodec values =
        natsio::ValueCodec::chain({natsio::ValueCodec::zlib(), natsio::ValueCodec::base64()});
    natsio::KeyValue chained = plain.with_codecs(&chain, &values);
    chained.put("/a b/~~~", "chained");
    EXPECT_EQ(chain.encode("/a b/~~~"), "X3Jvb3Rf.YSBi.fn5-");
    EXPECT_EQ(chained.get("/a b/~~~").value(), "chained");
    expect_throws<natsio::KvNoCodecsError>(NATSIO_ERR_KV_NO_CODECS,
                                           [] { natsio::KeyCodec::chain({}); });
    expect_throws<natsio::InvalidArgumentError>(NATSIO_ERR_INVALID_ARGUMENT,
                                                [] { natsio::ValueCodec::zlib(10); });

    auto reverse = [](std::string_view s) {
        if (s == "fail") throw std::runtime_error("refused");
        return std::string(s.rbegin(), s.rend());
    };
    const natsio::KeyCodec reversed = natsio::KeyCodec::custom(reverse, reverse);
    const natsio::ValueCodec upper = natsio::ValueCodec::custom(
        [](std::string_view v) {
            std::string out(v);
            for (char& c : out) c = static_cast<char>(c ^ 0x20);
            return out;
        },
        [](std::string_view v) {
            std::string out(v);
            for (char& c : out) c = static_cast<char>(c ^ 0x20);
            return out;
        });
    natsio::KeyValue custom = plain.with_codecs(&reversed, &upper);
    custom.put("ab.cd", "xy");
    EXPECT_EQ(plain.get("dc.ba").value(), "XY");
    EXPECT_EQ(custom.get("ab.cd").value(), "xy");
    expect_throws<natsio::KvWildcardNotSupportedError>(NATSIO_ERR_KV_WILDCARD_NOT_SUPPORTED,
                                                       [&] { custom.keys("ab.*"); });
    expect_throws<natsio::KvKeyEncodeFailedError>(NATSIO_ERR_KV_KEY_ENCODE_FAILED,
                                                  [&] { custom.put("fail", "x"); });
    js.delete_key_value("cppkv2_codec");
}

// Mirrors and sources (KeyValueConfig "mirror" / "sources", as nats.go
// makes them): a mirror of a bucket of this server and, through a leaf node,
// of one in another JetStream domain; sources; bad configs.
namespace {

/// Whether get of `key` fails with `status` (a mirror copies
/// asynchronously, so deletes are polled too), up to 10 s.
bool eventually_fails(const natsio::KeyValue& kv, const std::string& key, natsio::Status status) {
    return wait_until([&] { return get_status_of(kv, key) == status; }, 10s);
}

}  // namespace

TEST(KvMirror, ReadsTheOriginsKeysAndWritesToTheOrigin) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    natsio::KeyValue origin =
        js.create_key_value(R"({"bucket":"cppkv2_origin","history":5,"storage":"memory"})");
    origin.put("a", "1");

    // Named without KV_, as nats.go allows.
    natsio::KeyValue mirror = js.create_key_value(
        R"({"bucket":"cppkv2_mirror","storage":"memory","mirror":{"name":"cppkv2_origin"}})");
    const std::string status = mirror.status();
    EXPECT_TRUE(contains(status, R"("mirror":{"name":"KV_cppkv2_origin")")) << status;
    EXPECT_TRUE(contains(status, R"("mirror_direct":true)")) << status;
    EXPECT_FALSE(contains(status, R"("subjects")")) << status;
    EXPECT_TRUE(eventually_reads(mirror, "a", "1"));

    // A write through the mirror lands in the origin (at the revision it
    // returned) and comes back. (The origin's reads are polled too: the
    // mirror answers the origin's Direct Gets as well, see read_when.)
    const std::uint64_t rev = mirror.put("b", "2");
    std::optional<natsio::KvEntry> b = read_when(origin, "b", "2");
    ASSERT_TRUE(b.has_value());
    EXPECT_EQ(b->revision(), rev);
    EXPECT_TRUE(eventually_reads(mirror, "b", "2"));
    const std::uint64_t async_rev = mirror.put_async("c", "3").get();
    std::optional<natsio::KvEntry> c = read_when(origin, "c", "3");
    ASSERT_TRUE(c.has_value());
    EXPECT_EQ(c->revision(), async_rev);
    mirror.del("a");
    EXPECT_TRUE(eventually_fails(origin, "a", NATSIO_ERR_KEY_DELETED));
    EXPECT_TRUE(eventually_fails(mirror, "a", NATSIO_ERR_KEY_DELETED));

    // Keys and history read the mirrored keys; a bound handle is the same.
    natsio::KeyValue bound = js.key_value("cppkv2_mirror");
    EXPECT_TRUE(eventually_reads(bound, "c", "3"));
    EXPECT_EQ(sorted(bound.keys()), (Keys{"b", "c"}));

    js.delete_key_value("cppkv2_mirror");
    js.delete_key_value("cppkv2_origin");
}

TEST(KvMirror, SourcesCopyTheirKeysAndTheBucketKeepsItsOwn) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    natsio::KeyValue a = js.create_key_value(R"({"bucket":"cppkv2_srca","storage":"memory"})");
    natsio::KeyValue b = js.create_key_value(R"({"bucket":"cppkv2_srcb","storage":"memory"})");
    a.put("x", "from a");
    // One source named with its KV_, one without.
    natsio::KeyValue both = js.create_key_value(
        R"({"bucket":"cppkv2_srcab","storage":"memory",)"
        R"("sources":[{"name":"cppkv2_srca"},{"name":"KV_cppkv2_srcb"}]})");
    const std::string status = both.status();
    EXPECT_TRUE(contains(status, R"("subject_transforms":[{"src":"$KV.cppkv2_srca.>","dest":"$KV.cppkv2_srcab.>"}])"))
        << status;
    EXPECT_TRUE(contains(status, R"("subject_transforms":[{"src":"$KV.cppkv2_srcb.>","dest":"$KV.cppkv2_srcab.>"}])"))
        << status;
    b.put("y", "from b");
    EXPECT_TRUE(eventually_reads(both, "x", "from a"));
    EXPECT_TRUE(eventually_reads(both, "y", "from b"));

    // The bucket's own keys are written as usual and stay its own.
    const std::uint64_t rev = both.put("z", "own");
    EXPECT_EQ(both.get("z").revision(), rev);
    EXPECT_EQ(both.get("z").value(), "own");
    expect_throws<natsio::KeyNotFoundError>(NATSIO_ERR_KEY_NOT_FOUND, [&] { a.get("z"); });
    expect_throws<natsio::KeyNotFoundError>(NATSIO_ERR_KEY_NOT_FOUND, [&] { b.get("z"); });
    EXPECT_EQ(sorted(both.keys()), (Keys{"x", "y", "z"}));

    js.delete_key_value("cppkv2_srcab");
    js.delete_key_value("cppkv2_srca");
    js.delete_key_value("cppkv2_srcb");
}

// A leaf node server with its own JetStream domain mirrors a bucket of the
// hub's (the mirror names the hub's domain): the mirror's handle reads the
// hub's keys on the leaf and writes to the hub's bucket through the hub's
// domain prefix, as nats.go's TestKeyValueMirrorCrossDomains.
TEST(KvMirror, OfABucketInAnotherDomainThroughALeafNode) {
    const std::string leaf_port = std::to_string(nt_free_port());
    OwnedServer hub_server = start_own_server(
        "server_name: hub\njetstream { domain: HUB }\nleafnodes { listen: \"127.0.0.1:" + leaf_port +
        "\" }\n");
    OwnedServer leaf_server = start_own_server(
        "server_name: leaf\njetstream { domain: LEAF }\n"
        "leafnodes { remotes: [ { url: \"nats-leaf://127.0.0.1:" + leaf_port + "\" } ] }\n");
    ASSERT_NE(hub_server, nullptr);
    ASSERT_NE(leaf_server, nullptr);
    natsio::Client hub_client = natsio::Client::connect(nt_server_url(hub_server.get()));
    natsio::Client leaf_client = natsio::Client::connect(nt_server_url(leaf_server.get()));
    natsio::JetStream hub(hub_client);
    natsio::JetStream leaf(leaf_client);
    natsio::KeyValue origin = hub.create_key_value(R"({"bucket":"TEST"})");
    origin.put("name", "derek");

    natsio::KeyValue far = leaf.create_key_value(
        R"({"bucket":"MIRROR","mirror":{"name":"TEST","domain":"HUB"}})");
    const std::string status = far.status();
    EXPECT_TRUE(contains(status, R"("external":{"api":"$JS.HUB.API")")) << status;
    // The leaf connection comes up in its own time: the mirror syncs then.
    EXPECT_TRUE(eventually_reads(far, "name", "derek"));
    const std::uint64_t rev = far.put("name", "rip");
    std::optional<natsio::KvEntry> written = read_when(origin, "name", "rip");
    ASSERT_TRUE(written.has_value());
    EXPECT_EQ(written->revision(), rev);
    EXPECT_TRUE(eventually_reads(far, "name", "rip"));
    far.del("name");
    EXPECT_TRUE(eventually_fails(origin, "name", NATSIO_ERR_KEY_DELETED));

    // The hub's bucket through the leaf connection, in the hub's domain.
    natsio::JetStreamOptions in_hub;
    in_hub.domain = "HUB";
    natsio::JetStream remote(leaf_client, in_hub);
    natsio::KeyValue remote_origin = remote.key_value("TEST");
    remote_origin.put("name", "ivan");
    EXPECT_TRUE(eventually_reads(origin, "name", "ivan"));
    EXPECT_TRUE(eventually_reads(far, "name", "ivan"));
}

TEST(KvMirror, BadMirrorsAndSourcesThrowConfigErrorNamingTheField) {
    natsio::Client client = connect();
    natsio::JetStream js(client);
    auto create = [&](const std::string& config) {
        return [&js, config] { js.create_key_value(config); };
    };
    EXPECT_TRUE(contains(
        expect_throws<natsio::ConfigError>(
            NATSIO_ERR_CONFIG,
            create(R"({"bucket":"cppkv2_badm","mirror":{"name":"x","domain":"HUB","external":{"api":"$JS.HUB.API"}}})")),
        "both set"));
    EXPECT_TRUE(contains(expect_throws<natsio::ConfigError>(
                             NATSIO_ERR_CONFIG, create(R"({"bucket":"cppkv2_badm","mirror":{}})")),
                         "mirror.name"));
    EXPECT_TRUE(contains(expect_throws<natsio::ConfigError>(
                             NATSIO_ERR_CONFIG, create(R"({"bucket":"cppkv2_badm","mirror":"x"})")),
                         "mirror: expected an object"));
    EXPECT_TRUE(contains(
        expect_throws<natsio::ConfigError>(
            NATSIO_ERR_CONFIG, create(R"({"bucket":"cppkv2_badm","sources":[{"name":"a.b"}]})")),
        "sources.name"));
    EXPECT_TRUE(contains(
        expect_throws<natsio::ConfigError>(
            NATSIO_ERR_CONFIG, create(R"({"bucket":"cppkv2_badm","sources":[{"name":"x","domain":"a b"}]})")),
        "sources.domain"));
    // The future form fails the same way.
    EXPECT_TRUE(contains(expect_throws<natsio::ConfigError>(NATSIO_ERR_CONFIG,
                                                            [&] {
                                                                js.create_key_value_async(
                                                                      R"({"bucket":"cppkv2_badm","sources":["x"]})")
                                                                    .get();
                                                            }),
                         "sources: expected a list of objects"));
    // Nothing was created.
    EXPECT_FALSE(has(js.key_value_names(), "cppkv2_badm"));
}
