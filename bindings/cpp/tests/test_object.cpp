// Object Store through natsio/object.hpp (brought in by jetstream.hpp):
// buckets (create/update/bind/delete, names, statuses, status), round trips
// around the chunk size and through std::istream / std::ostream, replace,
// delete, update_meta (rename, rename onto a live object refused), links,
// seal, watch (initial values, marker, updates, every option, push mode),
// list, revisions (the stream sequence of each description), the writer
// (abort keeps the previous version, RAII abort), a corrupted object
// failing with DigestMismatchError, the error classes, bad input, and the
// client closing under a reader. Built into both the C++17 and the C++20
// test programs (each has its own server); the C++20 one also reads into
// std::span.
#include "js_support.hpp"

#include <natsio/object.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

#if __cplusplus >= 202002L
#include <span>
#endif

using namespace natsio_test;

static_assert(std::is_copy_constructible_v<natsio::ObjectInfo>);
static_assert(std::is_copy_assignable_v<natsio::ObjectInfo>);
static_assert(std::is_copy_constructible_v<natsio::ObjectStoreStatus>);
static_assert(!std::is_copy_constructible_v<natsio::ObjectStore>);
static_assert(std::is_nothrow_move_constructible_v<natsio::ObjectStore>);
static_assert(std::is_nothrow_move_assignable_v<natsio::ObjectStore>);
static_assert(!std::is_copy_constructible_v<natsio::ObjectWriter>);
static_assert(std::is_nothrow_move_constructible_v<natsio::ObjectWriter>);
static_assert(!std::is_copy_constructible_v<natsio::ObjectReader>);
static_assert(std::is_nothrow_move_constructible_v<natsio::ObjectReader>);
static_assert(!std::is_copy_constructible_v<natsio::ObjectWatcher>);
static_assert(std::is_nothrow_move_constructible_v<natsio::ObjectWatcher>);
static_assert(std::is_same_v<decltype(std::declval<const natsio::ObjectWatcher&>().next(1ms)),
                             std::optional<natsio::ObjectInfo>>);
static_assert(std::is_same_v<decltype(std::declval<const natsio::ObjectWatcher&>().next_async()),
                             natsio::Future<std::optional<natsio::ObjectInfo>>>);
static_assert(std::is_same_v<decltype(std::declval<natsio::ObjectReader&>().next_async()),
                             natsio::Future<std::optional<natsio::ObjectChunk>>>);

