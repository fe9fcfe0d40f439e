/// @file
/// Object Store for the header-only C++ binding of libnatsio (included
/// by natsio/jetstream.hpp; including either is enough).
///
/// The same model as jetstream.hpp over the natsio_obj_* part of
/// include/natsio.h (ADR-20 buckets, readable and writable by nats.go,
/// nats.js, nats.c and the other natsio bindings):
///   - buckets on the JetStream context: create_object_store (one call with a
///     CreateAction: create, update, create-or-update), object_store (bind),
///     delete_object_store, object_store_names, object_store_statuses;
///   - ObjectStore, a bound bucket: put (from a ByteView: a buffer, a string,
///     std::span<const std::byte>, ...; or from a std::istream), writer() for
///     data fed in pieces (ObjectWriter: write, finish, abort; destroying an
///     unfinished writer aborts it), get (ObjectReader: read into a buffer or
///     std::span, read_all, write_to a std::ostream), get_bytes, info,
///     update_meta, del, list, watch (ObjectWatcher, a natsio::Feed of
///     ObjectInfo), add_link, add_bucket_link, seal, status;
///   - every request has a blocking form and an `_async` form returning a
///     natsio::Future (ObjectStore, ObjectInfo, std::vector<ObjectInfo>,
///     ObjectStoreStatus, std::vector<ObjectStoreStatus>, ObjectReader,
///     ObjectWatcher, std::optional<ObjectChunk> for a reader's pieces, void);
///   - ObjectInfo and ObjectStoreStatus are copyable values; ObjectMeta is
///     what put, writer and update_meta take (sent as the C meta JSON);
///   - move-only RAII owners (ObjectStore, ObjectWriter, ObjectReader,
///     ObjectWatcher) whose destructors call the handle's _free; a moved-from
///     or default-built owner holds no handle and its calls throw
///     InvalidArgumentError;
///   - exceptions from natsio/errors.hpp: ObjectNotFoundError,
///     ObjectDeletedError (an ObjectNotFoundError), ObjectExistsError,
///     DigestMismatchError, ObjectLinkError, InvalidObjectNameError (a
///     ConfigError), BucketSealedError, and the bucket errors shared with
///     Key-Value (BucketNotFoundError, BucketExistsError,
///     InvalidBucketNameError).
///
/// Lifetimes: as in jetstream.hpp, no owner keeps its Client open; after the
/// client is closed every call throws ConnectionClosedError. Every type is
/// thread-safe, except that one ObjectWriter or ObjectReader is meant to be
/// driven by one thread at a time (its calls are applied in call order).
#ifndef NATSIO_CPP_OBJECT_HPP
#define NATSIO_CPP_OBJECT_HPP

#include <natsio.h>
#include <natsio/errors.hpp>
#include <natsio/jetstream.hpp>
#include <natsio/natsio.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <istream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace natsio {

// ---------------------------------------------------------------------------
// Buffers (meta out: detail::append_json_string, natsio.hpp; metadata in:
// detail::MetadataParser, jetstream.hpp)
// ---------------------------------------------------------------------------

namespace detail {

/// Enabled for a mutable contiguous buffer of char, unsigned char or
/// std::byte (std::span<std::byte>, std::vector<std::byte>&, std::string&,
/// std::array<char, N>&, ...): ObjectReader::read's targets.
template <class Buffer, class = void>
struct is_mutable_byte_buffer : std::false_type {};
template <class Buffer>
struct is_mutable_byte_buffer<
    Buffer, std::void_t<decltype(std::data(std::declval<Buffer&>())),
                        decltype(std::size(std::declval<Buffer&>()))>> {
    using Pointer = decltype(std::data(std::declval<Buffer&>()));
    using Element = std::remove_pointer_t<Pointer>;
    static constexpr bool value =
        std::is_pointer_v<Pointer> && !std::is_const_v<Element> &&
        (std::is_same_v<Element, char> || std::is_same_v<Element, unsigned char> ||
         std::is_same_v<Element, std::byte>);
};

/// Enabled for a growable container of char, unsigned char or std::byte
/// (std::string, std::vector<std::byte>, std::vector<std::uint8_t>, ...):
/// ObjectReader::read_all's results.
template <class Container, class = void>
struct is_byte_container : std::false_type {};
template <class Container>
struct is_byte_container<
    Container, std::void_t<typename Container::value_type,
                           decltype(std::declval<Container&>().resize(std::size_t{})),
                           decltype(std::data(std::declval<Container&>()))>>
    : std::bool_constant<std::is_same_v<typename Container::value_type, char> ||
                         std::is_same_v<typename Container::value_type, unsigned char> ||
                         std::is_same_v<typename Container::value_type, std::byte>> {};

}  // namespace detail

// ---------------------------------------------------------------------------
// Values: ObjectMeta in, ObjectInfo and ObjectStoreStatus out
// ---------------------------------------------------------------------------

