/*
 * Runs the example programs as a user would, against a nats-server started
 * by the test harness on a free loopback port, and checks their exit codes
 * and output. The example binaries' paths are compile definitions set by
 * examples/CMakeLists.txt.
 *
 *   run_examples [CASE...]      (see --list)
 */
#define _POSIX_C_SOURCE 200809L

#include "harness.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* A running example whose stdout and stderr are read through a pipe. */
typedef struct {
    pid_t pid;
    int out_fd;
    bool reaped;
    int exit_code; /* valid once reaped; -1 if killed by a signal */
    char output[16384];
    size_t output_len;
} child;

/* Case cleanup: a child still running when the case ends is killed. */
static void child_cleanup(void *arg) {
    child *ch = arg;
    if (!ch->reaped && ch->pid > 0) {
        kill(ch->pid, SIGKILL);
        waitpid(ch->pid, NULL, 0);
        ch->reaped = true;
    }
    if (ch->out_fd >= 0) close(ch->out_fd);
    free(ch);
}

static child *spawn_example(char *const argv[]) {
    int fds[2];
    if (pipe(fds) != 0) {
        nt_fail_at(__FILE__, __LINE__, "pipe: %s", strerror(errno));
        return NULL;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    posix_spawn_file_actions_addclose(&actions, fds[1]);
    pid_t pid = -1;
    int err = posix_spawn(&pid, argv[0], &actions, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    if (err != 0) {
        close(fds[0]);
        nt_fail_at(__FILE__, __LINE__, "spawn %s: %s", argv[0], strerror(err));
        return NULL;
    }
    child *ch = calloc(1, sizeof *ch);
    if (!ch) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        close(fds[0]);
        nt_fail_at(__FILE__, __LINE__, "out of memory");
        return NULL;
    }
    ch->pid = pid;
    ch->out_fd = fds[0];
    nt_cleanup(child_cleanup, ch);
    return ch;
}

/* Reads output until `needle` appears (true), EOF, or the timeout (false). */
static bool read_until(child *ch, const char *needle, int64_t timeout_ms) {
    int64_t deadline = nt_now_ms() + timeout_ms;
    for (;;) {
        ch->output[ch->output_len] = '\0';
        if (needle && strstr(ch->output, needle)) return true;
        if (ch->out_fd < 0) return needle == NULL; /* EOF already seen */
        int64_t left = deadline - nt_now_ms();
        if (left <= 0) return false;
        struct pollfd p = {ch->out_fd, POLLIN, 0};
        int r = poll(&p, 1, (int)left);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        size_t room = sizeof ch->output - 1 - ch->output_len;
        if (room == 0) return false;
        ssize_t n = read(ch->out_fd, ch->output + ch->output_len, room);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            close(ch->out_fd);
            ch->out_fd = -1;
            continue; /* EOF: the loop's top decides */
        }
        ch->output_len += (size_t)n;
    }
}

/* Reads all remaining output and waits for the exit (up to timeout_ms). */
static bool finish(child *ch, int64_t timeout_ms) {
    if (!read_until(ch, NULL, timeout_ms)) return false;
    int status = 0;
    if (waitpid(ch->pid, &status, 0) != ch->pid) return false;
    ch->reaped = true;
    ch->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return true;
}

static child *run_to_end(char *const argv[]) {
    child *ch = spawn_example(argv);
    if (!ch) return NULL;
    if (!finish(ch, 20000)) {
        nt_fail_at(__FILE__, __LINE__, "%s did not finish; output so far:\n%s", argv[0],
                   ch->output);
        return NULL;
    }
    return ch;
}

static nt_server *start_server(void) {
    nt_server *s = nt_server_start(NULL);
    if (s) nt_cleanup(nt_server_stop_cb, s);
    return s;
}

#define CHECK_EXIT(ch, code)                                                                  \
    NT_CHECK_MSG((ch)->exit_code == (code), "exit code %d, want %d; output:\n%s",             \
                 (ch)->exit_code, (code), (ch)->output)

#define CHECK_OUTPUT_HAS(ch, text)                                                            \
    NT_CHECK_MSG(strstr((ch)->output, (text)) != NULL, "output lacks \"%s\":\n%s", (text),    \
                 (ch)->output)

static void demo_runs_against_a_live_server(void) {
    nt_server *s = start_server();
    NT_CHECK(s != NULL);
    char *argv[] = {EXAMPLE_DEMO, (char *)nt_server_url(s), NULL};
    child *demo = run_to_end(argv);
    NT_CHECK(demo != NULL);
    printf("%s", demo->output);
    CHECK_EXIT(demo, 0);
    CHECK_OUTPUT_HAS(demo, "demo finished: every step worked");
}

static void demo_reports_a_missing_server(void) {
    char url[64];
    snprintf(url, sizeof url, "nats://127.0.0.1:%d", nt_free_port());
    char *argv[] = {EXAMPLE_DEMO, url, NULL};
    child *demo = run_to_end(argv);
    NT_CHECK(demo != NULL);
    CHECK_EXIT(demo, 1);
    CHECK_OUTPUT_HAS(demo, "connect failed:");
}

