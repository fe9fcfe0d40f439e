/*
 * call_options.h - the per-call options structs the C tests fill the same
 * way at many call sites, as compound literals (valid in the enclosing
 * block). Included by util.h and by the programs that stand without it
 * (test_async.c). C11 only.
 */
#ifndef NATSIO_TEST_CALL_OPTIONS_H
#define NATSIO_TEST_CALL_OPTIONS_H

#include <natsio.h>

/* natsio_js_next's options for a wait of `timeout_ms`, as the tests state
 * it: a positive number of milliseconds (expires_ms), NATSIO_NO_WAIT (only
 * a message available now: no_wait) or NATSIO_TIMEOUT_DEFAULT (the
 * context's timeout: expires_ms 0). */
#define NEXT_WAIT(timeout_ms)                                                            \
    (&(natsio_fetch_options){.version = NATSIO_FETCH_OPTIONS_VERSION,                    \
                             .expires_ms = (timeout_ms) > 0 ? (timeout_ms) : 0,          \
                             .no_wait = (timeout_ms) == NATSIO_NO_WAIT})

/* natsio_js_stream_info's options asking for the subjects matching
 * `filter`. */
#define STREAM_SUBJECTS(filter)                                                          \
    (&(natsio_stream_info_options){.version = NATSIO_STREAM_INFO_OPTIONS_VERSION,        \
                                   .subjects_filter = (filter)})

#endif