/// What ObjectStore::put, writer and update_meta take besides the name.
/// Unset fields are not sent.
// (Explicit initializers keep C++20 designated initialization free of
// -Wmissing-field-initializers.)
struct ObjectMeta {
    /// update_meta only: the object's new name (unset: keep the name). A
    /// live object with that name makes update_meta throw
    /// ObjectExistsError.
    std::optional<std::string> name = std::nullopt;
    /// The object's description.
    std::optional<std::string> description = std::nullopt;
    /// Headers stored with the object (every value of each name); borrowed
    /// for the call.
    HeadersView headers = {};
    /// Application metadata stored with the object.
    std::map<std::string, std::string> metadata = {};
    /// put and writer only: the chunk size in bytes (unset: 128 KiB).
    std::optional<std::uint32_t> chunk_size = std::nullopt;

    /// The meta JSON of the C ABI (natsio_obj_put, _writer_open,
    /// _update_meta).
    std::string to_json() const {
        std::string out = "{";
        bool first = true;
        auto field = [&](const char* key) {
            if (!first) {
                out += ',';
            }
            first = false;
            detail::append_json_string(out, key);
            out += ':';
        };
        if (name) {
            field("name");
            detail::append_json_string(out, *name);
        }
        if (description) {
            field("description");
            detail::append_json_string(out, *description);
        }
        if (headers) {
            // {"Name": ["v1", "v2"], ...}: the values of each name in
            // order, the names in the order they first appear.
            field("headers");
            out += '{';
            std::vector<std::string_view> names;
            for (auto entry : headers) {
                bool seen = false;
                for (std::string_view n : names) {
                    seen = seen || n == entry.first;
                }
                if (!seen) {
                    names.push_back(entry.first);
                }
            }
            for (std::size_t i = 0; i < names.size(); ++i) {
                if (i > 0) {
                    out += ',';
                }
                detail::append_json_string(out, names[i]);
                out += ":[";
                bool first_value = true;
                for (auto entry : headers) {
                    if (entry.first == names[i]) {
                        if (!first_value) {
                            out += ',';
                        }
                        first_value = false;
                        detail::append_json_string(out, entry.second);
                    }
                }
                out += ']';
            }
            out += '}';
        }
        if (!metadata.empty()) {
            field("metadata");
            detail::append_json_string_map(out, metadata);
        }
        if (chunk_size) {
            field("chunk_size");
            out += std::to_string(*chunk_size);
        }
        out += '}';
        return out;
    }
};

/// Where a link points (ObjectInfo::link).
struct ObjectLink {
    /// The bucket of the linked object, or the linked bucket.
    std::string bucket;
    /// The linked object; std::nullopt for a link to a whole bucket.
    std::optional<std::string> name = std::nullopt;
};

/// What the bucket records about one object: a copy of a natsio_obj_info's
/// fields, plus the library's info itself (shared by the copies, read-only)
/// for headers() and ObjectStore::add_link. Also what an ObjectWatcher
/// yields, including its initial-values marker (initial_done()).
class ObjectInfo {
public:
    /// The object's name ("" for a watcher's marker).
    std::string name;
    /// The object's description, if it has one.
    std::optional<std::string> description;
    /// The bucket holding the object.
    std::string bucket;
    /// The unique id of this version's chunks (`$O.<bucket>.C.<nuid>`).
    std::string nuid;
    /// Size in bytes.
    std::uint64_t size = 0;
    /// Number of chunks.
    std::uint64_t chunks = 0;
    /// "SHA-256=<base64url>" of the data ("" when none, e.g. a link).
    std::string digest;
    /// True for a deleted object's tombstone (ObjectStore::info with
    /// show_deleted, list with include_deleted, watch).
    bool deleted = false;
    /// When this version's meta was stored.
    std::chrono::system_clock::time_point mtime{};
    /// The stream sequence this description is stored at (nats.js's
    /// ObjectInfo.revision): as read back (info, ObjectReader::info, list,
    /// watch) or as stored by the call that returned it (put,
    /// ObjectWriter::finish, add_link, add_bucket_link); it grows with
    /// every change of the object (put, update_meta, del). 0 for a
    /// watcher's marker and a default-built ObjectInfo.
    std::uint64_t revision = 0;
    /// Application metadata stored with the object.
    std::map<std::string, std::string> metadata;
    /// Set for a link (ObjectStore::add_link, add_bucket_link).
    std::optional<ObjectLink> link;
    /// The chunk size it was written with (0 if unrecorded).
    std::uint32_t max_chunk_size = 0;
    /// The ObjectInfo JSON as ADR-20 / nats.go write it.
    std::string json;

    /// An empty info, holding no library info (c_info() is null).
    ObjectInfo() = default;
    /// Takes ownership of an info from the C API.
    explicit ObjectInfo(natsio_obj_info* owned) : handle_(owned, &free_info) { copy_fields(); }
    /// A copy of an info borrowed from the C API (natsio_obj_info_clone).
    explicit ObjectInfo(const natsio_obj_info* borrowed) {
        natsio_obj_info* copy = nullptr;
        detail::check(natsio_obj_info_clone(borrowed, &copy));
        handle_ = std::shared_ptr<const natsio_obj_info>(copy, &free_info);
        copy_fields();
    }

