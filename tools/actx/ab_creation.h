/* ab_creation.h — `actx ab`'s session-creation section: how long ORT takes to create a session
 * of a chain of claimable nodes, alone and with each EP, as the chain grows.
 *
 * A plugin EP's claims go through ORT's partitioner, which checks each group of nodes against
 * the whole graph: an EP that claims node by node makes creation superlinear in the node count
 * (ep/group.c merges adjacent claims for that reason). For every chain (ab_cases.h) and node
 * count, each arm's session is created once untimed (which also records where the nodes went),
 * then `reps` times, arms interleaved in alternating order, and freed after each creation; the
 * median is reported beside ORT alone's, with the per-node cost. */
#ifndef ACTX_TOOLS_AB_CREATION_H
#define ACTX_TOOLS_AB_CREATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "ab_eps.h"

#define ACTX_AB_CREATION_MAX_SIZES 8
/* ORT alone, actx with policy all and auto, and the peers. */
#define ACTX_AB_CREATION_MAX_ARMS (3 + ACTX_AB_MAX_PEERS)

typedef struct actx_ab_creation_config {
  const long *nodes; /* node counts, ascending */
  size_t n_sizes;
  long reps;
  const char *actx_path; /* libactx_ep.so */
  const actx_ab_ep *peers;
  size_t n_peers;
  bool tty; /* progress on one rewritten line */
} actx_ab_creation_config;

typedef struct actx_ab_creation actx_ab_creation;

/* Times every chain at every size. NULL only when out of memory (an arm that fails is reported
 * in its cells). */
actx_ab_creation *actx_ab_creation_run(const actx_ab_creation_config *config);
void actx_ab_creation_free(actx_ab_creation *c);

/* The section of the report: a heading, the table, a line on how the per-node cost grows, notes. */
void actx_ab_creation_print(const actx_ab_creation *c, FILE *out);
/* One CSV row per chain x size x arm. */
void actx_ab_creation_write_csv(const actx_ab_creation *c, FILE *out);

#endif /* ACTX_TOOLS_AB_CREATION_H */
