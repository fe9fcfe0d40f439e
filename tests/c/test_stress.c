/*
 * Stress and resource checks through the C ABI, against a real nats-server:
 *
 * - 8 threads publishing and requesting through one client, counts exact;
 * - 1,000 subscriptions created and freed (callback and iterator mode) with
 *   no growth in memory or threads;
 * - a slow consumer under a 100k-message firehose with each pending-limit
 *   policy, counters exact;
 * - 1M small messages through pub/sub with RSS bounded (peak printed);
 * - idle clients use no CPU;
 * - connections cut by a loopback TCP proxy the test controls (mid-frame
 *   resets, refused reconnects, stalls): the client reconnects, restores its
 *   subscriptions, and nothing it accepted is lost (that the reconnect
 *   buffer holds exactly its wire bytes is tests/integration/reconnect.rs's).
 *
 * Figures (RSS, CPU, counts) are printed as "# ..." lines. Memory and CPU
 * bounds are generous resource checks (a leak or a busy loop is orders of
 * magnitude past them), not timings of the library.
 */
#define _GNU_SOURCE

#include "harness.h"
#include "util.h"

#include <natsio.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

/* The most any awaited event (a flush, a message, a reconnect) may take
 * before the test fails: generous, so that a loaded machine cannot reach
 * it; an event that is not coming still fails the test. */
enum { EVENT_MS = 30000 };

/* Under AddressSanitizer freed memory sits in its quarantine (up to 256 MiB)
 * instead of returning to the allocator, so RSS measures ASan, not us: the
 * RSS bounds are checked in normal and valgrind runs, leaks under ASan by
 * LeakSanitizer. */
#if defined(__SANITIZE_ADDRESS__)
static const bool g_rss_meaningful = false;
#else
static const bool g_rss_meaningful = true;
#endif

/* ---- helpers ------------------------------------------------------------ */

/* Resident set size of this process, in bytes. */
static long long rss_bytes(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    if (f == NULL) return -1;
    long long size = 0, resident = 0;
    int n = fscanf(f, "%lld %lld", &size, &resident);
    fclose(f);
    return n == 2 ? resident * sysconf(_SC_PAGESIZE) : -1;
}

static int thread_count(void) {
    DIR *d = opendir("/proc/self/task");
    if (d == NULL) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return n;
}