static void request_and_reply_examples(void) {
    nt_server *s = start_server();
    NT_CHECK(s != NULL);
    char *url = (char *)nt_server_url(s);

    /* Nobody answers yet: the request fails at once with its own exit code. */
    char *request_argv[] = {EXAMPLE_REQUEST, url, "service.echo", "ping", "2000", NULL};
    child *early = run_to_end(request_argv);
    NT_CHECK(early != NULL);
    CHECK_EXIT(early, 3);
    CHECK_OUTPUT_HAS(early, "nobody is listening");

    char *reply_argv[] = {EXAMPLE_REPLY, url, "service.echo", "1", NULL};
    child *responder = spawn_example(reply_argv);
    NT_CHECK(responder != NULL);
    NT_CHECK_MSG(read_until(responder, "serving [service.echo]", 10000),
                 "reply did not start:\n%s", responder->output);

    child *req = run_to_end(request_argv);
    NT_CHECK(req != NULL);
    CHECK_EXIT(req, 0);
    CHECK_OUTPUT_HAS(req, "echo: ping");

    NT_CHECK(finish(responder, 10000));
    CHECK_EXIT(responder, 0);
    CHECK_OUTPUT_HAS(responder, "served 1 request(s)");
}

static void service_example(void) {
    nt_server *s = start_server();
    NT_CHECK(s != NULL);
    char *url = (char *)nt_server_url(s);
    char *service_argv[] = {EXAMPLE_SERVICE, url, "3", NULL};
    child *service = spawn_example(service_argv);
    NT_CHECK(service != NULL);
    NT_CHECK_MSG(read_until(service, "serving [echo.v1.echo] and [echo.v1.upper]", 10000),
                 "service did not start:\n%s", service->output);

    char *echo_argv[] = {EXAMPLE_REQUEST, url, "echo.v1.echo", "hello", "5000", NULL};
    for (int i = 0; i < 2; i++) {
        child *req = run_to_end(echo_argv);
        NT_CHECK(req != NULL);
        CHECK_EXIT(req, 0);
        CHECK_OUTPUT_HAS(req, "hello");
    }
    char *upper_argv[] = {EXAMPLE_REQUEST, url, "echo.v1.upper", "quiet", "5000", NULL};
    child *shout = run_to_end(upper_argv);
    NT_CHECK(shout != NULL);
    CHECK_EXIT(shout, 0);
    CHECK_OUTPUT_HAS(shout, "QUIET");

    NT_CHECK(finish(service, 10000));
    CHECK_EXIT(service, 0);
    CHECK_OUTPUT_HAS(service, "served 3 request(s)");
    CHECK_OUTPUT_HAS(service, "\"name\":\"echo\",\"subject\":\"echo.v1.echo\",\"queue_group\":\"q\","
                              "\"num_requests\":2,\"num_errors\":0");
    CHECK_OUTPUT_HAS(service, "\"name\":\"upper\",\"subject\":\"echo.v1.upper\",\"queue_group\":\"q\","
                              "\"num_requests\":1,\"num_errors\":0");
}

static void publish_and_subscribe_examples(void) {
    nt_server *s = start_server();
    NT_CHECK(s != NULL);
    char *url = (char *)nt_server_url(s);

    char *subscribe_argv[] = {EXAMPLE_SUBSCRIBE, url, "greet.>", "2", "10000", NULL};
    child *subscriber = spawn_example(subscribe_argv);
    NT_CHECK(subscriber != NULL);
    NT_CHECK_MSG(read_until(subscriber, "listening on [greet.>]", 10000),
                 "subscribe did not start:\n%s", subscriber->output);

    char *publish_argv[] = {EXAMPLE_PUBLISH, url, "greet.joe", "hi there", "2", NULL};
    child *publisher = run_to_end(publish_argv);
    NT_CHECK(publisher != NULL);
    CHECK_EXIT(publisher, 0);
    CHECK_OUTPUT_HAS(publisher, "flushed 2 message(s)");

    NT_CHECK(finish(subscriber, 10000));
    CHECK_EXIT(subscriber, 0);
    CHECK_OUTPUT_HAS(subscriber, "received [greet.joe] hi there");
    CHECK_OUTPUT_HAS(subscriber, "received 2 message(s)");
}

/* NATSIO_LOG turns logging on in a program that never asked for it. */
static void natsio_log_environment_traces_a_program(void) {
    nt_server *s = start_server();
    NT_CHECK(s != NULL);
    char *url = (char *)nt_server_url(s);
    char *publish_argv[] = {EXAMPLE_PUBLISH, url, "greet.log", "traced", "1", NULL};
    setenv("NATSIO_LOG", "trace", 1);
    child *publisher = run_to_end(publish_argv);
    unsetenv("NATSIO_LOG");
    NT_CHECK(publisher != NULL);
    CHECK_EXIT(publisher, 0);
    CHECK_OUTPUT_HAS(publisher, "natsio INFO: connected to nats://");
    CHECK_OUTPUT_HAS(publisher, "natsio TRACE: >>> CONNECT {");
    CHECK_OUTPUT_HAS(publisher, "natsio TRACE: >>> PUB greet.log 6 \"traced\"");
    CHECK_OUTPUT_HAS(publisher, "natsio TRACE: <<< PONG");
    CHECK_OUTPUT_HAS(publisher, "natsio INFO: closed");
    /* Without it, the same program prints no log line. */
    child *quiet = run_to_end(publish_argv);
    NT_CHECK(quiet != NULL);
    CHECK_EXIT(quiet, 0);
    NT_CHECK_MSG(strstr(quiet->output, "natsio INFO:") == NULL && strstr(quiet->output, "natsio TRACE:") == NULL,
                 "logged without NATSIO_LOG:\n%s", quiet->output);
}

