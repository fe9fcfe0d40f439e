/* A 3-node nats-server cluster on loopback for the C tests: routes on free
 * ports, a server name per node ("n0".."n2"), JetStream with each node's
 * own store dir (the harness gives every server one), and helpers that
 * wait for events instead of sleeping: routes up, a JetStream meta leader,
 * a stream or consumer leader; find, kill, restart or step down a leader;
 * put a node into lame duck mode.
 *
 * Nodes are stopped when the case ends (nt_cleanup). Clients used by the
 * helpers are short-lived and pinned to one node (they never move). */
#ifndef NT_CLUSTER_H
#define NT_CLUSTER_H

#include "harness.h"

#include <natsio.h>

#include <stdbool.h>
#include <stdint.h>

#define CLUSTER_NODES 3

typedef struct {
    int route_port[CLUSTER_NODES];
    int monitor_port[CLUSTER_NODES]; /* HTTP monitoring (/jsz) */
    char config[CLUSTER_NODES][1024];
    nt_server *node[CLUSTER_NODES];
} cluster;

/* Picks the route ports and writes each node's config (full mesh of
 * explicit routes); `extra` (may be NULL) is appended to every config.
 * Starts nothing. */
cluster *cluster_plan(const char *extra);

/* Starts node i of a planned cluster; false (failure recorded) if it does
 * not start. */
bool cluster_start_node(cluster *cl, int i);

/* Starts every node and waits until each announces all of them (routes
 * up). NULL (failure recorded) on failure. */
cluster *cluster_start(const char *extra);

/* As cluster_start, then waits until JetStream has a meta leader that
 * every node knows ($JS.API.INFO answers on each) and every peer is
 * current in the meta group. */
cluster *cluster_start_js(const char *extra);

/* Waits until $JS.API.INFO answers without error on every running node
 * (a meta leader is elected and known). */
bool cluster_await_meta_leader(cluster *cl, int64_t timeout_ms);

/* Waits until a node reports itself meta leader with every other running
 * node current (its /jsz on the monitoring port): the meta group's
 * election as the servers see it, where $JS.API.INFO may still be answered
 * by a leader about to lose its quorum. */
bool cluster_await_meta_current(cluster *cl, int64_t timeout_ms);

/* A client pinned to node i (ignores discovered servers, never moves),
 * freed when the case ends. */
natsio_client *cluster_pinned_client(cluster *cl, int i);

/* Node index of a server name ("n1" -> 1), or -1. */
int cluster_node_named(const char *name);

/* Node index the client is connected to, or -1. */
int cluster_node_of(cluster *cl, natsio_client *c);

/* The node leading `stream` once it has a leader and `replicas - 1`
 * current followers (asked through any running node); -1 on timeout. */
int cluster_stream_leader(cluster *cl, const char *stream, int replicas, int64_t timeout_ms);

/* The node leading the consumer once it has a leader and `replicas - 1`
 * current followers; -1 on timeout. */
int cluster_consumer_leader(cluster *cl, const char *stream, const char *consumer, int replicas,
                            int64_t timeout_ms);

/* $JS.API.STREAM.LEADER.STEPDOWN.<stream>, retried while the stream has no
 * leader to answer; then waits for a different leader. Returns the new
 * leader's node, or -1. */
int cluster_stream_stepdown(cluster *cl, const char *stream, int replicas, int64_t timeout_ms);

/* $JS.API.CONSUMER.LEADER.STEPDOWN.<stream>.<consumer>, as above. */
int cluster_consumer_stepdown(cluster *cl, const char *stream, const char *consumer, int replicas,
                              int64_t timeout_ms);

/* SIGKILLs node i (its store is kept for cluster_restart_node). */
void cluster_kill_node(cluster *cl, int i);

/* Starts node i again (same port, config, store) and waits until it has
 * its routes, knows the meta leader and is current in the meta group
 * (cluster_await_meta_current). */
bool cluster_restart_node(cluster *cl, int i, int64_t timeout_ms);

/* Puts node i into lame duck mode (`nats-server --signal ldm`, SIGUSR2). */
bool cluster_lame_duck(cluster *cl, int i);

/* SIGSTOP / SIGCONT of node i. */
bool cluster_pause(cluster *cl, int i);
void cluster_resume(cluster *cl, int i);

#endif