    /// The stored headers; an empty view when there are none. Valid while
    /// this ObjectInfo or a copy of it lives.
    HeadersView headers() const noexcept { return HeadersView(natsio_obj_info_headers(c_info())); }
    /// True for a link (`link` is set).
    bool is_link() const noexcept { return link.has_value(); }
    /// True for an ObjectWatcher's marker: every object that existed when
    /// the watch started has been delivered (empty name, bucket set).
    bool initial_done() const noexcept { return initial_done_; }

    /// The library's info (NULL for a default-built ObjectInfo).
    const natsio_obj_info* c_info() const noexcept { return handle_.get(); }

private:
    static void free_info(const natsio_obj_info* info) noexcept {
        natsio_obj_info_free(const_cast<natsio_obj_info*>(info));
    }

    void copy_fields() {
        const natsio_obj_info* info = c_info();
        name = detail::view_of(natsio_obj_info_name(info));
        if (const char* text = natsio_obj_info_description(info)) {
            description = std::string(text);
        }
        bucket = detail::view_of(natsio_obj_info_bucket(info));
        nuid = detail::view_of(natsio_obj_info_nuid(info));
        size = natsio_obj_info_size(info);
        chunks = natsio_obj_info_chunks(info);
        digest = detail::view_of(natsio_obj_info_digest(info));
        deleted = natsio_obj_info_deleted(info);
        mtime = detail::time_from_ns(natsio_obj_info_mtime_ns(info));
        revision = natsio_obj_info_revision(info);
        metadata = detail::MetadataParser::parse(natsio_obj_info_metadata_json(info));
        if (natsio_obj_info_is_link(info)) {
            ObjectLink to;
            to.bucket = detail::view_of(natsio_obj_info_link_bucket(info));
            if (const char* target = natsio_obj_info_link_name(info)) {
                to.name = std::string(target);
            }
            link = std::move(to);
        }
        max_chunk_size = natsio_obj_info_max_chunk_size(info);
        json = detail::view_of(natsio_obj_info_json(info));
        initial_done_ = natsio_obj_info_is_initial_done(info);
    }

    std::shared_ptr<const natsio_obj_info> handle_;
    bool initial_done_ = false;
};

/// A bucket's status (ObjectStore::status, JetStream::object_store_statuses).
struct ObjectStoreStatus {
    /// The bucket's name.
    std::string bucket;
    /// The bucket's description, if it has one.
    std::optional<std::string> description = std::nullopt;
    /// How long objects are kept; zero: forever.
    std::chrono::nanoseconds ttl{0};
    /// "file" or "memory".
    std::string storage;
    /// How many replicas the bucket has.
    std::int64_t replicas = 0;
    /// Bytes the bucket's stream holds (chunks and descriptions).
    std::uint64_t size = 0;
    /// A sealed bucket can be read but no longer changed.
    bool sealed = false;
    /// Whether the bucket's stream compresses (s2).
    bool compression = false;
    /// The bucket's application metadata.
    std::map<std::string, std::string> metadata = {};
    /// The backing stream's StreamInfo JSON.
    std::string stream_info_json;
};

/// One piece of an object, as ObjectReader::next_async yields it.
using ObjectChunk = std::vector<std::byte>;

/// Options of ObjectStore::watch (natsio_obj_watch_options); all off by
/// default.
struct ObjectWatchOptions {
    /// Deliver every kept version first, not only the latest per object.
    bool include_history = false;
    /// Leave out deleted objects (tombstones).
    bool ignore_deletes = false;
    /// No initial values: only changes made after the watch starts (the
    /// initial-done marker comes first, right away).
    bool updates_only = false;
};