namespace {

/// The meta of a put with chunks of `chunk_size` bytes.
natsio::ObjectMeta chunked(std::uint32_t chunk_size) {
    natsio::ObjectMeta meta;
    meta.chunk_size = chunk_size;
    return meta;
}

/// `size` pseudo-random bytes (fixed seed per size), as text.
std::string random_bytes(std::size_t size, std::uint32_t seed = 7) {
    std::mt19937 gen(seed + static_cast<std::uint32_t>(size));
    std::uniform_int_distribution<int> byte(0, 255);
    std::string out(size, '\0');
    for (char& c : out) {
        c = static_cast<char>(byte(gen));
    }
    return out;
}

std::string as_string(const std::vector<std::byte>& bytes) {
    return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

/// The number `field` ("messages", "last_seq", ...) of a StreamInfo JSON's
/// state.
std::uint64_t stream_state(const std::string& stream_info, const std::string& field) {
    const std::string key = "\"" + field + "\":";
    std::size_t at = stream_info.find(key);
    if (at == std::string::npos) {
        return ~std::uint64_t{0};
    }
    return std::stoull(stream_info.substr(at + key.size()));
}

std::set<std::string> names_of(const std::vector<natsio::ObjectInfo>& infos) {
    std::set<std::string> names;
    for (const natsio::ObjectInfo& info : infos) {
        names.insert(info.name);
    }
    return names;
}

/// Each test gets a client, a JetStream context, and buckets named after
/// the test that are deleted at its end.
class Obj : public ::testing::Test {
protected:
    Obj() : client(connect()), js(client) {}

    void TearDown() override {
        for (const std::string& name : buckets_) {
            try {
                js.delete_object_store(name);
            } catch (const natsio::Error&) {
                // Deleted by the test itself, or the client was closed.
            }
        }
    }

    /// "CPPOBJ_<test name><suffix>".
    std::string bucket_name(const std::string& suffix = "") const {
        std::string name = "CPPOBJ_";
        name += ::testing::UnitTest::GetInstance()->current_test_info()->name();
        name += suffix;
        return name;
    }

    /// Deletes bucket `name` at the end of the test (if it still exists).
    void track(const std::string& name) { buckets_.push_back(name); }

    /// Creates a memory bucket (plus `extra` config fields) and binds it.
    natsio::ObjectStore bucket(const std::string& suffix = "", const std::string& extra = "") {
        std::string name = bucket_name(suffix);
        std::string config = R"({"bucket":")" + name + R"(","storage":"memory")";
        if (!extra.empty()) {
            config += "," + extra;
        }
        config += "}";
        natsio::ObjectStore store = js.create_object_store(config);
        track(name);
        return store;
    }

    /// The number of messages in the bucket's stream (chunks plus metas).
    std::uint64_t messages_of(const natsio::ObjectStore& store) const {
        return stream_state(js.stream_info("OBJ_" + std::string(store.bucket())), "messages");
    }

    /// The sequence of the last message of the bucket's stream.
    std::uint64_t last_seq_of(const natsio::ObjectStore& store) const {
        return stream_state(js.stream_info("OBJ_" + std::string(store.bucket())), "last_seq");
    }

    natsio::Client client;
    natsio::JetStream js;

private:
    std::vector<std::string> buckets_;
};

/// The next info of `w`, which must be an object (not the marker).
natsio::ObjectInfo next_object(const natsio::ObjectWatcher& w) {
    natsio::ObjectInfo info = next_item(w);
    EXPECT_FALSE(info.initial_done()) << "the initial-done marker, expected an object";
    return info;
}

void expect_marker(const natsio::ObjectWatcher& w, std::string_view bucket) {
    natsio::ObjectInfo info = next_item(w);
    EXPECT_TRUE(info.initial_done()) << "an info for object " << info.name;
    EXPECT_EQ(info.name, "");
    EXPECT_EQ(info.bucket, bucket);
}

}  // namespace

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

TEST(ObjectErrors, EveryStatusMapsToItsClass) {
    using namespace natsio;
    expect_mapped<ObjectNotFoundError, JetStreamError>(NATSIO_ERR_OBJECT_NOT_FOUND);
    expect_mapped<ObjectDeletedError, ObjectNotFoundError>(NATSIO_ERR_OBJECT_DELETED);
    expect_mapped<ObjectExistsError, JetStreamError>(NATSIO_ERR_OBJECT_EXISTS);
    expect_mapped<DigestMismatchError, JetStreamError>(NATSIO_ERR_DIGEST_MISMATCH);
    expect_mapped<ObjectLinkError, JetStreamError>(NATSIO_ERR_OBJECT_LINK);
    expect_mapped<InvalidObjectNameError, ConfigError>(NATSIO_ERR_INVALID_OBJECT_NAME);
    expect_mapped<BucketSealedError, JetStreamError>(NATSIO_ERR_BUCKET_SEALED);
    // The bucket codes are shared with Key-Value.
    expect_mapped<BucketNotFoundError, JetStreamError>(NATSIO_ERR_BUCKET_NOT_FOUND);
    expect_mapped<BucketExistsError, JetStreamError>(NATSIO_ERR_BUCKET_EXISTS);
    expect_mapped<InvalidBucketNameError, ConfigError>(NATSIO_ERR_INVALID_BUCKET_NAME);
    // The hierarchy: a deleted object is a not-found object, a bad name a
    // config error, and none of the object errors is a timeout.
    static_assert(std::is_base_of_v<ObjectNotFoundError, ObjectDeletedError>);
    static_assert(std::is_base_of_v<JetStreamError, ObjectDeletedError>);
    static_assert(std::is_base_of_v<ConfigError, InvalidObjectNameError>);
    static_assert(!std::is_base_of_v<JetStreamError, InvalidObjectNameError>);
    static_assert(!std::is_base_of_v<ObjectNotFoundError, ObjectExistsError>);
    static_assert(!std::is_base_of_v<TimeoutError, ObjectNotFoundError>);
    static_assert(!std::is_base_of_v<KeyNotFoundError, ObjectNotFoundError>);
}

// ---------------------------------------------------------------------------
// Buckets
// ---------------------------------------------------------------------------

TEST_F(Obj, BucketLifecycle) {
    const std::string name = bucket_name();
    const std::string config = R"({"bucket":")" + name +
                               R"(","description":"first","storage":"memory",)"
                               R"("metadata":{"team":"c++","quote":"a \"b\" \\ é"}})";
    natsio::ObjectStore store = js.create_object_store(config);
    track(name);
    EXPECT_TRUE(store);
    EXPECT_EQ(store.bucket(), name);

    // The same configuration again just binds it.
    EXPECT_EQ(js.create_object_store(config).bucket(), name);
    natsio::ObjectStoreStatus status = store.status();
    EXPECT_EQ(status.bucket, name);
    EXPECT_EQ(status.description, std::optional<std::string>("first"));
    EXPECT_EQ(status.storage, "memory");
    EXPECT_EQ(status.replicas, 1);
    EXPECT_FALSE(status.sealed);
    EXPECT_FALSE(status.compression);
    EXPECT_EQ(status.ttl, std::chrono::nanoseconds(0));
    EXPECT_EQ(status.size, 0u);
    EXPECT_EQ(status.metadata.at("team"), "c++");
    EXPECT_EQ(status.metadata.at("quote"), "a \"b\" \\ é");
    EXPECT_TRUE(contains(status.stream_info_json, "OBJ_" + name)) << status.stream_info_json;

    // Update changes it; create-or-update too.
    natsio::ObjectStore updated = js.create_object_store(
        R"({"bucket":")" + name + R"(","description":"second","storage":"memory","ttl":"90s"})",
        natsio::CreateAction::Update);
    natsio::ObjectStoreStatus after = updated.status();
    EXPECT_EQ(after.description, std::optional<std::string>("second"));
    EXPECT_EQ(after.ttl, std::chrono::seconds(90));
    js.create_object_store(
        R"({"bucket":")" + name + R"(","description":"third","storage":"memory"})",
        natsio::CreateAction::CreateOrUpdate);
    EXPECT_EQ(js.object_store(name).status().description, std::optional<std::string>("third"));

    // Listed by name and by status.
    std::vector<std::string> names = js.object_store_names();
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end());
    bool listed = false;
    for (const natsio::ObjectStoreStatus& each : js.object_store_statuses()) {
        if (each.bucket == name) {
            listed = true;
            EXPECT_EQ(each.description, std::optional<std::string>("third"));
            EXPECT_EQ(each.storage, "memory");
        }
    }
    EXPECT_TRUE(listed);

    js.delete_object_store(name);
    expect_throws<natsio::BucketNotFoundError>(NATSIO_ERR_BUCKET_NOT_FOUND,
                                               [&] { js.object_store(name); });
    expect_throws<natsio::BucketNotFoundError>(NATSIO_ERR_BUCKET_NOT_FOUND,
                                               [&] { js.delete_object_store(name); });
    // The old handle sees the bucket gone.
    expect_throws<natsio::BucketNotFoundError>(NATSIO_ERR_BUCKET_NOT_FOUND,
                                               [&] { store.put("x", "y"); });
    expect_throws<natsio::BucketNotFoundError>(NATSIO_ERR_BUCKET_NOT_FOUND, [&] {
        js.create_object_store(R"({"bucket":")" + name + R"("})", natsio::CreateAction::Update);
    });
}

