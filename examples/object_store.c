/*
 * object_store: a file into an Object Store bucket and back.
 *
 *   object_store [URL [FILE]]
 *
 * Default URL: nats://127.0.0.1:4222 (the server needs JetStream: -js).
 * Without FILE, a file of 300 KiB is generated in the temp directory.
 * Creates the bucket FILES, streams FILE into it with a writer (in 64 KiB
 * pieces: the whole file is never in memory), lists the bucket, reads the
 * object back into a second file with a reader, checks that both files
 * hold the same bytes and prints a summary. The bucket is deleted at the
 * end. Exit code 0 when the copy is exact, 1 otherwise.
 */
#define _POSIX_C_SOURCE 200809L

#include <natsio.h>

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PIECE (64 * 1024)

static int failed(natsio_status st, const char *what) {
    if (st == NATSIO_OK) return 0;
    fprintf(stderr, "%s failed: %s (%d): %s\n", what, natsio_status_str(st), (int)st,
            natsio_last_error());
    return 1;
}

static const char *temp_dir(void) {
    const char *dir = getenv("TMPDIR");
    return dir && dir[0] ? dir : "/tmp";
}

/* A new empty file in the temp directory: its path goes to `path`. */
static FILE *temp_file(char *path, size_t cap, const char *stem) {
    snprintf(path, cap, "%s/%s-XXXXXX", temp_dir(), stem);
    int fd = mkstemp(path);
    if (fd < 0) {
        perror("mkstemp");
        return NULL;
    }
    FILE *f = fdopen(fd, "w+b");
    if (!f) {
        perror("fdopen");
        close(fd);
        unlink(path);
    }
    return f;
}

/* Writes 300 KiB of varied bytes (a little more than two chunks of the
 * default 128 KiB) into a new temp file. */
static bool generate_file(char *path, size_t cap) {
    FILE *f = temp_file(path, cap, "object-store-in");
    if (!f) return false;
    uint32_t x = 2463534242u;
    for (size_t i = 0; i < 300 * 1024; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        fputc((int)(x & 0xff), f);
    }
    bool ok = fclose(f) == 0;
    if (!ok) perror("writing the generated file");
    return ok;
}

/* Streams the file at `path` into object `name`; the info goes to *info_out. */
static int put_file(const natsio_obj *obj, const char *path, const char *name,
                    natsio_obj_info **info_out) {
    FILE *in = fopen(path, "rb");
    if (!in) {
        perror(path);
        return 1;
    }
    /* The writer publishes each full chunk as it goes; the meta (name,
     * description, size, digest) is published by the finish. */
    natsio_obj_writer *w = NULL;
    if (failed(natsio_obj_writer_open(obj, name,
                                      "{\"description\":\"put by the object_store example\"}",
                                      &w),
               "writer_open")) {
        fclose(in);
        return 1;
    }
    static unsigned char buf[PIECE];
    size_t n;
    natsio_status st = NATSIO_OK;
    while (st == NATSIO_OK && (n = fread(buf, 1, sizeof buf, in)) > 0)
        st = natsio_obj_writer_write(w, buf, n);
    bool read_error = ferror(in) != 0;
    fclose(in);
    if (st == NATSIO_OK && read_error) {
        fprintf(stderr, "reading %s failed\n", path);
        natsio_obj_writer_abort(w); /* nothing of it is kept */
        natsio_obj_writer_free(w);
        return 1;
    }
    if (st == NATSIO_OK) st = natsio_obj_writer_finish(w, info_out);
    natsio_obj_writer_free(w);
    return failed(st, "put");
}

/* Reads object `name` into the file at `path`. */
static int get_file(const natsio_obj *obj, const char *name, FILE *out, uint64_t *bytes) {
    natsio_obj_reader *r = NULL;
    if (failed(natsio_obj_get(obj, name, false, &r), "get")) return 1;
    static unsigned char buf[PIECE];
    natsio_status st;
    *bytes = 0;
    for (;;) {
        size_t n = 0;
        st = natsio_obj_reader_read(r, buf, sizeof buf, &n, NATSIO_TIMEOUT_DEFAULT);
        if (st != NATSIO_OK) break;
        if (fwrite(buf, 1, n, out) != n) {
            perror("writing the copy");
            natsio_obj_reader_free(r);
            return 1;
        }
        *bytes += n;
    }
    natsio_obj_reader_free(r);
    /* NATSIO_DONE: every byte came, and size and SHA-256 digest matched. */
    if (st != NATSIO_DONE) return failed(st, "read");
    if (fflush(out) != 0) {
        perror("writing the copy");
        return 1;
    }
    return 0;
}