namespace detail {

// (`struct natsio_obj_status` names the status type: natsio_obj_status is
// also the name of the function that returns one.)
inline ObjectStoreStatus status_of(const struct natsio_obj_status* status) {
    ObjectStoreStatus out;
    out.bucket = view_of(natsio_obj_status_bucket(status));
    if (const char* text = natsio_obj_status_description(status)) {
        out.description = std::string(text);
    }
    out.ttl = std::chrono::nanoseconds(natsio_obj_status_ttl_ns(status));
    out.storage = view_of(natsio_obj_status_storage(status));
    out.replicas = natsio_obj_status_replicas(status);
    out.size = natsio_obj_status_size(status);
    out.sealed = natsio_obj_status_sealed(status);
    out.compression = natsio_obj_status_compression(status);
    out.metadata = MetadataParser::parse(natsio_obj_status_metadata_json(status));
    out.stream_info_json = view_of(natsio_obj_status_stream_info_json(status));
    return out;
}

inline ObjectStoreStatus take_status(struct natsio_obj_status* status) {
    return take_handle(status, natsio_obj_status_free, status_of);
}

inline std::vector<ObjectStoreStatus> take_status_list(natsio_obj_status_list* list) {
    return take_list(list, natsio_obj_status_list_count, natsio_obj_status_list_get,
                     natsio_obj_status_list_free, status_of);
}

inline std::vector<ObjectInfo> take_info_list(natsio_obj_info_list* list) {
    return take_list(list, natsio_obj_info_list_count, natsio_obj_info_list_get,
                     natsio_obj_info_list_free,
                     [](const natsio_obj_info* info) { return ObjectInfo(info); });
}

/// An info the library may have returned through `natsio_obj_info **`.
inline ObjectInfo take_info(natsio_obj_info* info) {
    return info != nullptr ? ObjectInfo(info) : ObjectInfo();
}

// The Object Store results as C++ values (see from_c in natsio.hpp).
inline ObjectInfo from_c(natsio_obj_info* info, const SinkPtr&) { return take_info(info); }
inline std::vector<ObjectInfo> from_c(natsio_obj_info_list* list, const SinkPtr&) {
    return take_info_list(list);
}
inline ObjectStoreStatus from_c(natsio_obj_status* status, const SinkPtr&) {
    return take_status(status);
}
inline std::vector<ObjectStoreStatus> from_c(natsio_obj_status_list* list, const SinkPtr&) {
    return take_status_list(list);
}

/// A reader's next piece (ObjectReader::next_async), copied out of the
/// token.
template <>
struct TokenReader<ObjectChunk> {
    static Status read(const natsio_token* token, const SinkPtr&,
                       std::optional<ObjectChunk>& out) {
        const void* data = nullptr;
        std::size_t len = 0;
        Status status = natsio_token_obj_chunk(token, &data, &len);
        if (status == NATSIO_OK) {
            const auto* bytes = static_cast<const std::byte*>(data);
            out.emplace(bytes, bytes + len);
        }
        return status;
    }
};

/// The items of an Object Store watch (ObjectWatcher).
template <>
struct FeedItem<natsio_obj_info> {
    // next() adopts the info it is given; a callback's borrowed one is
    // copied (the two ObjectInfo constructors).
    using Item = ObjectInfo;
    using View = ObjectInfo;
    // What a throwing callback is reported with: no subscription id; the
    // object's name.
    static std::uint64_t sid(const natsio_obj_info*) noexcept { return 0; }
    static const char* subject(const natsio_obj_info* info) noexcept {
        return natsio_obj_info_name(info);
    }
};

}  // namespace detail

// ---------------------------------------------------------------------------
// Watch
// ---------------------------------------------------------------------------

/// A running watch of a bucket (ObjectStore::watch): a Feed of ObjectInfo.
/// It delivers the latest info of each object (or every kept version with
/// include_history, or nothing with updates_only), then one marker whose
/// initial_done() is true (empty name, the bucket set), then every change
/// (puts, meta updates, deletes unless ignore_deletes) as it happens. From
/// the moment watch() returns, changes are buffered on the library's
/// threads whether or not anyone reads. The iteration ends after stop() and
/// fails with BucketNotFoundError when the bucket is deleted,
/// ConnectionClosedError when the client closes.
using ObjectWatcher = Feed<detail::ObjWatcherFeed>;

/// Receives each info of an ObjectWatcher in push mode (the marker
/// included).
using ObjectInfoHandler = ObjectWatcher::ItemHandler;

// ---------------------------------------------------------------------------
// Writer
// ---------------------------------------------------------------------------

}  // namespace natsio
// detail::ObjWriterVerbs, the generated verb layer of natsio_obj_writer.
#include <natsio/gen/obj_writer_verbs.hpp>
namespace natsio {

/// Puts one object from data fed in pieces (ObjectStore::writer; owns a
/// natsio_obj_writer). write() publishes each full chunk as it fills
/// (waiting only while 8 MiB of chunks await their acks); finish() writes
/// the meta, which makes the new version visible and replaces the previous
/// one. abort() purges what was written and leaves the previous version
/// readable; destroying an unfinished writer aborts it in the background.
/// After finish or abort every call throws IllegalStateError. A move-only
/// RAII owner, meant to be driven by one thread at a time.
class ObjectWriter : private detail::ObjWriterVerbs<ObjectWriter> {
public:
    /// No writer: its calls throw InvalidArgumentError.
    ObjectWriter() noexcept = default;
    /// Takes ownership of a writer from the C API.
    explicit ObjectWriter(natsio_obj_writer* writer, detail::SinkPtr sink = nullptr) noexcept
        : writer_(writer), sink_(std::move(sink)) {}
    /// Takes over the writer of `other`, which is left without one.
    ObjectWriter(ObjectWriter&& other) noexcept
        : writer_(std::exchange(other.writer_, nullptr)), sink_(std::move(other.sink_)) {}
    /// Frees this writer (aborting it if unfinished) and takes over the
    /// one of `other`.
    ObjectWriter& operator=(ObjectWriter&& other) noexcept {
        if (this != &other) {
            natsio_obj_writer_free(writer_);
            writer_ = std::exchange(other.writer_, nullptr);
            sink_ = std::move(other.sink_);
        }
        return *this;
    }
    /// Not copyable.
    ObjectWriter(const ObjectWriter&) = delete;
    /// Not copyable.
    ObjectWriter& operator=(const ObjectWriter&) = delete;
    /// Frees the writer; one neither finished nor aborted is aborted on
    /// the library's threads.
    ~ObjectWriter() { natsio_obj_writer_free(writer_); }