TEST_F(Obj, BucketErrors) {
    expect_throws<natsio::InvalidBucketNameError>(NATSIO_ERR_INVALID_BUCKET_NAME,
                                                  [&] { js.object_store("bad.name"); });
    expect_throws<natsio::InvalidBucketNameError>(NATSIO_ERR_INVALID_BUCKET_NAME, [&] {
        js.create_object_store(R"({"bucket":"no spaces"})");
    });
    // A field of the wrong kind is refused before anything is sent, and
    // the text names the field; a field the library does not model goes to
    // the server, which refuses one it does not know either.
    std::string text = expect_throws<natsio::ConfigError>(NATSIO_ERR_CONFIG, [&] {
        js.create_object_store(R"({"bucket":"CPPOBJ_x","ttl":"soon"})");
    });
    EXPECT_TRUE(contains(text, "ttl")) << text;
    text = expect_throws<natsio::ConfigError>(NATSIO_ERR_CONFIG, [&] {
        js.create_object_store(R"({"bucket":"CPPOBJ_x","storage":"tape"})");
    });
    EXPECT_TRUE(contains(text, "storage")) << text;
    expect_throws<natsio::ConfigError>(NATSIO_ERR_CONFIG,
                                       [&] { js.create_object_store(R"({"storage":"memory"})"); });
    text = expect_throws<natsio::ApiError>(NATSIO_ERR_JS_API, [&] {
        js.create_object_store(R"({"bucket":"CPPOBJ_x","histroy":5})");
    });
    EXPECT_TRUE(contains(text, "histroy")) << text;
    // Nothing was created by the rejected configs.
    EXPECT_THROW(js.object_store("CPPOBJ_x"), natsio::BucketNotFoundError);
    // Create with another configuration than the existing bucket's.
    natsio::ObjectStore store = bucket();
    expect_throws<natsio::BucketExistsError>(NATSIO_ERR_BUCKET_EXISTS, [&] {
        js.create_object_store(R"({"bucket":")" + bucket_name() +
                               R"(","storage":"memory","description":"other"})");
    });
}

TEST_F(Obj, BucketCallsAsync) {
    const std::string name = bucket_name();
    natsio::ObjectStore store =
        js.create_object_store_async(R"({"bucket":")" + name + R"(","storage":"memory"})").get();
    track(name);
    EXPECT_EQ(store.bucket(), name);
    EXPECT_EQ(js.object_store_async(name).get().bucket(), name);
    std::vector<std::string> names = js.object_store_names_async().get();
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end());
    std::vector<natsio::ObjectStoreStatus> statuses = js.object_store_statuses_async().get();
    EXPECT_TRUE(std::any_of(statuses.begin(), statuses.end(),
                            [&](const natsio::ObjectStoreStatus& s) { return s.bucket == name; }));
    EXPECT_EQ(store.status_async().get().bucket, name);
    js.delete_object_store_async(name).get();
    EXPECT_THROW(js.object_store_async(name).get(), natsio::BucketNotFoundError);
}

// ---------------------------------------------------------------------------
// Put and get
// ---------------------------------------------------------------------------

TEST_F(Obj, RoundTripsAroundTheChunkSize) {
    natsio::ObjectStore store = bucket();
    const std::uint32_t chunk = 1024;
    struct Case {
        std::size_t size;
        std::uint64_t chunks;
    };
    for (Case c : {Case{0, 0}, Case{1, 1}, Case{chunk, 1}, Case{chunk + 1, 2},
                   Case{3 * chunk + 7, 4}}) {
        SCOPED_TRACE("size " + std::to_string(c.size));
        const std::string name = numbered("obj-", static_cast<long long>(c.size));
        const std::string data = random_bytes(c.size);
        natsio::ObjectInfo put = store.put(name, data, chunked(chunk));
        EXPECT_EQ(put.name, name);
        EXPECT_EQ(put.bucket, store.bucket());
        EXPECT_EQ(put.size, c.size);
        EXPECT_EQ(put.chunks, c.chunks);
        EXPECT_EQ(put.digest.rfind("SHA-256=", 0), 0u) << put.digest;
        EXPECT_FALSE(put.deleted);
        EXPECT_FALSE(put.is_link());
        EXPECT_FALSE(put.nuid.empty());
        EXPECT_TRUE(near_now(put.mtime));

        natsio::ObjectReader reader = store.get(name);
        natsio::ObjectInfo read_info = reader.info();
        EXPECT_EQ(read_info.size, c.size);
        EXPECT_EQ(read_info.digest, put.digest);
        EXPECT_EQ(read_info.nuid, put.nuid);
        EXPECT_EQ(reader.read_all(), data);
        // The end stays the end.
        char more[8];
        EXPECT_EQ(reader.read(more, sizeof more), 0u);

        EXPECT_EQ(as_string(store.get_bytes(name)), data);
        natsio::ObjectInfo info = store.info(name);
        EXPECT_EQ(info.digest, put.digest);
        EXPECT_EQ(info.size, c.size);
        EXPECT_EQ(info.max_chunk_size, chunk);
    }
    // ADR-20's digest form, as nats.go computes it.
    EXPECT_EQ(store.info("obj-0").digest, "SHA-256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU=");
    EXPECT_EQ(store.put("a", "a").digest, "SHA-256=ypeBEsobvcr6wjGzmiPcTaeG7_gUfE5yuYB3ha_uSLs=");
    EXPECT_EQ(store.list().size(), 6u);
}

TEST_F(Obj, LargeObjectThroughStreams) {
    natsio::ObjectStore store = bucket();
    // 1.5 MiB + 3 in the default 128 KiB chunks: 13 chunks.
    const std::string data = random_bytes(3 * 512 * 1024 + 3);
    std::istringstream in(data);
    natsio::ObjectInfo put = store.put("big", in);
    EXPECT_EQ(put.size, data.size());
    EXPECT_EQ(put.chunks, 13u);
    EXPECT_EQ(put.max_chunk_size, 128u * 1024u);

    std::ostringstream out;
    natsio::ObjectReader reader = store.get("big");
    EXPECT_EQ(reader.write_to(out), data.size());
    EXPECT_TRUE(out.str() == data) << "the bytes read back differ";

    // Small reads into a fixed buffer reassemble it too.
    natsio::ObjectReader small = store.get("big");
    std::vector<std::byte> buffer(1000);
    std::string assembled;
    for (std::size_t n; (n = small.read(buffer)) > 0;) {
        EXPECT_LE(n, buffer.size());
        assembled.append(reinterpret_cast<const char*>(buffer.data()), n);
    }
    EXPECT_TRUE(assembled == data) << "the bytes read back differ";
    EXPECT_TRUE(as_string(store.get_bytes("big")) == data);
    EXPECT_EQ(store.get("big").read_all<std::vector<std::uint8_t>>().size(), data.size());
}