static int64_t cpu_time_us(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (int64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 + ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
}

/* Samples RSS every few milliseconds on its own thread, keeping the peak. */
typedef struct {
    pthread_t thread;
    atomic_int stop;
    atomic_llong peak;
} rss_sampler;

static void *sample_rss(void *arg) {
    rss_sampler *s = (rss_sampler *)arg;
    while (!atomic_load(&s->stop)) {
        long long now = rss_bytes();
        if (now > atomic_load(&s->peak)) atomic_store(&s->peak, now);
        nt_sleep_ms(5);
    }
    return NULL;
}

/* ---- 8 threads publishing and requesting through one client -------------- */

enum { WORKERS = 8, MAX_PUBLISHES_PER_WORKER = 40000, REQUEST_EVERY = 16 };

static struct {
    natsio_client *client;
    char pub_subject[128];
    char echo_subject[128];
    int64_t deadline_ms;
    /* How often the counting subscriber saw each (worker, seq). */
    atomic_uchar seen[WORKERS][MAX_PUBLISHES_PER_WORKER];
    atomic_long received;
    atomic_long malformed;
} g_mt;

typedef struct {
    int id;
    long published;
    long requests;
    long wrong_replies;
    natsio_status first_error;
} worker;

static void count_publish_cb(void *user_data, const natsio_msg *msg, natsio_status status) {
    (void)user_data;
    (void)status;
    if (msg == NULL) return; /* the final call */
    int w = -1, seq = -1;
    if (sscanf(natsio_msg_data(msg), "w%d s%d", &w, &seq) != 2 || w < 0 || w >= WORKERS || seq < 0 ||
        seq >= MAX_PUBLISHES_PER_WORKER) {
        atomic_fetch_add(&g_mt.malformed, 1);
        return;
    }
    atomic_fetch_add(&g_mt.seen[w][seq], 1);
    atomic_fetch_add(&g_mt.received, 1);
}

static void *publish_and_request(void *arg) {
    worker *w = (worker *)arg;
    char body[64];
    for (int seq = 0; seq < MAX_PUBLISHES_PER_WORKER && nt_now_ms() < g_mt.deadline_ms; seq++) {
        int n = snprintf(body, sizeof body, "w%d s%d", w->id, seq);
        natsio_status st = natsio_client_publish(g_mt.client, g_mt.pub_subject, body, (size_t)n);
        if (st != NATSIO_OK) {
            w->first_error = st;
            return NULL;
        }
        w->published++;
        if (seq % REQUEST_EVERY == 0) {
            n = snprintf(body, sizeof body, "request w%d s%d", w->id, seq);
            natsio_msg *reply = NULL;
            st = natsio_client_request(g_mt.client, g_mt.echo_subject, NULL, body, (size_t)n, EVENT_MS, &reply);
            if (st != NATSIO_OK) {
                w->first_error = st;
                return NULL;
            }
            w->requests++;
            if (natsio_msg_data_len(reply) != (size_t)n || memcmp(natsio_msg_data(reply), body, (size_t)n) != 0)
                w->wrong_replies++;
            natsio_msg_free(reply);
        }
    }
    return NULL;
}

static void test_eight_threads_publish_and_request_through_one_client(void) {
    memset(&g_mt, 0, sizeof g_mt);
    natsio_client *c = connect_client();
    natsio_client *subscriber = connect_client();
    natsio_client *responder = connect_client();
    NT_CHECK(c && subscriber && responder);
    g_mt.client = c;
    case_subject(g_mt.pub_subject, sizeof g_mt.pub_subject, "pub");
    case_subject(g_mt.echo_subject, sizeof g_mt.echo_subject, "echo");

    /* Unlimited pending: this case counts deliveries, not policies. */
    natsio_sub_options unlimited;
    NT_CHECK_INT_EQ(natsio_sub_options_init(&unlimited), NATSIO_OK);
    unlimited.pending_msgs_limit = -1;
    unlimited.pending_bytes_limit = -1;
    natsio_sub *counter = NULL, *echo = NULL;
    NT_CHECK_INT_EQ(subscribe_callback(subscriber, g_mt.pub_subject, NULL, &unlimited,
                                       count_publish_cb, NULL, NULL, &counter),
                    NATSIO_OK);
    nt_cleanup(sub_free_cb, counter);
    NT_CHECK_INT_EQ(subscribe_callback(responder, g_mt.echo_subject, NULL, &unlimited, echo_cb, NULL,
                                       NULL, &echo),
                    NATSIO_OK);
    nt_cleanup(sub_free_cb, echo);
    NT_CHECK_INT_EQ(natsio_client_flush(subscriber, EVENT_MS), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_flush(responder, EVENT_MS), NATSIO_OK);

    g_mt.deadline_ms = nt_now_ms() + 3000;
    pthread_t threads[WORKERS];
    worker workers[WORKERS];
    for (int i = 0; i < WORKERS; i++) {
        workers[i] = (worker){.id = i, .first_error = NATSIO_OK};
        NT_CHECK(pthread_create(&threads[i], NULL, publish_and_request, &workers[i]) == 0);
    }
    long published = 0, requests = 0;
    for (int i = 0; i < WORKERS; i++) {
        pthread_join(threads[i], NULL);
        published += workers[i].published;
        requests += workers[i].requests;
    }
    for (int i = 0; i < WORKERS; i++) {
        NT_CHECK_MSG(workers[i].first_error == NATSIO_OK, "worker %d: %s", i,
                     natsio_status_str(workers[i].first_error));
        NT_CHECK_INT_EQ(workers[i].wrong_replies, 0);
    }
    NT_CHECK_INT_EQ(natsio_client_flush(c, EVENT_MS), NATSIO_OK);
    NT_CHECK_MSG(wait_at_least(&g_mt.received, published, EVENT_MS), "received %ld of %ld publishes",
                 atomic_load(&g_mt.received), published);
    NT_CHECK_INT_EQ(natsio_client_flush(subscriber, EVENT_MS), NATSIO_OK);
    NT_CHECK_INT_EQ(atomic_load(&g_mt.received), published);
    NT_CHECK_INT_EQ(atomic_load(&g_mt.malformed), 0);
    /* Exactly once each: every published (worker, seq) seen once, no other. */
    for (int w = 0; w < WORKERS; w++)
        for (long s = 0; s < MAX_PUBLISHES_PER_WORKER; s++) {
            int want = s < workers[w].published ? 1 : 0;
            NT_CHECK_MSG(atomic_load(&g_mt.seen[w][s]) == want, "worker %d seq %ld seen %d times, want %d", w, s,
                         atomic_load(&g_mt.seen[w][s]), want);
        }
    natsio_client_stats st;
    NT_CHECK_INT_EQ(natsio_client_get_stats(c, &st), NATSIO_OK);
    NT_CHECK_INT_EQ(st.out_msgs, (uint64_t)(published + requests));
    NT_CHECK_INT_EQ(st.in_msgs, (uint64_t)requests);
    printf("# 8 threads, 3 s: %ld publishes received exactly once, %ld requests answered with their own payload\n",
           published, requests);
}

/* ---- 1,000 subscriptions created and freed --------------------------------- */

static void count_cb(void *user_data, const natsio_msg *msg, natsio_status status) {
    (void)status;
    if (msg == NULL) return; /* the final call */
    (void)msg;
    atomic_fetch_add((atomic_long *)user_data, 1);
}

/* One subscription's life: subscribe, receive one message, free. */
static void one_subscription(natsio_client *c, const char *subject, bool callback_mode) {
    natsio_sub *s = NULL;
    if (callback_mode) {
        static atomic_long got;
        atomic_store(&got, 0);
        NT_CHECK_INT_EQ(subscribe_callback(c, subject, NULL, NULL, count_cb, &got, NULL, &s),
                        NATSIO_OK);
        NT_CHECK_INT_EQ(natsio_client_publish(c, subject, "x", 1), NATSIO_OK);
        bool delivered = wait_at_least(&got, 1, EVENT_MS);
        natsio_sub_free(s);
        NT_CHECK_MSG(delivered, "callback subscription got no message");
    } else {
        NT_CHECK_INT_EQ(natsio_client_subscribe(c, subject, NULL, NULL, &s), NATSIO_OK);
        NT_CHECK_INT_EQ(natsio_client_publish(c, subject, "x", 1), NATSIO_OK);
        natsio_msg *m = NULL;
        natsio_status st = natsio_sub_next(s, EVENT_MS, &m);
        natsio_msg_free(m);
        natsio_sub_free(s);
        NT_CHECK_INT_EQ(st, NATSIO_OK);
    }
}

static bool threads_back_to(void *arg) { return thread_count() <= *(int *)arg; }

static void test_thousand_subscriptions_no_growth(void) {
    char subj[128];
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    case_subject(subj, sizeof subj, "churn");
    /* Warm-up: lazily created pools and dispatchers reach their steady state. */
    for (int i = 0; i < 100; i++) {
        one_subscription(c, subj, i % 2 == 0);
        NT_CHECK(!nt_failed());
    }
    NT_CHECK_INT_EQ(natsio_client_flush(c, EVENT_MS), NATSIO_OK);
    nt_sleep_ms(200);
    int threads_before = thread_count();
    long long rss_before = rss_bytes();
    for (int i = 0; i < 1000; i++) {
        one_subscription(c, subj, i % 2 == 0);
        NT_CHECK(!nt_failed());
    }
    NT_CHECK_INT_EQ(natsio_client_flush(c, EVENT_MS), NATSIO_OK);
    bool threads_ok = nt_wait_until(threads_back_to, &threads_before, 3000);
    int threads_after = thread_count();
    long long rss_after = rss_bytes();
    printf("# 1000 subscriptions: threads %d -> %d, RSS %lld KiB -> %lld KiB\n", threads_before, threads_after,
           rss_before / 1024, rss_after / 1024);
    NT_CHECK_MSG(threads_ok, "threads grew from %d to %d", threads_before, threads_after);
    /* A leak of one subscription's queue, dispatcher stack or message per
     * iteration would be tens of MiB; allocator noise is far below. */
    NT_CHECK_MSG(!g_rss_meaningful || rss_after - rss_before < 8LL * 1024 * 1024, "RSS grew by %lld KiB",
                 (rss_after - rss_before) / 1024);
}

/* ---- slow consumer under a firehose ------------------------------------------ */

enum { FIREHOSE = 100000, SLOW_LIMIT = 1000 };

static struct {
    atomic_int gate_open;
    atomic_long delivered;
    atomic_long last_seq;
    atomic_long out_of_order;
    atomic_long first_seqs; /* delivered with seq < SLOW_LIMIT */
} g_slow;

static void gated_cb(void *user_data, const natsio_msg *msg, natsio_status status) {
    (void)user_data;
    (void)status;
    if (msg == NULL) return; /* the final call */
    /* The first message holds the consumer until the firehose is over. */
    while (!atomic_load(&g_slow.gate_open)) nt_sleep_ms(1);
    long seq = atol(natsio_msg_data(msg));
    if (seq <= atomic_load(&g_slow.last_seq)) atomic_fetch_add(&g_slow.out_of_order, 1);
    atomic_store(&g_slow.last_seq, seq);
    if (seq < SLOW_LIMIT) atomic_fetch_add(&g_slow.first_seqs, 1);
    atomic_fetch_add(&g_slow.delivered, 1);
}

static void firehose_with_policy(natsio_pending_policy policy) {
    char subj[128];
    memset(&g_slow, 0, sizeof g_slow);
    atomic_store(&g_slow.last_seq, -1);
    natsio_client *publisher = connect_client();
    natsio_client *subscriber = connect_client();
    NT_CHECK(publisher && subscriber);
    natsio_sub_options o;
    NT_CHECK_INT_EQ(natsio_sub_options_init(&o), NATSIO_OK);
    o.pending_msgs_limit = SLOW_LIMIT;
    o.pending_bytes_limit = -1;
    o.policy = policy;
    natsio_sub *s = NULL;
    NT_CHECK_INT_EQ(subscribe_callback(subscriber, case_subject(subj, sizeof subj, "hose"), NULL, &o,
                                       gated_cb, NULL, NULL, &s),
                    NATSIO_OK);
    nt_cleanup(sub_free_cb, s);
    NT_CHECK_INT_EQ(natsio_client_flush(subscriber, EVENT_MS), NATSIO_OK);

    char body[32];
    for (long i = 0; i < FIREHOSE; i++) {
        int n = snprintf(body, sizeof body, "%ld", i);
        NT_CHECK_INT_EQ(natsio_client_publish(publisher, subj, body, (size_t)n), NATSIO_OK);
    }
    NT_CHECK_INT_EQ(natsio_client_flush(publisher, EVENT_MS), NATSIO_OK);
    if (policy != NATSIO_POLICY_BLOCK) {
        /* The subscriber's PONG is queued behind every message: once the
         * flush returns, all of them went through the policy. */
        NT_CHECK_INT_EQ(natsio_client_flush(subscriber, EVENT_MS), NATSIO_OK);
    }
    atomic_store(&g_slow.gate_open, 1);

    natsio_iter_stats st;
    int64_t deadline = nt_now_ms() + 30000;
    for (;;) {
        NT_CHECK_INT_EQ(natsio_sub_get_stats(s, &st), NATSIO_OK);
        if (st.pending_items == 0 && (long)(st.delivered + st.dropped) >= FIREHOSE) break;
        NT_CHECK_MSG(nt_now_ms() < deadline, "stuck: delivered %llu dropped %llu pending %llu",
                     (unsigned long long)st.delivered, (unsigned long long)st.dropped,
                     (unsigned long long)st.pending_items);
        nt_sleep_ms(5);
    }
    /* The library counts a message delivered when it calls the callback:
     * wait until the last call has counted it too. */
    NT_CHECK_MSG(wait_at_least(&g_slow.delivered, (long)st.delivered, EVENT_MS), "the callback counted %ld of %llu",
                 atomic_load(&g_slow.delivered), (unsigned long long)st.delivered);
    NT_CHECK_INT_EQ(natsio_sub_get_stats(s, &st), NATSIO_OK);
    long delivered = atomic_load(&g_slow.delivered);
    printf("# firehose %d msgs, limit %d, policy %d: delivered %ld, dropped %llu\n", FIREHOSE, SLOW_LIMIT,
           (int)policy, delivered, (unsigned long long)st.dropped);
    NT_CHECK_INT_EQ(st.delivered, (uint64_t)delivered);
    NT_CHECK_INT_EQ(delivered + (long)st.dropped, FIREHOSE);
    NT_CHECK_INT_EQ(atomic_load(&g_slow.out_of_order), 0);
    if (policy == NATSIO_POLICY_BLOCK) {
        NT_CHECK_INT_EQ(st.dropped, 0);
    } else {
        /* The consumer held one message and the queue its limit (one over
         * at most); everything else was dropped. */
        NT_CHECK_MSG(delivered >= SLOW_LIMIT && delivered <= SLOW_LIMIT + 2, "delivered %ld", delivered);
    }
    if (policy == NATSIO_POLICY_DROP_OLD) NT_CHECK_INT_EQ(atomic_load(&g_slow.last_seq), FIREHOSE - 1);
    /* DROP_NEW kept the first messages (a later one may slip in whenever
     * the consumer takes one off the full queue); DROP_OLD the newest. */
    if (policy == NATSIO_POLICY_DROP_NEW) NT_CHECK_INT_EQ(atomic_load(&g_slow.first_seqs), SLOW_LIMIT);
}

static void test_firehose_drop_new(void) { firehose_with_policy(NATSIO_POLICY_DROP_NEW); }
static void test_firehose_drop_old(void) { firehose_with_policy(NATSIO_POLICY_DROP_OLD); }
static void test_firehose_block(void) { firehose_with_policy(NATSIO_POLICY_BLOCK); }

/* ---- 1M small messages, RSS bounded ------------------------------------------ */

enum { MILLION = 1000000 };

static void test_million_messages_rss_bounded(void) {
    char subj[128];
    static atomic_long received;
    atomic_store(&received, 0);
    natsio_client *publisher = connect_client();
    natsio_client *subscriber = connect_client();
    NT_CHECK(publisher && subscriber);
    /* BLOCK: nothing may be dropped, and the queue stays at its limit. */
    natsio_sub_options o;
    NT_CHECK_INT_EQ(natsio_sub_options_init(&o), NATSIO_OK);
    o.policy = NATSIO_POLICY_BLOCK;
    natsio_sub *s = NULL;
    NT_CHECK_INT_EQ(subscribe_callback(subscriber, case_subject(subj, sizeof subj, "m"), NULL, &o,
                                       count_cb, &received, NULL, &s),
                    NATSIO_OK);
    nt_cleanup(sub_free_cb, s);
    NT_CHECK_INT_EQ(natsio_client_flush(subscriber, EVENT_MS), NATSIO_OK);

    long long rss_before = rss_bytes();
    rss_sampler sampler = {.peak = rss_before};
    NT_CHECK(pthread_create(&sampler.thread, NULL, sample_rss, &sampler) == 0);
    const char payload[16] = "0123456789abcdef";
    int64_t start = nt_now_ms();
    natsio_status st = NATSIO_OK;
    for (long i = 0; i < MILLION && st == NATSIO_OK; i++) st = natsio_client_publish(publisher, subj, payload, 16);
    natsio_status flushed = natsio_client_flush(publisher, 30000);
    bool done = wait_at_least(&received, MILLION, 60000);
    int64_t elapsed = nt_now_ms() - start;
    atomic_store(&sampler.stop, 1);
    pthread_join(sampler.thread, NULL);
    long long peak = atomic_load(&sampler.peak);
    printf("# 1M x 16 B pub/sub in %lld ms: RSS before %lld KiB, peak %lld KiB (+%lld KiB)\n", (long long)elapsed,
           rss_before / 1024, peak / 1024, (peak - rss_before) / 1024);
    NT_CHECK_INT_EQ(st, NATSIO_OK);
    NT_CHECK_INT_EQ(flushed, NATSIO_OK);
    NT_CHECK_MSG(done, "received %ld of %d", atomic_load(&received), MILLION);
    NT_CHECK_INT_EQ(atomic_load(&received), MILLION);
    /* 1M messages are ~50 MB on the wire and more as queued messages; a
     * client holding them (or a copy per message) passes this bound, one
     * bounded by its write buffer and pending limits stays far below. */
    NT_CHECK_MSG(!g_rss_meaningful || peak - rss_before < 64LL * 1024 * 1024, "RSS grew by %lld KiB",
                 (peak - rss_before) / 1024);
}

/* ---- idle clients use no CPU ----------------------------------------------------- */

static void test_idle_clients_use_no_cpu(void) {
    char subj[128];
    natsio_client *clients[10];
    for (int i = 0; i < 10; i++) {
        clients[i] = connect_client();
        NT_CHECK(clients[i] != NULL);
        natsio_sub *s = NULL;
        NT_CHECK_INT_EQ(natsio_client_subscribe(clients[i], case_subject(subj, sizeof subj, "idle"), NULL, NULL, &s),
                        NATSIO_OK);
        nt_cleanup(sub_free_cb, s);
        NT_CHECK_INT_EQ(natsio_client_flush(clients[i], EVENT_MS), NATSIO_OK);
    }
    nt_sleep_ms(200);
    int64_t before = cpu_time_us();
    nt_sleep_ms(2000);
    int64_t used = cpu_time_us() - before;
    printf("# 10 idle clients, 2 s: %lld us of CPU\n", (long long)used);
    /* A busy loop would use ~2,000,000 us; timers and the runtime's idle
     * bookkeeping a few hundred. */
    NT_CHECK_MSG(used < 100000, "idle clients used %lld us of CPU in 2 s", (long long)used);
}

/* ---- loopback TCP proxy with cuts, refusals and stalls --------------------------- */

enum proxy_mode { PROXY_FORWARD, PROXY_REFUSE, PROXY_STALL };
enum { PROXY_BUF = 65536 };

typedef struct {
    int listen_fd;
    int port;
    int upstream_port;
    pthread_t thread;
    atomic_int stop;
    atomic_int mode;
    /* Bytes server->client to forward on the current connection before
     * resetting it (-1: no cut planned). */
    atomic_llong cut_after;
    atomic_int cut_now;
    atomic_int accepted;
    atomic_int cuts;
    atomic_llong down_bytes;
    /* Owned by the proxy thread. */
    int client_fd;
    int server_fd;
} proxy;

/* Closes with RST (SO_LINGER 0): the peer sees a reset, unsent data is lost. */
static void reset_close(int fd) {
    if (fd < 0) return;
    struct linger l = {1, 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    close(fd);
}

static void proxy_drop_pair(proxy *p) {
    reset_close(p->client_fd);
    reset_close(p->server_fd);
    p->client_fd = p->server_fd = -1;
}

static bool write_all(int fd, const char *buf, size_t len) {
    while (len > 0) {
        ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        buf += n;
        len -= (size_t)n;
    }
    return true;
}

static int connect_loopback(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static void *proxy_run(void *arg) {
    proxy *p = (proxy *)arg;
    char *buf = (char *)malloc(PROXY_BUF);
    while (!atomic_load(&p->stop)) {
        bool paired = p->client_fd >= 0;
        bool forwarding = paired && atomic_load(&p->mode) != PROXY_STALL;
        struct pollfd fds[3] = {{p->listen_fd, POLLIN, 0}, {p->client_fd, POLLIN, 0}, {p->server_fd, POLLIN, 0}};
        poll(fds, forwarding ? 3 : 1, 10);
        if (atomic_exchange(&p->cut_now, 0) && paired) {
            proxy_drop_pair(p);
            atomic_fetch_add(&p->cuts, 1);
            continue;
        }
        if (fds[0].revents & POLLIN) {
            int fd = accept(p->listen_fd, NULL, NULL);
            if (fd >= 0) {
                atomic_fetch_add(&p->accepted, 1);
                if (atomic_load(&p->mode) == PROXY_REFUSE) {
                    reset_close(fd);
                } else {
                    proxy_drop_pair(p); /* a new connection replaces the old */
                    int up = connect_loopback(p->upstream_port);
                    if (up < 0) {
                        reset_close(fd);
                    } else {
                        int one = 1;
                        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                        p->client_fd = fd;
                        p->server_fd = up;
                        atomic_store(&p->down_bytes, 0);
                    }
                }
            }
            continue;
        }
        if (!forwarding) continue;
        if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) {
            ssize_t n = recv(p->client_fd, buf, PROXY_BUF, 0);
            if (n <= 0 || !write_all(p->server_fd, buf, (size_t)n)) {
                proxy_drop_pair(p);
                continue;
            }
        }
        if (fds[2].revents & (POLLIN | POLLHUP | POLLERR)) {
            size_t want = PROXY_BUF;
            long long cut = atomic_load(&p->cut_after);
            long long done = atomic_load(&p->down_bytes);
            if (cut >= 0 && cut - done <= 0) {
                /* The cut point is already behind (it was set from a count
                 * that other bytes overtook): reset now rather than recv
                 * with a negative length turned huge. */
                proxy_drop_pair(p);
                atomic_store(&p->cut_after, -1);
                atomic_fetch_add(&p->cuts, 1);
                continue;
            }
            if (cut >= 0 && cut - done < (long long)want) want = (size_t)(cut - done);
            ssize_t n = recv(p->server_fd, buf, want, 0);
            /* Counted before they are forwarded: a test that saw the bytes
             * arrive (a flush's PONG) then reads a count that includes them. */
            if (n > 0) atomic_fetch_add(&p->down_bytes, n);
            if (n <= 0 || !write_all(p->client_fd, buf, (size_t)n)) {
                proxy_drop_pair(p);
                continue;
            }
            if (cut >= 0 && done + n >= cut) {
                /* The client got a frame's first bytes only: reset now. */
                proxy_drop_pair(p);
                atomic_store(&p->cut_after, -1);
                atomic_fetch_add(&p->cuts, 1);
            }
        }
    }
    proxy_drop_pair(p);
    free(buf);
    return NULL;
}

static void proxy_stop(void *arg) {
    proxy *p = (proxy *)arg;
    atomic_store(&p->stop, 1);
    pthread_join(p->thread, NULL);
    close(p->listen_fd);
    free(p);
}

/* A proxy on a free loopback port in front of the case's server. */
static proxy *proxy_start(int upstream_port) {
    proxy *p = (proxy *)calloc(1, sizeof *p);
    p->upstream_port = upstream_port;
    p->client_fd = p->server_fd = -1;
    atomic_store(&p->cut_after, -1);
    p->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (bind(p->listen_fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(p->listen_fd, 16) != 0 ||
        getsockname(p->listen_fd, (struct sockaddr *)&a, &len) != 0) {
        close(p->listen_fd);
        free(p);
        nt_fail_at(__FILE__, __LINE__, "proxy listen: %s", strerror(errno));
        return NULL;
    }
    p->port = ntohs(a.sin_port);
    if (pthread_create(&p->thread, NULL, proxy_run, p) != 0) {
        close(p->listen_fd);
        free(p);
        nt_fail_at(__FILE__, __LINE__, "proxy thread");
        return NULL;
    }
    nt_cleanup(proxy_stop, p);
    return p;
}

/* Connection events of a client behind the proxy. */
typedef struct {
    atomic_long disconnected;
    atomic_long reconnected;
} conn_events;

static void record_conn_event(void *user_data, natsio_event_kind kind, natsio_status status, const char *text) {
    (void)status;
    (void)text;
    conn_events *e = (conn_events *)user_data;
    if (kind == NATSIO_EVENT_DISCONNECTED) atomic_fetch_add(&e->disconnected, 1);
    if (kind == NATSIO_EVENT_RECONNECTED) atomic_fetch_add(&e->reconnected, 1);
}

/* A client through the proxy that reconnects quickly and forever, with the
 * default reconnect buffer (ping_ms > 0: its ping interval, 2 outstanding). */
static natsio_client *connect_through(proxy *p, conn_events *events, int64_t ping_ms) {
    char url[64];
    snprintf(url, sizeof url, "nats://127.0.0.1:%d", p->port);
    natsio_options *o = NULL;
    natsio_client *c = NULL;
    natsio_status st = natsio_options_new(&o);
    if (st == NATSIO_OK) st = natsio_options_set_url(o, url);
    if (st == NATSIO_OK) st = natsio_options_set_event_callback(o, record_conn_event, events, NULL);
    if (st == NATSIO_OK) st = natsio_options_set_reconnect_wait(o, 50, 200);
    if (st == NATSIO_OK) st = natsio_options_set_reconnect_jitter(o, 10, 10);
    if (st == NATSIO_OK) st = natsio_options_set_max_reconnect_attempts(o, -1);
    if (st == NATSIO_OK) st = natsio_options_set_connect_timeout_ms(o, 1000);
    if (st == NATSIO_OK && ping_ms > 0) st = natsio_options_set_ping(o, ping_ms, 2);
    if (st == NATSIO_OK) st = natsio_client_connect(o, &c);
    if (o) nt_cleanup(options_free_cb, o);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "connect through proxy: %s (%s)", natsio_status_str(st),
                   natsio_last_error());
        return NULL;
    }
    nt_cleanup(client_free_cb, c);
    return c;
}

typedef struct {
    natsio_client *client;
    conn_events *events;
    long reconnects;
} reconnect_wait;

static bool reconnected(void *arg) {
    reconnect_wait *w = (reconnect_wait *)arg;
    return atomic_load(&w->events->reconnected) >= w->reconnects &&
           natsio_client_status(w->client) == NATSIO_CONN_CONNECTED;
}

static bool disconnected(void *arg) {
    reconnect_wait *w = (reconnect_wait *)arg;
    return atomic_load(&w->events->disconnected) >= w->reconnects;
}

/* What a subscriber behind the proxy received: each payload is
 * "seq=<n>|" padded with 'x' to PROXY_PAYLOAD bytes, checked in full. */
enum { PROXY_PAYLOAD = 1000, PROXY_SEQS = 20000 };

static struct {
    atomic_uchar seen[PROXY_SEQS];
    atomic_long received;
    atomic_long corrupt;
} g_px;

static void check_payload_cb(void *user_data, const natsio_msg *msg, natsio_status status) {
    (void)user_data;
    (void)status;
    if (msg == NULL) return; /* the final call */
    const char *d = natsio_msg_data(msg);
    size_t len = natsio_msg_data_len(msg);
    int seq = -1, prefix = 0;
    bool ok = len == PROXY_PAYLOAD && sscanf(d, "seq=%d|%n", &seq, &prefix) == 1 && prefix > 0 && seq >= 0 &&
              seq < PROXY_SEQS;
    for (size_t i = (size_t)prefix; ok && i < len; i++) ok = d[i] == 'x';
    if (!ok) {
        atomic_fetch_add(&g_px.corrupt, 1);
        return;
    }
    atomic_fetch_add(&g_px.seen[seq], 1);
    atomic_fetch_add(&g_px.received, 1);
}

static natsio_status publish_seq(natsio_client *c, const char *subject, int seq) {
    char body[PROXY_PAYLOAD];
    memset(body, 'x', sizeof body);
    int n = snprintf(body, sizeof body, "seq=%d|", seq);
    body[n] = 'x'; /* overwrite snprintf's NUL */
    return natsio_client_publish(c, subject, body, sizeof body);
}

static void test_proxy_cut_mid_frame_subscriber_reconnects(void) {
    char subj[128];
    memset(&g_px, 0, sizeof g_px);
    proxy *p = proxy_start(nt_server_port(g_server));
    NT_CHECK(p != NULL);
    static conn_events events;
    memset(&events, 0, sizeof events);
    natsio_client *subscriber = connect_through(p, &events, 0);
    natsio_client *publisher = connect_client();
    NT_CHECK(subscriber && publisher);
    natsio_sub *s = NULL;
    NT_CHECK_INT_EQ(subscribe_callback(subscriber, case_subject(subj, sizeof subj, "cut"), NULL, NULL,
                                       check_payload_cb, NULL, NULL, &s),
                    NATSIO_OK);
    nt_cleanup(sub_free_cb, s);
    NT_CHECK_INT_EQ(natsio_client_flush(subscriber, EVENT_MS), NATSIO_OK);

    enum { ROUNDS = 5, BATCH = 200 };
    int seq = 0;
    long expected = 0;
    static bool victim[PROXY_SEQS];
    memset(victim, 0, sizeof victim);
    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < BATCH; i++) NT_CHECK_INT_EQ(publish_seq(publisher, subj, seq++), NATSIO_OK);
        NT_CHECK_INT_EQ(natsio_client_flush(publisher, EVENT_MS), NATSIO_OK);
        expected += BATCH;
        NT_CHECK_MSG(wait_at_least(&g_px.received, expected, EVENT_MS), "round %d: received %ld of %ld", round,
                     atomic_load(&g_px.received), expected);

        /* The next frame is cut at a different point each round: in the
         * operation name, between the control line's CR and LF, in the
         * payload, before the final CRLF, between its CR and LF. */
        long long control_line = snprintf(NULL, 0, "MSG %s %llu %d\r\n", subj,
                                          (unsigned long long)natsio_sub_sid(s), PROXY_PAYLOAD);
        const long long cut_points[ROUNDS] = {2, control_line - 1, control_line + 500,
                                              control_line + PROXY_PAYLOAD, control_line + PROXY_PAYLOAD + 1};
        atomic_store(&p->cut_after, atomic_load(&p->down_bytes) + cut_points[round]);
        victim[seq] = true;
        NT_CHECK_INT_EQ(publish_seq(publisher, subj, seq++), NATSIO_OK);
        NT_CHECK_INT_EQ(natsio_client_flush(publisher, EVENT_MS), NATSIO_OK);
        reconnect_wait w = {subscriber, &events, round + 1};
        NT_CHECK_MSG(nt_wait_until(reconnected, &w, EVENT_MS), "round %d: no reconnect (cuts %d, reconnected %ld)",
                     round, atomic_load(&p->cuts), atomic_load(&events.reconnected));
        /* The restored subscription is registered before this PONG. */
        NT_CHECK_INT_EQ(natsio_client_flush(subscriber, EVENT_MS), NATSIO_OK);
    }
    for (int i = 0; i < BATCH; i++) NT_CHECK_INT_EQ(publish_seq(publisher, subj, seq++), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_flush(publisher, EVENT_MS), NATSIO_OK);
    expected += BATCH;
    NT_CHECK_MSG(wait_at_least(&g_px.received, expected, EVENT_MS), "received %ld of %ld", atomic_load(&g_px.received),
                 expected);
    NT_CHECK_INT_EQ(natsio_client_flush(subscriber, EVENT_MS), NATSIO_OK);

    NT_CHECK_INT_EQ(atomic_load(&g_px.corrupt), 0);
    NT_CHECK_INT_EQ(atomic_load(&g_px.received), expected);
    for (int i = 0; i < seq; i++)
        NT_CHECK_MSG(atomic_load(&g_px.seen[i]) == (victim[i] ? 0 : 1), "seq %d seen %d times%s", i,
                     atomic_load(&g_px.seen[i]), victim[i] ? " (its frame was cut)" : "");
    NT_CHECK_INT_EQ(atomic_load(&p->cuts), ROUNDS);
    natsio_client_stats st;
    NT_CHECK_INT_EQ(natsio_client_get_stats(subscriber, &st), NATSIO_OK);
    NT_CHECK_INT_EQ(st.reconnects, ROUNDS);
    printf("# proxy: %d mid-frame cuts, %d connections, %ld messages received exactly once, none corrupt\n", ROUNDS,
           atomic_load(&p->accepted), expected);
}