    /// Appends `data` (copied); blocks only while 8 MiB of chunks await
    /// their acks. Throws what failed the put so far, again on every later
    /// call (BucketNotFoundError, BucketSealedError, TimeoutError,
    /// ConnectionClosedError, ...).
    void write(ByteView data) { raw_write(data); }
    /// The future form of write: `data` is copied before it returns; the
    /// Future completes once the data is accepted. Writes are applied in
    /// call order.
    Future<void> write_async(ByteView data) { return raw_write_async(data); }

    /// Appends everything `in` gives until its end; returns the byte count.
    /// IoError (the writer is then aborted) when `in` fails other than at
    /// its end.
    std::uint64_t write_from(std::istream& in) {
        std::vector<char> buffer(64 * 1024);
        std::uint64_t total = 0;
        while (in) {
            in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
            std::streamsize got = in.gcount();
            if (got > 0) {
                write(ByteView(buffer.data(), static_cast<std::size_t>(got)));
                total += static_cast<std::uint64_t>(got);
            }
        }
        if (!in.eof() || in.bad()) {
            try {
                abort();
            } catch (const Error&) {
                // The input's failure is the one to report.
            }
            throw IoError(NATSIO_ERR_IO, "reading the input stream failed");
        }
        return total;
    }

    /// Publishes the meta: the object is stored; returns its info. Throws
    /// what failed the put.
    ObjectInfo finish() { return raw_finish(); }
    /// The future form of finish: the stored object's info.
    Future<ObjectInfo> finish_async() { return raw_finish_async(); }

    /// Abandons the put: its chunks are purged, the previous version (if
    /// any) stays readable.
    void abort() { raw_abort(); }

    /// True when this object holds a writer.
    explicit operator bool() const noexcept { return writer_ != nullptr; }
    /// The C writer (null for none), still owned by this object.
    natsio_obj_writer* c_writer() const noexcept { return writer_; }
    /// Gives up ownership of the handle (free it with
    /// natsio_obj_writer_free).
    natsio_obj_writer* release() noexcept { return std::exchange(writer_, nullptr); }

private:
    friend class detail::ObjWriterVerbs<ObjectWriter>;
    natsio_obj_writer* c_handle() const noexcept { return writer_; }
    const detail::SinkPtr& sink() const noexcept { return sink_; }

    natsio_obj_writer* writer_ = nullptr;
    detail::SinkPtr sink_;
};

namespace detail {
inline ObjectWriter from_c(natsio_obj_writer* writer, const SinkPtr& sink) noexcept {
    return ObjectWriter(writer, sink);
}
}  // namespace detail

// ---------------------------------------------------------------------------
// Reader
// ---------------------------------------------------------------------------

/// Reads one object (ObjectStore::get; owns a natsio_obj_reader). The
/// chunks are fetched ahead on the library's threads; the end is reported
/// only after every byte was read and the size, chunk count and SHA-256
/// digest were verified: a mismatch throws DigestMismatchError instead.
/// Each read waits up to its timeout for the next chunk (default: 30 s);
/// TimeoutError then (reading may go on). Also ConnectionClosedError,
/// BucketNotFoundError. Destroying it stops reading. A move-only RAII
/// owner, meant to be driven by one thread at a time.
class ObjectReader {
public:
    /// No reader: its calls throw InvalidArgumentError.
    ObjectReader() noexcept = default;
    /// Takes ownership of a reader from the C API.
    explicit ObjectReader(natsio_obj_reader* reader, detail::SinkPtr sink = nullptr) noexcept
        : reader_(reader), sink_(std::move(sink)) {}
    /// Takes over the reader of `other`, which is left without one.
    ObjectReader(ObjectReader&& other) noexcept
        : reader_(std::exchange(other.reader_, nullptr)), sink_(std::move(other.sink_)) {}
    /// Closes this reader and takes over the one of `other`.
    ObjectReader& operator=(ObjectReader&& other) noexcept {
        if (this != &other) {
            natsio_obj_reader_free(reader_);
            reader_ = std::exchange(other.reader_, nullptr);
            sink_ = std::move(other.sink_);
        }
        return *this;
    }
    /// Not copyable.
    ObjectReader(const ObjectReader&) = delete;
    /// Not copyable.
    ObjectReader& operator=(const ObjectReader&) = delete;
    /// Closes and frees the reader: what was not read is dropped.
    ~ObjectReader() { natsio_obj_reader_free(reader_); }

    /// The info of the object being read (for a link, its target's).
    ObjectInfo info() const { return ObjectInfo(natsio_obj_reader_info(reader_)); }