TEST_F(Obj, PutAndGetAsync) {
    natsio::ObjectStore store = bucket();
    const std::string data = random_bytes(5000);
    natsio::ObjectInfo put = store.put_async("async", data, chunked(1024)).get();
    EXPECT_EQ(put.size, 5000u);
    EXPECT_EQ(put.chunks, 5u);
    natsio::ObjectReader reader = store.get_async("async").get();
    std::string assembled;
    for (;;) {
        std::optional<natsio::ObjectChunk> piece = reader.next_async().get();
        if (!piece) {
            break;
        }
        EXPECT_FALSE(piece->empty());
        assembled += as_string(*piece);
    }
    EXPECT_TRUE(assembled == data);
    // Past the end: still the end.
    EXPECT_FALSE(reader.next_async().get().has_value());
    EXPECT_EQ(store.info_async("async").get().digest, put.digest);
}

#if __cplusplus >= 202002L
TEST_F(Obj, SpanInSpanOut) {
    natsio::ObjectStore store = bucket();
    std::array<std::byte, 300> bytes{};
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        bytes[i] = static_cast<std::byte>(i * 7);
    }
    natsio::ObjectMeta meta{.description = "span", .chunk_size = 128};
    EXPECT_EQ(store.put("span", std::span<const std::byte>(bytes), meta).chunks, 3u);
    natsio::ObjectReader reader = store.get("span");
    std::array<std::byte, 300> back{};
    std::size_t used = 0;
    while (std::size_t n = reader.read(std::span<std::byte>(back).subspan(used))) {
        used += n;
        if (used == back.size()) {
            break;
        }
    }
    EXPECT_EQ(used, back.size());
    EXPECT_EQ(reader.read(std::span<std::byte>(back)), 0u);  // the verified end
    EXPECT_EQ(back, bytes);
}
#endif

TEST_F(Obj, MetaHeadersAndMetadata) {
    natsio::ObjectStore store = bucket();
    natsio::Headers headers;
    headers.add("X-Kind", "report").add("X-Tag", "a").add("X-Tag", "b");
    natsio::ObjectMeta meta;
    meta.description = "quarterly \"numbers\"\n";
    meta.headers = headers;
    meta.metadata = {{"owner", "ops"}, {"ünï", "cøde \\ \t"}};
    natsio::ObjectInfo put = store.put("report", "data", meta);
    natsio::ObjectInfo info = store.info("report");
    for (const natsio::ObjectInfo* each : {&put, &info}) {
        EXPECT_EQ(each->description, meta.description);
        EXPECT_EQ(each->metadata, meta.metadata);
        EXPECT_EQ(each->headers().get("X-Kind"), std::optional<std::string_view>("report"));
        EXPECT_EQ(each->headers().values("X-Tag"), (std::vector<std::string_view>{"a", "b"}));
        EXPECT_TRUE(contains(each->json, R"("name":"report")")) << each->json;
    }
    // Copies share what the library returned; the headers outlive the
    // original.
    std::optional<natsio::ObjectInfo> original = store.info("report");
    natsio::ObjectInfo copy = *original;
    original.reset();
    EXPECT_EQ(copy.headers().get("X-Kind"), std::optional<std::string_view>("report"));
    // Without meta: no description, headers or metadata.
    natsio::ObjectInfo plain = store.put("plain", "x");
    EXPECT_FALSE(plain.description.has_value());
    EXPECT_TRUE(plain.metadata.empty());
    EXPECT_TRUE(plain.headers().empty());
    // A chunk size of 0 or an unknown field is refused.
    EXPECT_THROW(store.put("zero", "x", chunked(0)), natsio::ConfigError);
}

TEST_F(Obj, ReplaceKeepsOnlyTheNewVersion) {
    natsio::ObjectStore store = bucket();
    natsio::ObjectInfo v1 = store.put("doc", random_bytes(5000), chunked(1024));
    EXPECT_EQ(messages_of(store), 6u);  // 5 chunks + 1 meta
    natsio::ObjectInfo v2 = store.put("doc", "version two", chunked(1024));
    EXPECT_NE(v1.nuid, v2.nuid);
    EXPECT_NE(v1.digest, v2.digest);
    EXPECT_EQ(as_string(store.get_bytes("doc")), "version two");
    EXPECT_EQ(store.info("doc").nuid, v2.nuid);
    ASSERT_EQ(store.list().size(), 1u);
    // The old chunks are purged once the new meta landed: one chunk, one
    // meta.
    EXPECT_TRUE(wait_until([&] { return messages_of(store) == 2u; }))
        << messages_of(store) << " messages";
}