static void test_proxy_outage_publishes_are_buffered_not_lost(void) {
    char subj[128];
    proxy *p = proxy_start(nt_server_port(g_server));
    NT_CHECK(p != NULL);
    static conn_events events;
    memset(&events, 0, sizeof events);
    natsio_client *publisher = connect_through(p, &events, 0);
    natsio_client *subscriber = connect_client();
    NT_CHECK(publisher && subscriber);
    natsio_sub *s = NULL;
    NT_CHECK_INT_EQ(natsio_client_subscribe(subscriber, case_subject(subj, sizeof subj, "outage"), NULL, NULL, &s),
                    NATSIO_OK);
    nt_cleanup(sub_free_cb, s);
    NT_CHECK_INT_EQ(natsio_client_flush(subscriber, EVENT_MS), NATSIO_OK);

    enum { BEFORE = 100, DURING = 2000, AFTER = 100 };
    int seq = 0;
    for (int i = 0; i < BEFORE; i++) NT_CHECK_INT_EQ(publish_seq(publisher, subj, seq++), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_flush(publisher, EVENT_MS), NATSIO_OK);

    /* Reset the connection and refuse (accept, then reset) every reconnect
     * attempt for a while: publishes made meanwhile are accepted into the
     * reconnect buffer and must all arrive once the proxy lets it through. */
    atomic_store(&p->mode, PROXY_REFUSE);
    atomic_store(&p->cut_now, 1);
    reconnect_wait w = {publisher, &events, 1};
    NT_CHECK_MSG(nt_wait_until(disconnected, &w, EVENT_MS), "the client never noticed the reset");
    for (int i = 0; i < DURING; i++) NT_CHECK_INT_EQ(publish_seq(publisher, subj, seq++), NATSIO_OK);
    int refused_from = atomic_load(&p->accepted);
    nt_sleep_ms(300);
    int refused = atomic_load(&p->accepted) - refused_from;
    atomic_store(&p->mode, PROXY_FORWARD);
    NT_CHECK_MSG(nt_wait_until(reconnected, &w, EVENT_MS), "no reconnect after the outage");
    for (int i = 0; i < AFTER; i++) NT_CHECK_INT_EQ(publish_seq(publisher, subj, seq++), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_flush(publisher, EVENT_MS), NATSIO_OK);

    /* Every accepted publish, exactly once, in order. */
    for (int i = 0; i < seq; i++) {
        natsio_msg *m = NULL;
        natsio_status st = natsio_sub_next(s, EVENT_MS, &m);
        NT_CHECK_MSG(st == NATSIO_OK, "message %d of %d: %s", i, seq, natsio_status_str(st));
        int got = -1;
        sscanf(natsio_msg_data(m), "seq=%d|", &got);
        size_t len = natsio_msg_data_len(m);
        natsio_msg_free(m);
        NT_CHECK_INT_EQ(len, PROXY_PAYLOAD);
        NT_CHECK_INT_EQ(got, i);
    }
    natsio_msg *extra = NULL;
    NT_CHECK_INT_EQ(natsio_sub_next(s, 200, &extra), NATSIO_ERR_TIMEOUT);
    printf("# proxy outage: %d publishes buffered while %d reconnect attempts were refused, all delivered once\n",
           DURING, refused);
}