    /// Copies up to `size` bytes into `data`, waiting up to `timeout` for a
    /// chunk (default 30 s; no_wait: only what is buffered); returns how
    /// many, 0 once the whole object was read and verified (and on every
    /// later call). An empty buffer is InvalidArgumentError; other errors
    /// as described for the class.
    std::size_t read(void* data, std::size_t size, milliseconds timeout = default_timeout) {
        std::size_t n = 0;
        Status status = natsio_obj_reader_read(reader_, data, size, &n, detail::to_ms(timeout));
        if (status == NATSIO_DONE) {
            return 0;
        }
        detail::check(status);
        return n;
    }
    /// read() into a mutable buffer of bytes or chars: std::span<std::byte>,
    /// std::vector<std::byte>, std::array<char, N>, std::string, ...
    template <class Buffer,
              class = std::enable_if_t<detail::is_mutable_byte_buffer<Buffer>::value>>
    std::size_t read(Buffer&& buffer, milliseconds timeout = default_timeout) {
        return read(static_cast<void*>(std::data(buffer)), std::size(buffer), timeout);
    }

    /// The rest of the object in a std::string (or another container of
    /// char, unsigned char or std::byte); `timeout` bounds each chunk.
    template <class Container = std::string,
              class = std::enable_if_t<detail::is_byte_container<Container>::value>>
    Container read_all(milliseconds timeout = default_timeout) {
        Container out;
        std::size_t used = 0;
        std::size_t room = 64 * 1024;
        if (reader_ != nullptr) {
            std::uint64_t size = natsio_obj_info_size(natsio_obj_reader_info(reader_));
            // +1: the read that sees the end needs room too.
            if (size < (std::uint64_t{1} << 30)) {
                room = static_cast<std::size_t>(size) + 1;
            }
        }
        for (;;) {
            out.resize(used + room);
            std::size_t n = read(static_cast<void*>(std::data(out) + used), room, timeout);
            if (n == 0) {
                break;
            }
            used += n;
            room = std::max<std::size_t>(room - n, 64 * 1024);
        }
        out.resize(used);
        return out;
    }

    /// Writes the rest of the object to `out`; returns the byte count.
    /// IoError when `out` fails.
    std::uint64_t write_to(std::ostream& out, milliseconds timeout = default_timeout) {
        std::vector<char> buffer(128 * 1024);
        std::uint64_t total = 0;
        for (;;) {
            std::size_t n = read(static_cast<void*>(buffer.data()), buffer.size(), timeout);
            if (n == 0) {
                return total;
            }
            out.write(buffer.data(), static_cast<std::streamsize>(n));
            if (!out) {
                throw IoError(NATSIO_ERR_IO, "writing the output stream failed");
            }
            total += n;
        }
    }

    /// A Future of the next piece (std::nullopt once the whole object was
    /// read and verified; DigestMismatchError instead when it does not
    /// match). Pending ones are served in call order.
    Future<std::optional<ObjectChunk>> next_async() {
        return detail::start_async<std::optional<ObjectChunk>>(
            sink_, natsio_obj_reader_next_async, reader_);
    }

    /// True when this object holds a reader.
    explicit operator bool() const noexcept { return reader_ != nullptr; }
    /// The C reader (null for none), still owned by this object.
    natsio_obj_reader* c_reader() const noexcept { return reader_; }
    /// Gives up ownership of the handle (free it with
    /// natsio_obj_reader_free).
    natsio_obj_reader* release() noexcept { return std::exchange(reader_, nullptr); }

private:
    natsio_obj_reader* reader_ = nullptr;
    detail::SinkPtr sink_;
};

// ---------------------------------------------------------------------------
// ObjectStore
// ---------------------------------------------------------------------------

namespace detail {
inline ObjectReader from_c(natsio_obj_reader* reader, const SinkPtr& sink) noexcept {
    return ObjectReader(reader, sink);
}
inline ObjectWatcher from_c(natsio_obj_watcher* watcher, const SinkPtr& sink) noexcept {
    return ObjectWatcher(watcher, sink);
}
}  // namespace detail

}  // namespace natsio
// detail::ObjVerbs, the generated verb layer, needs the result types above.
#include <natsio/gen/obj_verbs.hpp>
namespace natsio {

/// A bound Object Store bucket (natsio_obj_free on destruction; the bucket
/// itself stays). Every request has a blocking form, which waits up to the
/// context's timeout (a put or get as long as its chunks keep moving), and
/// an `_async` form returning a Future. Object names are any non-empty
/// UTF-8 text (InvalidObjectNameError otherwise). A move-only RAII owner
/// from JetStream::object_store or create_object_store; it does not keep
/// the client open (ConnectionClosedError once it is closed);
/// thread-safe. The `_async` forms complete with the result and errors of
/// the blocking form (argument errors are thrown by the call itself).
class ObjectStore : public detail::ObjVerbs<ObjectStore> {
public:
    /// No bucket: its calls throw InvalidArgumentError.
    ObjectStore() noexcept = default;
    /// Takes ownership of a bucket handle from the C API; `sink` receives
    /// what watcher callbacks throw.
    explicit ObjectStore(natsio_obj* obj, detail::SinkPtr sink = nullptr) noexcept
        : obj_(obj), sink_(std::move(sink)) {}
    /// Takes over the bucket handle of `other`, which is left without one.
    ObjectStore(ObjectStore&& other) noexcept
        : obj_(std::exchange(other.obj_, nullptr)), sink_(std::move(other.sink_)) {}
    /// Frees this handle and takes over the one of `other`.
    ObjectStore& operator=(ObjectStore&& other) noexcept {
        if (this != &other) {
            natsio_obj_free(obj_);
            obj_ = std::exchange(other.obj_, nullptr);
            sink_ = std::move(other.sink_);
        }
        return *this;
    }
    /// Not copyable: bind the bucket again for a second handle.
    ObjectStore(const ObjectStore&) = delete;
    /// Not copyable.
    ObjectStore& operator=(const ObjectStore&) = delete;
    /// Frees the handle (natsio_obj_free); the bucket stays.
    ~ObjectStore() { natsio_obj_free(obj_); }