TEST_F(Obj, DeleteThenGet) {
    natsio::ObjectStore store = bucket();
    store.put("gone", random_bytes(3000), chunked(1024));
    store.put("kept", "kept");
    store.del("gone");

    expect_throws<natsio::ObjectDeletedError>(NATSIO_ERR_OBJECT_DELETED,
                                              [&] { store.get("gone"); });
    // A deleted object is a not-found object to whoever catches that.
    try {
        store.get("gone");
        ADD_FAILURE() << "no exception";
    } catch (const natsio::ObjectNotFoundError& e) {
        EXPECT_EQ(e.status(), NATSIO_ERR_OBJECT_DELETED);
    }
    EXPECT_THROW(store.info("gone"), natsio::ObjectDeletedError);
    natsio::ObjectInfo tombstone = store.info("gone", true);
    EXPECT_TRUE(tombstone.deleted);
    EXPECT_EQ(tombstone.size, 0u);
    EXPECT_EQ(tombstone.chunks, 0u);
    // Its chunks are purged: the stream holds the tombstone and "kept".
    EXPECT_TRUE(wait_until([&] { return messages_of(store) == 3u; }))
        << messages_of(store) << " messages";

    EXPECT_EQ(names_of(store.list()), (std::set<std::string>{"kept"}));
    std::vector<natsio::ObjectInfo> all = store.list(true);
    EXPECT_EQ(names_of(all), (std::set<std::string>{"gone", "kept"}));
    for (const natsio::ObjectInfo& info : all) {
        EXPECT_EQ(info.deleted, info.name == "gone");
    }

    // Never stored: exactly ObjectNotFoundError.
    expect_throws<natsio::ObjectNotFoundError>(NATSIO_ERR_OBJECT_NOT_FOUND,
                                               [&] { store.get("never"); });
    expect_throws<natsio::ObjectNotFoundError>(NATSIO_ERR_OBJECT_NOT_FOUND,
                                               [&] { store.info("never", true); });
    EXPECT_THROW(store.get_async("never").get(), natsio::ObjectNotFoundError);
    // Put again after the delete: alive again.
    store.put("gone", "back");
    EXPECT_EQ(as_string(store.get_bytes("gone")), "back");
    store.del_async("gone").get();
    EXPECT_THROW(store.get("gone"), natsio::ObjectDeletedError);
}

TEST_F(Obj, UpdateMetaRenamesAndRefusesALiveName) {
    natsio::ObjectStore store = bucket();
    const std::string data = random_bytes(2500);
    store.put("draft", data, chunked(1024));
    store.put("other", "other");

    natsio::ObjectMeta rename;
    rename.name = "final";
    rename.description = "renamed";
    rename.metadata = {{"v", "2"}};
    store.update_meta("draft", rename);
    natsio::ObjectInfo info = store.info("final");
    EXPECT_EQ(info.name, "final");
    EXPECT_EQ(info.description, std::optional<std::string>("renamed"));
    EXPECT_EQ(info.metadata, (std::map<std::string, std::string>{{"v", "2"}}));
    EXPECT_EQ(info.size, data.size());
    EXPECT_TRUE(as_string(store.get_bytes("final")) == data);
    EXPECT_THROW(store.info("draft"), natsio::ObjectNotFoundError);
    EXPECT_EQ(names_of(store.list()), (std::set<std::string>{"final", "other"}));

    // Onto a live object: refused, both unchanged.
    natsio::ObjectMeta onto;
    onto.name = "other";
    expect_throws<natsio::ObjectExistsError>(NATSIO_ERR_OBJECT_EXISTS,
                                             [&] { store.update_meta("final", onto); });
    EXPECT_EQ(as_string(store.get_bytes("other")), "other");
    EXPECT_TRUE(as_string(store.get_bytes("final")) == data);

    // Only the description, asynchronously; the name stays.
    natsio::ObjectMeta describe;
    describe.description = "again";
    store.update_meta_async("final", describe).get();
    EXPECT_EQ(store.info("final").description, std::optional<std::string>("again"));

    // Of a deleted or missing object.
    store.del("other");
    EXPECT_THROW(store.update_meta("other", describe), natsio::ObjectDeletedError);
    EXPECT_THROW(store.update_meta("missing", describe), natsio::ObjectNotFoundError);
    // Onto a deleted name: allowed.
    natsio::ObjectMeta onto_deleted;
    onto_deleted.name = "other";
    store.update_meta("final", onto_deleted);
    EXPECT_TRUE(as_string(store.get_bytes("other")) == data);
}

// ---------------------------------------------------------------------------
// Links
// ---------------------------------------------------------------------------

TEST_F(Obj, Links) {
    natsio::ObjectStore store = bucket();
    natsio::ObjectStore elsewhere = bucket("_2");
    const std::string data = random_bytes(2100);
    natsio::ObjectInfo target = store.put("target", data, chunked(1024));

    // To an object: reading the link reads the target.
    natsio::ObjectInfo link = store.add_link("shortcut", target);
    EXPECT_TRUE(link.is_link());
    EXPECT_EQ(link.name, "shortcut");
    ASSERT_TRUE(link.link.has_value());
    EXPECT_EQ(link.link->bucket, store.bucket());
    EXPECT_EQ(link.link->name, std::optional<std::string>("target"));
    EXPECT_TRUE(store.info("shortcut").is_link());
    natsio::ObjectReader reader = store.get("shortcut");
    EXPECT_EQ(reader.info().name, "target");
    EXPECT_TRUE(reader.read_all() == data);
    EXPECT_TRUE(as_string(store.get_bytes("shortcut")) == data);

    // Across buckets.
    natsio::ObjectInfo cross = elsewhere.add_link_async("from-elsewhere", target).get();
    EXPECT_EQ(cross.link->bucket, store.bucket());
    EXPECT_TRUE(as_string(elsewhere.get_bytes("from-elsewhere")) == data);

    // To a whole bucket: an info, not readable as an object.
    natsio::ObjectInfo blink = store.add_bucket_link("all-of-it", elsewhere.bucket());
    EXPECT_TRUE(blink.is_link());
    EXPECT_EQ(blink.link->bucket, elsewhere.bucket());
    EXPECT_FALSE(blink.link->name.has_value());
    EXPECT_EQ(store.add_bucket_link_async("all-again", elsewhere.bucket()).get().link->bucket,
              elsewhere.bucket());
    EXPECT_THROW(store.get("all-of-it"), natsio::ObjectLinkError);

    // To a link: refused.
    expect_throws<natsio::ObjectLinkError>(NATSIO_ERR_OBJECT_LINK,
                                           [&] { store.add_link("chain", link); });
    // Over a live object that is not a link: refused.
    store.put("plain", "plain");
    expect_throws<natsio::ObjectExistsError>(NATSIO_ERR_OBJECT_EXISTS,
                                             [&] { store.add_link("plain", target); });
    // To a deleted object: refused.
    store.put("doomed", "doomed");
    store.del("doomed");
    expect_throws<natsio::ObjectLinkError>(NATSIO_ERR_OBJECT_LINK, [&] {
        store.add_link("to-doomed", store.info("doomed", true));
    });
    // An ObjectInfo the library did not make has nothing to link to.
    EXPECT_THROW(store.add_link("nothing", natsio::ObjectInfo()), natsio::InvalidArgumentError);
}

