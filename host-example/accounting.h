/* accounting.h -- what a pipeline run moved between host and device memory, stage by stage, and how the plugins'
 * device memory pools grew: read from each plugin context's counters (grip_plugin.ctx_stats, ABI 1.2) between the
 * stages. A plugin without ctx_stats adds nothing; a pipeline of only such plugins has no accounting. */
#ifndef GRIP_HOST_ACCOUNTING_H
#define GRIP_HOST_ACCOUNTING_H

#include "pipeline_result.h"
#include "plugin.h"

#include <stdio.h>

struct grip_pipeline;

/* The contexts' counters summed at one moment. */
typedef struct accounting_mark {
    grip_ctx_stats sum;
    int available; /* 1 when some context reported */
} accounting_mark;

/* Reads the pipeline's contexts now into *m. */
void accounting_mark_now(const struct grip_pipeline *p, accounting_mark *m);
/* Charges what the contexts did since *m to stage `stage` of a (a grip_stage_kind) and moves *m to now. */
void accounting_charge(const struct grip_pipeline *p, accounting_mark *m, pipeline_accounting *a, int stage);

/* Adds `earlier` (what came before the run a measured, e.g. describing and indexing the models) into a, stage by
 * stage; a's pool sizes, the later ones, stay. */
void accounting_add_before(pipeline_accounting *a, const pipeline_accounting *earlier);

/* `"transfers":{…}` (with a leading comma) when a is available, as pipeline_result.h's JSON says; else nothing. */
void accounting_print_json(FILE *out, const pipeline_accounting *a);
/* One line of text ("transfers: …") when a is available. */
void accounting_print_text(FILE *out, const pipeline_accounting *a);

#endif