    /// The bucket's name ("" without a handle).
    std::string_view bucket() const noexcept { return detail::view_of(natsio_obj_bucket(obj_)); }

    // Put ----------------------------------------------------------------------

    /// Stores `data` (a buffer, string, std::span<const std::byte>, ...) as
    /// object `name`, replacing any previous version; returns its info.
    /// InvalidObjectNameError, ConfigError (bad meta), BucketSealedError,
    /// BucketNotFoundError.
    ObjectInfo put(std::string_view name, ByteView data, const ObjectMeta& meta = {}) const {
        return raw_put(name, meta.to_json(), data);
    }
    /// The future form of put: `data` is copied before it returns.
    Future<ObjectInfo> put_async(std::string_view name, ByteView data,
                                 const ObjectMeta& meta = {}) const {
        return raw_put_async(name, meta.to_json(), data);
    }

    /// Stores everything `in` gives until its end as object `name`, chunk
    /// by chunk (the whole object is never in memory). Errors as put, and
    /// IoError when `in` fails; on any error the previous version stays.
    ObjectInfo put(std::string_view name, std::istream& in, const ObjectMeta& meta = {}) const {
        ObjectWriter w = writer(name, meta);
        w.write_from(in);
        return w.finish();
    }

    /// A writer for object `name` (no I/O until data is written): see
    /// ObjectWriter. InvalidObjectNameError, ConfigError.
    ObjectWriter writer(std::string_view name, const ObjectMeta& meta = {}) const {
        return raw_writer_open(name, meta.to_json());
    }

    // Get ----------------------------------------------------------------------

    /// Starts reading object `name` (through a link: its target): see
    /// ObjectReader. ObjectNotFoundError, ObjectDeletedError (an
    /// ObjectNotFoundError; with `show_deleted` a deleted object reads as
    /// empty), ObjectLinkError (a bucket link).
    ObjectReader get(std::string_view name, bool show_deleted = false) const {
        detail::CString c_name(name, "object name");
        natsio_obj_reader* reader = nullptr;
        detail::check(natsio_obj_get(obj_, c_name.get(), show_deleted, &reader));
        return ObjectReader(reader, sink_);
    }
    /// The future form of get: the ObjectReader (taken once).
    Future<ObjectReader> get_async(std::string_view name, bool show_deleted = false) const {
        return raw_get_async(name, show_deleted);
    }

    /// The whole object `name` in memory, verified. Errors as get and
    /// ObjectReader::read.
    std::vector<std::byte> get_bytes(std::string_view name,
                                     milliseconds chunk_timeout = default_timeout) const {
        return get(name).read_all<std::vector<std::byte>>(chunk_timeout);
    }

    // Objects ------------------------------------------------------------------

    /// The info of object `name` (a link's own info, not its target's).
    /// ObjectNotFoundError, ObjectDeletedError (unless `show_deleted`).
    ObjectInfo info(std::string_view name, bool show_deleted = false) const {
        return raw_get_info(name, show_deleted);
    }
    /// The future form of info.
    Future<ObjectInfo> info_async(std::string_view name, bool show_deleted = false) const {
        return raw_get_info_async(name, show_deleted);
    }

    /// Replaces the description, headers and metadata of object `name`
    /// with `meta`'s, and renames it when `meta.name` is set.
    /// ObjectNotFoundError, ObjectDeletedError, ObjectExistsError (a live
    /// object has the new name), ConfigError (chunk_size set).
    void update_meta(std::string_view name, const ObjectMeta& meta) const {
        raw_update_meta(name, meta.to_json());
    }
    /// The future form of update_meta.
    Future<void> update_meta_async(std::string_view name, const ObjectMeta& meta) const {
        return raw_update_meta_async(name, meta.to_json());
    }

    /// Deletes object `name`: a tombstone replaces its meta and its chunks
    /// are purged. ObjectNotFoundError.
    void del(std::string_view name) const { raw_delete(name); }
    /// The future form of del.
    Future<void> del_async(std::string_view name) const { return raw_delete_async(name); }

    /// The infos of the bucket's objects (tombstones too with
    /// `include_deleted`); empty when there are none.
    std::vector<ObjectInfo> list(bool include_deleted = false) const {
        return raw_list(include_deleted);
    }
    /// The future form of list.
    Future<std::vector<ObjectInfo>> list_async(bool include_deleted = false) const {
        return raw_list_async(include_deleted);
    }