// ---------------------------------------------------------------------------
// Seal
// ---------------------------------------------------------------------------

TEST_F(Obj, SealRefusesWrites) {
    natsio::ObjectStore store = bucket();
    store.put("before", "sealed in");
    store.seal();
    EXPECT_TRUE(store.status().sealed);
    EXPECT_TRUE(js.object_store(bucket_name()).status().sealed);

    expect_throws<natsio::BucketSealedError>(NATSIO_ERR_BUCKET_SEALED,
                                             [&] { store.put("after", "x"); });
    EXPECT_THROW(store.put_async("after", "x").get(), natsio::BucketSealedError);
    EXPECT_THROW(store.del("before"), natsio::BucketSealedError);
    natsio::ObjectMeta describe;
    describe.description = "x";
    EXPECT_THROW(store.update_meta("before", describe), natsio::BucketSealedError);
    EXPECT_THROW(
        {
            natsio::ObjectWriter w = store.writer("after", chunked(1024));
            w.write(random_bytes(4096));
            w.finish();
        },
        natsio::BucketSealedError);
    // Still readable; sealing twice is fine.
    EXPECT_EQ(as_string(store.get_bytes("before")), "sealed in");
    EXPECT_EQ(names_of(store.list()), (std::set<std::string>{"before"}));
    store.seal_async().get();
}

// ---------------------------------------------------------------------------
// Watch
// ---------------------------------------------------------------------------

TEST_F(Obj, WatchInitialValuesMarkerAndUpdates) {
    natsio::ObjectStore store = bucket();
    store.put("a", "1");
    store.put("b", "2");
    store.put("a", "3");  // the latest of each object only

    natsio::ObjectWatcher w = store.watch();
    natsio::ObjectInfo first = next_object(w);
    natsio::ObjectInfo second = next_object(w);
    EXPECT_EQ(first.name, "b");
    EXPECT_EQ(second.name, "a");
    EXPECT_EQ(second.size, 1u);
    expect_marker(w, store.bucket());

    store.put("c", "new");
    natsio::ObjectInfo c = next_object(w);
    EXPECT_EQ(c.name, "c");
    EXPECT_FALSE(c.deleted);
    store.del("a");
    natsio::ObjectInfo gone = next_object(w);
    EXPECT_EQ(gone.name, "a");
    EXPECT_TRUE(gone.deleted);
    natsio::ObjectMeta describe;
    describe.description = "described";
    store.update_meta("c", describe);
    natsio::ObjectInfo described = next_object(w);
    EXPECT_EQ(described.name, "c");
    EXPECT_EQ(described.description, std::optional<std::string>("described"));
    expect_quiet(w);

    // Asynchronously.
    auto pending = w.next_async();
    store.put("d", "d");
    std::optional<natsio::ObjectInfo> d = pending.get();
    ASSERT_TRUE(d.has_value());
    EXPECT_EQ(d->name, "d");
    EXPECT_GE(w.stats().delivered, 6u);

    w.stop();
    EXPECT_FALSE(w.next(1s).has_value());
}

TEST_F(Obj, WatchOptions) {
    natsio::ObjectStore store = bucket();
    store.put("old", "v1");
    store.put("old", "v2");
    store.put("dead", "x");
    store.del("dead");

    // ignore_deletes: the tombstone is left out, before and after the
    // marker.
    natsio::ObjectWatchOptions no_deletes;
    no_deletes.ignore_deletes = true;
    natsio::ObjectWatcher quiet = store.watch(no_deletes);
    EXPECT_EQ(next_object(quiet).name, "old");
    expect_marker(quiet, store.bucket());

    // updates_only: the marker first, then changes only.
    natsio::ObjectWatchOptions updates;
    updates.updates_only = true;
    natsio::ObjectWatcher fresh = store.watch(updates);
    expect_marker(fresh, store.bucket());
    expect_quiet(fresh, 100ms);

    // include_history: every kept version of each object. Replacing
    // purges older metas (rollup), so the history of "old" is its latest.
    natsio::ObjectWatchOptions history;
    history.include_history = true;
    natsio::ObjectWatcher all = store.watch_async(history).get();
    std::vector<std::string> seen;
    for (;;) {
        natsio::ObjectInfo info = next_item(all);
        if (info.initial_done()) {
            break;
        }
        seen.push_back(info.name + (info.deleted ? "-" : "+"));
    }
    EXPECT_EQ(seen, (std::vector<std::string>{"old+", "dead-"}));

    store.put("x", "x");
    store.del("x");
    store.put("y", "y");
    EXPECT_EQ(next_object(quiet).name, "x");
    EXPECT_EQ(next_object(quiet).name, "y");  // the delete of x left out
    natsio::ObjectInfo fx = next_object(fresh);
    EXPECT_EQ(fx.name, "x");
    EXPECT_FALSE(fx.deleted);
    natsio::ObjectInfo fdel = next_object(fresh);
    EXPECT_EQ(fdel.name, "x");
    EXPECT_TRUE(fdel.deleted);
    EXPECT_EQ(next_object(fresh).name, "y");
}

TEST_F(Obj, WatchInPushMode) {
    natsio::ObjectStore store = bucket();
    store.put("one", "1");
    natsio::ObjectWatcher w = store.watch();
    std::mutex mutex;
    std::vector<std::string> names;
    std::promise<std::exception_ptr> ended;
    w.set_callback(
        [&](natsio::ObjectInfo info) {
            std::lock_guard<std::mutex> lock(mutex);
            names.push_back(info.initial_done() ? std::string("<marker>") : info.name);
        },
        [&](std::exception_ptr error) { ended.set_value(error); });
    store.put("two", "2");
    EXPECT_TRUE(wait_until([&] {
        std::lock_guard<std::mutex> lock(mutex);
        return names.size() >= 3;
    }));
    {
        std::lock_guard<std::mutex> lock(mutex);
        EXPECT_EQ(names, (std::vector<std::string>{"one", "<marker>", "two"}));
    }
    // Deleting the bucket ends the watch with BucketNotFoundError.
    js.delete_object_store(bucket_name());
    std::future<std::exception_ptr> end = ended.get_future();
    ASSERT_EQ(end.wait_for(10s), std::future_status::ready);
    std::exception_ptr error = end.get();
    ASSERT_TRUE(error);
    EXPECT_THROW(std::rethrow_exception(error), natsio::BucketNotFoundError);
}

