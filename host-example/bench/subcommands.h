/* subcommands.h -- the benchmarks `grip-host bench` runs, which cmd_bench.c dispatches to:
 *
 *   bench descriptors: throughput of every descriptor stage the plugin lists, on a generated surface
 *                      (descriptors.c).
 *   bench index:       an index stage's build and search, in one process or sharded across MPI ranks (index.c);
 *                      argc/argv: its arguments, which every rank must share.
 *   bench recall:      how often a scene keypoint's nearest model descriptor is its true counterpart (Bologna
 *                      retrieval data, or a generated posed copy of the generated surface) (recall.c).
 *   bench pipeline:    whole recognition runs (describe models, index, describe scene, match, group, verify) on
 *                      named workloads, time per stage and bytes moved (pipeline.c, workloads.h).
 *
 * Each returns the process exit status, as the commands of commands.h do. Internal to bench/. */
#ifndef GRIP_HOST_BENCH_SUBCOMMANDS_H
#define GRIP_HOST_BENCH_SUBCOMMANDS_H

#include "bench/bench_common.h"

int bench_descriptors(const bench_options *b);
int bench_recall(const bench_options *b);
int bench_index(const bench_options *b, int argc, char **argv);
int bench_pipeline(const bench_options *b);

#endif