static void jetstream_example(void) {
    nt_server *s = start_server();
    NT_CHECK(s != NULL);
    char *argv[] = {EXAMPLE_JETSTREAM, (char *)nt_server_url(s), NULL};
    /* Twice: a second run finds (and replaces) nothing left over. */
    for (int run = 0; run < 2; run++) {
        child *tour = run_to_end(argv);
        NT_CHECK(tour != NULL);
        CHECK_EXIT(tour, 0);
        CHECK_OUTPUT_HAS(tour, "stored in ORDERS at seq 1\n");
        CHECK_OUTPUT_HAS(tour, "stored in ORDERS at seq 1 (duplicate)");
        CHECK_OUTPUT_HAS(tour, "async cake acked at seq 4");
        CHECK_OUTPUT_HAS(tour, "redelivered: soup");
        CHECK_OUTPUT_HAS(tour, "stale update: wrong last sequence");
        CHECK_OUTPUT_HAS(tour, "alice.color = green");
        CHECK_OUTPUT_HAS(tour, "bob.color after delete: key deleted (delete marker at revision 4)");
        CHECK_OUTPUT_HAS(tour, "keys: alice.color\n");
        CHECK_OUTPUT_HAS(tour, "  history: blue at revision");
        CHECK_OUTPUT_HAS(tour, "watch: alice.color = green\nwatch: initial values done\n");
        CHECK_OUTPUT_HAS(tour, "watch: changed alice.city = Oslo");
        CHECK_OUTPUT_HAS(tour, "jetstream tour finished");
    }
}

/* Writes `n` bytes of a pattern into a new file in `dir`; its path goes
 * to `path`. */
static bool write_input_file(const char *dir, char *path, size_t cap, size_t n) {
    snprintf(path, cap, "%s/input.bin", dir);
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    for (size_t i = 0; i < n; i++) fputc((int)((i * 7 + i / 251) & 0xff), f);
    return fclose(f) == 0;
}

static void object_store_example(void) {
    nt_server *s = start_server();
    NT_CHECK(s != NULL);
    char *url = (char *)nt_server_url(s);

    /* A generated file (about 300 KiB: three chunks). */
    char *generated_argv[] = {EXAMPLE_OBJECT_STORE, url, NULL};
    child *gen = run_to_end(generated_argv);
    NT_CHECK(gen != NULL);
    CHECK_EXIT(gen, 0);
    CHECK_OUTPUT_HAS(gen, "bytes in 3 chunk(s), SHA-256=");
    CHECK_OUTPUT_HAS(gen, "bucket FILES holds 1 object(s):\n  object-store-in-");
    CHECK_OUTPUT_HAS(gen, "object_store finished: 307200 bytes stored and read back, files are equal");

    /* A file given on the command line (in the server's temp dir, which
     * the harness removes), put under its base name. */
    char path[1024];
    NT_CHECK(write_input_file(nt_server_dir(s), path, sizeof path, 200000));
    char *given_argv[] = {EXAMPLE_OBJECT_STORE, url, path, NULL};
    child *given = run_to_end(given_argv);
    NT_CHECK(given != NULL);
    CHECK_EXIT(given, 0);
    CHECK_OUTPUT_HAS(given, "put input.bin: 200000 bytes in 2 chunk(s), SHA-256=");
    CHECK_OUTPUT_HAS(given, "  input.bin  200000 bytes in 2 chunk(s)\n");
    CHECK_OUTPUT_HAS(given, "object_store finished: 200000 bytes stored and read back, files are equal");

    /* A file that is not there: a clear failure, exit code 1. */
    char missing[1100];
    snprintf(missing, sizeof missing, "%s/no-such-file", nt_server_dir(s));
    char *missing_argv[] = {EXAMPLE_OBJECT_STORE, url, missing, NULL};
    child *bad = run_to_end(missing_argv);
    NT_CHECK(bad != NULL);
    CHECK_EXIT(bad, 1);
    CHECK_OUTPUT_HAS(bad, "no-such-file");
}

int main(int argc, char **argv) {
    static const nt_case cases[] = {
        NT_CASE(jetstream_example),
        NT_CASE(natsio_log_environment_traces_a_program),
        NT_CASE(object_store_example),
        NT_CASE(demo_runs_against_a_live_server),
        NT_CASE(demo_reports_a_missing_server),
        NT_CASE(request_and_reply_examples),
        NT_CASE(service_example),
        NT_CASE(publish_and_subscribe_examples),
    };
    return nt_main(argc, argv, cases, NT_COUNT(cases));
}