// ---------------------------------------------------------------------------
// List
// ---------------------------------------------------------------------------

TEST_F(Obj, List) {
    natsio::ObjectStore store = bucket();
    EXPECT_TRUE(store.list().empty());
    EXPECT_TRUE(store.list_async(true).get().empty());
    for (int i = 0; i < 5; ++i) {
        store.put(numbered("item-", i), std::string(static_cast<std::size_t>(i), 'x'));
    }
    std::vector<natsio::ObjectInfo> infos = store.list();
    ASSERT_EQ(infos.size(), 5u);
    for (const natsio::ObjectInfo& info : infos) {
        EXPECT_EQ(info.bucket, store.bucket());
        EXPECT_EQ(info.size, static_cast<std::uint64_t>(info.name.back() - '0'));
    }
    store.del("item-2");
    EXPECT_EQ(store.list().size(), 4u);
    EXPECT_EQ(store.list_async(true).get().size(), 5u);
}

// Every info carries its revision, the stream sequence its description is
// stored at (nats.js's ObjectInfo.revision): put, info, update_meta,
// add_link, list, watch and del agree with the stream's last sequence.
TEST_F(Obj, RevisionIsTheDescriptionsStreamSequence) {
    natsio::ObjectStore store = bucket();
    natsio::ObjectInfo put1 = store.put("a", "one");
    EXPECT_EQ(put1.revision, 2u);  // its chunk at 1, its description at 2
    EXPECT_EQ(store.info("a").revision, put1.revision);
    std::istringstream in("two");
    natsio::ObjectInfo put2 = store.put("a", in);  // through the writer
    EXPECT_EQ(put2.revision, last_seq_of(store));
    EXPECT_GT(put2.revision, put1.revision);
    EXPECT_EQ(store.get("a").info().revision, put2.revision);

    natsio::ObjectMeta describe;
    describe.description = "changed";
    store.update_meta("a", describe);
    natsio::ObjectInfo updated = store.info("a");
    EXPECT_EQ(updated.revision, last_seq_of(store));
    EXPECT_GT(updated.revision, put2.revision);
    natsio::ObjectInfo link = store.add_link("to-a", updated);
    EXPECT_EQ(link.revision, last_seq_of(store));
    EXPECT_EQ(store.info("to-a").revision, link.revision);

    // The list and a watch read the same revisions.
    std::vector<natsio::ObjectInfo> infos = store.list();
    ASSERT_EQ(infos.size(), 2u);
    for (const natsio::ObjectInfo& info : infos) {
        EXPECT_EQ(info.revision, store.info(info.name).revision) << info.name;
    }
    natsio::ObjectWatcher w = store.watch();
    natsio::ObjectInfo watched = next_object(w);
    EXPECT_EQ(watched.name, "a");
    EXPECT_EQ(watched.revision, updated.revision);
    EXPECT_EQ(next_object(w).revision, link.revision);
    natsio::ObjectInfo marker = next_item(w);
    EXPECT_TRUE(marker.initial_done());
    EXPECT_EQ(marker.revision, 0u);

    // A delete's tombstone is the newest description.
    store.del("a");
    natsio::ObjectInfo gone = next_object(w);
    EXPECT_TRUE(gone.deleted);
    EXPECT_EQ(gone.revision, last_seq_of(store));
    EXPECT_EQ(store.info("a", true).revision, gone.revision);
    EXPECT_EQ(natsio::ObjectInfo().revision, 0u);
}

// ---------------------------------------------------------------------------
// Writer
// ---------------------------------------------------------------------------

TEST_F(Obj, WriterInPieces) {
    natsio::ObjectStore store = bucket();
    const std::string data = random_bytes(10000);
    natsio::ObjectWriter w = store.writer("pieces", chunked(1024));
    EXPECT_TRUE(w);
    // Uneven pieces, the blocking and the future forms interleaved.
    std::size_t at = 0;
    for (std::size_t piece : {1u, 999u, 1024u, 3000u, 0u, 4976u}) {
        if (at % 2 == 0) {
            w.write(natsio::ByteView(data.data() + at, piece));
        } else {
            w.write_async(natsio::ByteView(data.data() + at, piece)).get();
        }
        at += piece;
    }
    ASSERT_EQ(at, data.size());
    natsio::ObjectInfo info = w.finish_async().get();
    EXPECT_EQ(info.size, data.size());
    EXPECT_EQ(info.chunks, 10u);
    EXPECT_TRUE(as_string(store.get_bytes("pieces")) == data);
    // Finished: writing more is refused, and a late abort() changes nothing.
    EXPECT_THROW(w.write("more"), natsio::IllegalStateError);
    EXPECT_THROW(w.finish(), natsio::IllegalStateError);
    w.abort();
    EXPECT_TRUE(as_string(store.get_bytes("pieces")) == data);
}