/* True when the two files hold the same bytes. */
static bool same_files(const char *a_path, const char *b_path) {
    FILE *a = fopen(a_path, "rb");
    FILE *b = fopen(b_path, "rb");
    bool same = a && b;
    while (same) {
        int ca = fgetc(a), cb = fgetc(b);
        if (ca != cb) same = false;
        if (ca == EOF || cb == EOF) break;
    }
    if (a) fclose(a);
    if (b) fclose(b);
    return same;
}

static int list_bucket(const natsio_obj *obj) {
    natsio_obj_info_list *list = NULL;
    if (failed(natsio_obj_list(obj, false, &list), "list")) return 1;
    size_t count = natsio_obj_info_list_count(list);
    printf("bucket FILES holds %zu object(s):\n", count);
    for (size_t i = 0; i < count; i++) {
        const natsio_obj_info *info = natsio_obj_info_list_get(list, i);
        printf("  %s  %" PRIu64 " bytes in %" PRIu64 " chunk(s)\n", natsio_obj_info_name(info),
               natsio_obj_info_size(info), natsio_obj_info_chunks(info));
    }
    natsio_obj_info_list_free(list);
    return 0;
}

static int run(natsio_js *js, const char *in_path) {
    natsio_js_obj_delete(js, "FILES"); /* from an earlier run, if any */
    natsio_obj *obj = NULL;
    if (failed(natsio_js_obj_create(js,
                   "{\"bucket\":\"FILES\",\"description\":\"object_store example\","
                   "\"storage\":\"file\"}",
                   NATSIO_CREATE, &obj),
               "create bucket"))
        return 1;

    /* The object is named after the file (its last path component). */
    const char *name = strrchr(in_path, '/') ? strrchr(in_path, '/') + 1 : in_path;
    natsio_obj_info *info = NULL;
    int rc = put_file(obj, in_path, name, &info);
    if (rc == 0) {
        printf("put %s: %" PRIu64 " bytes in %" PRIu64 " chunk(s), %s\n", natsio_obj_info_name(info),
               natsio_obj_info_size(info), natsio_obj_info_chunks(info), natsio_obj_info_digest(info));
        rc = list_bucket(obj);
    }

    char out_path[512] = "";
    uint64_t copied = 0;
    if (rc == 0) {
        FILE *out = temp_file(out_path, sizeof out_path, "object-store-out");
        if (!out) {
            rc = 1;
        } else {
            rc = get_file(obj, name, out, &copied);
            fclose(out);
        }
    }
    if (rc == 0) {
        printf("got %s back into %s: %" PRIu64 " bytes\n", name, out_path, copied);
        if (!same_files(in_path, out_path)) {
            fprintf(stderr, "the copy differs from %s\n", in_path);
            rc = 1;
        } else {
            printf("object_store finished: %" PRIu64 " bytes stored and read back, files are equal\n",
                   copied);
        }
    }
    if (out_path[0]) unlink(out_path);
    natsio_obj_info_free(info);
    natsio_obj_free(obj);
    if (failed(natsio_js_obj_delete(js, "FILES"), "delete bucket")) rc = 1;
    return rc;
}

int main(int argc, char **argv) {
    const char *url = argc > 1 ? argv[1] : "nats://127.0.0.1:4222";
    char generated[512] = "";
    const char *in_path = argc > 2 ? argv[2] : NULL;
    if (!in_path) {
        if (!generate_file(generated, sizeof generated)) return 1;
        in_path = generated;
    }

    natsio_client *c = NULL;
    natsio_js *js = NULL;
    int rc = 1;
    if (!failed(natsio_client_connect_url(url, &c), "connect") &&
        !failed(natsio_client_jetstream(c, NULL, &js), "jetstream"))
        rc = run(js, in_path);

    natsio_js_free(js);
    natsio_client_free(c);
    if (generated[0]) unlink(generated);
    return rc;
}