static void test_proxy_stall_detected_and_recovered(void) {
    char subj[128], echo_subj[128];
    memset(&g_px, 0, sizeof g_px);
    proxy *p = proxy_start(nt_server_port(g_server));
    NT_CHECK(p != NULL);
    static conn_events events;
    memset(&events, 0, sizeof events);
    /* PINGs every 100 ms, 2 outstanding: a stall is noticed in ~300 ms. */
    natsio_client *c = connect_through(p, &events, 100);
    natsio_client *other = connect_client();
    NT_CHECK(c && other);
    natsio_sub *s = NULL, *echo = NULL;
    NT_CHECK_INT_EQ(subscribe_callback(c, case_subject(subj, sizeof subj, "stall"), NULL, NULL,
                                       check_payload_cb, NULL, NULL, &s),
                    NATSIO_OK);
    nt_cleanup(sub_free_cb, s);
    NT_CHECK_INT_EQ(subscribe_callback(other, case_subject(echo_subj, sizeof echo_subj, "echo"), NULL,
                                       NULL, echo_cb, NULL, NULL, &echo),
                    NATSIO_OK);
    nt_cleanup(sub_free_cb, echo);
    NT_CHECK_INT_EQ(natsio_client_flush(c, EVENT_MS), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_flush(other, EVENT_MS), NATSIO_OK);

    for (int round = 0; round < 3; round++) {
        /* Neither direction moves; the sockets stay open. */
        atomic_store(&p->mode, PROXY_STALL);
        reconnect_wait w = {c, &events, round + 1};
        NT_CHECK_MSG(nt_wait_until(disconnected, &w, EVENT_MS), "round %d: stall not detected", round);
        atomic_store(&p->mode, PROXY_FORWARD);
        NT_CHECK_MSG(nt_wait_until(reconnected, &w, EVENT_MS), "round %d: no reconnect after the stall", round);
        NT_CHECK_INT_EQ(natsio_client_flush(c, EVENT_MS), NATSIO_OK);

        /* The subscription was restored and requests work again. */
        long before = atomic_load(&g_px.received);
        for (int i = 0; i < 50; i++) NT_CHECK_INT_EQ(publish_seq(other, subj, round * 50 + i), NATSIO_OK);
        NT_CHECK_INT_EQ(natsio_client_flush(other, EVENT_MS), NATSIO_OK);
        NT_CHECK_MSG(wait_at_least(&g_px.received, before + 50, EVENT_MS), "round %d: %ld of 50 after reconnect", round,
                     atomic_load(&g_px.received) - before);
        natsio_msg *reply = NULL;
        NT_CHECK_INT_EQ(natsio_client_request(c, echo_subj, NULL, "still there?", 12, EVENT_MS, &reply), NATSIO_OK);
        NT_CHECK_MEM_EQ(natsio_msg_data(reply), natsio_msg_data_len(reply), "still there?", 12);
        natsio_msg_free(reply);
    }
    NT_CHECK_INT_EQ(atomic_load(&g_px.corrupt), 0);
    for (int i = 0; i < 150; i++) NT_CHECK_INT_EQ(atomic_load(&g_px.seen[i]), 1);
}

int main(int argc, char **argv) {
    static const nt_case cases[] = {
        NT_CASE(test_eight_threads_publish_and_request_through_one_client),
        NT_CASE(test_thousand_subscriptions_no_growth),
        NT_CASE(test_firehose_drop_new),
        NT_CASE(test_firehose_drop_old),
        NT_CASE(test_firehose_block),
        NT_CASE(test_million_messages_rss_bounded),
        NT_CASE(test_idle_clients_use_no_cpu),
        NT_CASE(test_proxy_cut_mid_frame_subscriber_reconnects),
        NT_CASE(test_proxy_outage_publishes_are_buffered_not_lost),
        NT_CASE(test_proxy_stall_detected_and_recovered),
    };
    return run_cases_with_shared_server(argc, argv, "stress", cases, NT_COUNT(cases));
}