TEST_F(Obj, WriterAbortLeavesTheOldVersion) {
    natsio::ObjectStore store = bucket();
    const std::string v1 = random_bytes(1500);
    store.put("doc", v1, chunked(1024));
    const std::uint64_t before = messages_of(store);

    natsio::ObjectWriter w = store.writer("doc", chunked(1024));
    w.write(random_bytes(5000, 99));  // four full chunks go out
    w.abort();
    EXPECT_THROW(w.write("x"), natsio::IllegalStateError);
    EXPECT_THROW(w.finish(), natsio::IllegalStateError);
    EXPECT_TRUE(as_string(store.get_bytes("doc")) == v1);
    EXPECT_EQ(store.info("doc").size, v1.size());
    EXPECT_TRUE(wait_until([&] { return messages_of(store) == before; }))
        << messages_of(store) << " messages, " << before << " before";

    // Destroyed unfinished: aborted in the background.
    {
        natsio::ObjectWriter dropped = store.writer("doc", chunked(1024));
        dropped.write(random_bytes(5000, 98));
    }
    EXPECT_TRUE(wait_until([&] { return messages_of(store) == before; }))
        << messages_of(store) << " messages, " << before << " before";
    EXPECT_TRUE(as_string(store.get_bytes("doc")) == v1);

    // A failing input stream aborts the put too.
    std::istringstream broken(random_bytes(3000));
    broken.setstate(std::ios::badbit);
    EXPECT_THROW(store.put("doc", broken, chunked(1024)), natsio::IoError);
    EXPECT_TRUE(as_string(store.get_bytes("doc")) == v1);
}

// ---------------------------------------------------------------------------
// Integrity and bad input
// ---------------------------------------------------------------------------

TEST_F(Obj, ExtraChunkFailsTheDigest) {
    natsio::ObjectStore store = bucket();
    const std::string data = random_bytes(2048);
    natsio::ObjectInfo info = store.put("victim", data, chunked(1024));
    // A chunk published straight to the object's chunk subject.
    js.publish("$O." + std::string(store.bucket()) + ".C." + info.nuid, "intruder");
    natsio::ObjectReader reader = store.get("victim");
    std::string got;
    std::array<char, 512> buffer{};
    try {
        for (std::size_t n; (n = reader.read(buffer, 5s)) > 0;) {
            got.append(buffer.data(), n);
        }
        ADD_FAILURE() << "read to the end without an error (" << got.size() << " bytes)";
    } catch (const natsio::DigestMismatchError& e) {
        EXPECT_EQ(e.status(), NATSIO_ERR_DIGEST_MISMATCH);
    }
    EXPECT_THROW(store.get_bytes("victim"), natsio::DigestMismatchError);
}

TEST_F(Obj, BadInput) {
    natsio::ObjectStore store = bucket();
    // An empty name: InvalidObjectNameError, which is a ConfigError.
    expect_throws<natsio::InvalidObjectNameError>(NATSIO_ERR_INVALID_OBJECT_NAME,
                                                  [&] { store.put("", "x"); });
    EXPECT_THROW(store.get(""), natsio::InvalidObjectNameError);
    EXPECT_THROW(store.info(""), natsio::InvalidObjectNameError);
    EXPECT_THROW(store.del(""), natsio::InvalidObjectNameError);
    EXPECT_THROW(store.writer(""), natsio::ConfigError);
    EXPECT_THROW(store.add_bucket_link("", store.bucket()), natsio::InvalidObjectNameError);
    EXPECT_THROW(store.add_bucket_link("l", "bad bucket"), natsio::InvalidBucketNameError);
    // A NUL cannot cross the C ABI.
    EXPECT_THROW(store.put(std::string_view("a\0b", 3), "x"), natsio::InvalidArgumentError);
    // Names are any UTF-8 text, dots and slashes included.
    const std::string odd = "dir/sub.file name ü?*>";
    store.put(odd, "odd");
    EXPECT_EQ(as_string(store.get_bytes(odd)), "odd");
    EXPECT_EQ(store.info(odd).name, odd);
    // Meta fields the call does not take.
    EXPECT_THROW(store.update_meta(odd, chunked(1024)), natsio::ConfigError);

    // Empty and moved-from owners.
    natsio::ObjectStore moved = std::move(store);
    EXPECT_FALSE(store);  // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(store.bucket(), "");
    expect_throws<natsio::NullArgumentError>(NATSIO_ERR_NULL_ARGUMENT,
                                                [&] { store.put("x", "y"); });
    natsio::ObjectReader reader;
    EXPECT_THROW(reader.read_all(), natsio::InvalidArgumentError);
    natsio::ObjectWriter writer;
    EXPECT_THROW(writer.write("x"), natsio::InvalidArgumentError);
    EXPECT_EQ(as_string(moved.get_bytes(odd)), "odd");
}

TEST_F(Obj, UseAfterCloseThrowsConnectionClosed) {
    natsio::ObjectStore store = bucket();
    store.put("x", "x");
    natsio::ObjectWriter w = store.writer("y", chunked(1024));
    client.close();
    expect_throws<natsio::ConnectionClosedError>(NATSIO_ERR_CONNECTION_CLOSED,
                                                 [&] { store.put("x", "again"); });
    EXPECT_THROW(store.get("x"), natsio::ConnectionClosedError);
    EXPECT_THROW(store.list(), natsio::ConnectionClosedError);
    EXPECT_THROW(js.object_store(bucket_name()), natsio::ConnectionClosedError);
    EXPECT_THROW(
        {
            w.write(random_bytes(2048));
            w.finish();
        },
        natsio::ConnectionClosedError);
    // Clean up through a new connection.
    natsio::Client again = connect();
    natsio::JetStream(again).delete_object_store(bucket_name());
}

TEST_F(Obj, ClientClosedDuringGet) {
    natsio::ObjectStore store = bucket();
    // 512 chunks: more than a reader fetches ahead, so some are still on
    // the server when the client closes.
    const std::string data = random_bytes(512 * 1024);
    store.put("big", data, chunked(1024));
    natsio::ObjectReader reader = store.get("big");
    std::array<char, 1000> buffer{};
    std::size_t total = reader.read(buffer, 5s);
    EXPECT_GT(total, 0u);
    client.close();
    // What was fetched may still be read; then the read fails, and never
    // reports the verified end.
    try {
        for (;;) {
            std::size_t n = reader.read(buffer, 5s);
            if (n == 0) {
                ADD_FAILURE() << "the verified end after the client closed";
                break;
            }
            total += n;
        }
    } catch (const natsio::ConnectionClosedError& e) {
        EXPECT_EQ(e.status(), NATSIO_ERR_CONNECTION_CLOSED);
    }
    EXPECT_LT(total, data.size());
    natsio::Client again = connect();
    natsio::JetStream(again).delete_object_store(bucket_name());
}
