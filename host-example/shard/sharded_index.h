/* sharded_index.h -- a grip_index made by grip-host over an index stage sharded across MPI ranks, for
 * `grip-host run --mpi`: every rank runs the same pipeline, builds the stage's index over its contiguous rows of
 * the reference set only, and hands the match stage (of any plugin) this index, whose search asks every rank's
 * shard and merges the k nearest across ranks (an all-reduce of shard.h's merge, ties to the lower global row), so
 * that every rank gets one process's exact result and the rest of the pipeline runs alike on every rank.
 *
 * Every rank must call build, then search with the same queries in the same order (the pipeline is deterministic);
 * each search is one collective. The index is host-side: search takes host arrays only. */
#ifndef GRIP_HOST_SHARDED_INDEX_H
#define GRIP_HOST_SHARDED_INDEX_H

#include <stddef.h>
#include "plugin.h"
#include "shard/comm.h"

/* Builds `impl` (configured `stage`) over this rank's rows of reference (n x D, host; every rank passes the whole
 * set) and model_ids (U32 n x 1, host), and wraps it in *out (released through its release pointer; reference and
 * model_ids are borrowed and must outlive it). Every rank learns whether every rank succeeded: 0; or -1 with this
 * rank's reason in why (or "another rank failed"), rank 0 having printed every failed rank's line. */
int sharded_index_build(shard_comm *c, const grip_plugin *plugin, grip_ctx *ctx, const grip_stage_impl *impl,
                        grip_stage *stage, const grip_array *reference, const grip_array *model_ids, grip_index **out,
                        char *why, size_t whylen);

#endif