    /// Watches the bucket's objects: see ObjectWatcher.
    ObjectWatcher watch(const ObjectWatchOptions& options = {}) const {
        natsio_obj_watch_options c_options = to_c(options);
        natsio_obj_watcher* watcher = nullptr;
        detail::check(natsio_obj_watch(obj_, &c_options, &watcher));
        return ObjectWatcher(watcher, sink_);
    }
    /// The future form of watch: the ObjectWatcher (taken once).
    Future<ObjectWatcher> watch_async(const ObjectWatchOptions& options = {}) const {
        natsio_obj_watch_options c_options = to_c(options);
        return raw_watch_async(&c_options);
    }

    // Links --------------------------------------------------------------------

    /// Stores `name` as a link to the object `target` describes (an info
    /// the library returned, from this bucket or another); returns the
    /// link's info. Reading `name` reads the target. ObjectLinkError (the
    /// target is deleted or itself a link), ObjectExistsError (a live
    /// object that is not a link has `name`).
    ObjectInfo add_link(std::string_view name, const ObjectInfo& target) const {
        return raw_add_link(name, target.c_info());
    }
    /// The future form of add_link: the link's info.
    Future<ObjectInfo> add_link_async(std::string_view name, const ObjectInfo& target) const {
        return raw_add_link_async(name, target.c_info());
    }

    /// Stores `name` as a link to the whole bucket `bucket`; returns the
    /// link's info. ObjectExistsError, InvalidBucketNameError.
    ObjectInfo add_bucket_link(std::string_view name, std::string_view bucket) const {
        return raw_add_bucket_link(name, bucket);
    }
    /// The future form of add_bucket_link: the link's info.
    Future<ObjectInfo> add_bucket_link_async(std::string_view name,
                                             std::string_view bucket) const {
        return raw_add_bucket_link_async(name, bucket);
    }

    // Bucket -------------------------------------------------------------------

    /// Seals the bucket: it can still be read, every change throws
    /// BucketSealedError.
    void seal() const { raw_seal(); }
    /// The future form of seal.
    Future<void> seal_async() const { return raw_seal_async(); }

    /// The bucket's status. BucketNotFoundError.
    ObjectStoreStatus status() const { return raw_get_status(); }
    /// The future form of status.
    Future<ObjectStoreStatus> status_async() const { return raw_get_status_async(); }

    /// True when this object holds a bucket handle.
    explicit operator bool() const noexcept { return obj_ != nullptr; }
    /// The C bucket handle (null for none), still owned by this object.
    natsio_obj* c_obj() const noexcept { return obj_; }
    /// Gives up ownership of the handle (free it with natsio_obj_free).
    natsio_obj* release() noexcept { return std::exchange(obj_, nullptr); }

private:
    friend class detail::ObjVerbs<ObjectStore>;
    natsio_obj* c_handle() const noexcept { return obj_; }
    const detail::SinkPtr& sink() const noexcept { return sink_; }

    static natsio_obj_watch_options to_c(const ObjectWatchOptions& options) {
        natsio_obj_watch_options c_options{};
        detail::check(natsio_obj_watch_options_init(&c_options));
        c_options.include_history = options.include_history;
        c_options.ignore_deletes = options.ignore_deletes;
        c_options.updates_only = options.updates_only;
        return c_options;
    }

    natsio_obj* obj_ = nullptr;
    detail::SinkPtr sink_;
};

namespace detail {
inline ObjectStore from_c(natsio_obj* obj, const SinkPtr& sink) noexcept {
    return ObjectStore(obj, sink);
}
}  // namespace detail

// ---------------------------------------------------------------------------
// JetStream: Object Store buckets (declared in jetstream.hpp)
// ---------------------------------------------------------------------------

inline ObjectStore JetStream::create_object_store(std::string_view config_json,
                                                  CreateAction action) const {
    return raw_obj_create(config_json, action_of(action));
}

inline Future<ObjectStore> JetStream::create_object_store_async(std::string_view config_json,
                                                                CreateAction action) const {
    return raw_obj_create_async(config_json, action_of(action));
}

inline ObjectStore JetStream::object_store(std::string_view bucket) const {
    return raw_obj_bind(bucket);
}

inline Future<ObjectStore> JetStream::object_store_async(std::string_view bucket) const {
    return raw_obj_bind_async(bucket);
}

inline void JetStream::delete_object_store(std::string_view bucket) const {
    raw_obj_delete(bucket);
}

inline Future<void> JetStream::delete_object_store_async(std::string_view bucket) const {
    return raw_obj_delete_async(bucket);
}

inline std::vector<std::string> JetStream::object_store_names() const {
    return raw_obj_names();
}

inline Future<std::vector<std::string>> JetStream::object_store_names_async() const {
    return raw_obj_names_async();
}

inline std::vector<ObjectStoreStatus> JetStream::object_store_statuses() const {
    return raw_obj_statuses();
}

inline Future<std::vector<ObjectStoreStatus>> JetStream::object_store_statuses_async() const {
    return raw_obj_statuses_async();
}

}  // namespace natsio

// detail::TokenReader of the results above (generated).
#include <natsio/gen/object_results.hpp>

#endif  // NATSIO_CPP_OBJECT_HPP
