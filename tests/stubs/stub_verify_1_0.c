/* stub_verify_1_0.c -- a verify stage of a plugin built against ABI 1.0, whose grip_verdict ends at `violation`:
 * it writes verdicts of that size (struct_size and item_size both), rejecting every hypothesis, so a host must
 * read no reason from them. A 1.1 host that read past struct_size would take the next verdict's struct_size (or,
 * after the last, a trap of GRIP_VERDICT_DRIFT) for a reason. Its group stage proposes two identity poses of model
 * 0 whatever the correspondences, so that verification has something to judge on any scene. */
#include <stddef.h>
#include "stub_plugin.h"

typedef struct verdict_1_0 {
    uint32_t struct_size, hypothesis;
    float pose[16];
    float fitness, rmse;
    uint32_t iterations, accepted;
    float violation;
} verdict_1_0;

typedef struct older_verdicts {
    grip_verdicts pub;
    verdict_1_0 *items; /* count + 1: the last is the trap */
} older_verdicts;

static void older_verdicts_release(grip_verdicts *v)
{
    if (!v)
        return;
    free(((older_verdicts *)v)->items);
    free(v);
}

static grip_status older_verify(grip_stage *stage, const grip_view *models, uint32_t n_models, const grip_view *scene,
                                const grip_hypotheses *hypotheses, grip_verdicts **out)
{
    (void)models, (void)n_models, (void)scene;
    *out = NULL;
    older_verdicts *o = calloc(1, sizeof *o);
    if (o)
        o->items = calloc((size_t)hypotheses->count + 1, sizeof *o->items);
    if (!o || !o->items) {
        free(o);
        snprintf(stage->ctx->error, sizeof stage->ctx->error, "verify_1_0: out of memory");
        return GRIP_ENOMEM;
    }
    for (uint32_t i = 0; i < hypotheses->count; i++) {
        const grip_hypothesis *h = (const grip_hypothesis *)((const char *)hypotheses->items +
                                                             (size_t)i * hypotheses->item_size);
        verdict_1_0 *v = &o->items[i];
        v->struct_size = sizeof *v;
        v->hypothesis = i;
        memcpy(v->pose, h->pose, sizeof v->pose);
        v->fitness = 0.25f;
        v->rmse = 0.001f;
        v->violation = 0.0f;
    }
    o->items[hypotheses->count].struct_size = GRIP_VERDICT_DRIFT; /* the trap past the last verdict */
    o->pub.struct_size = sizeof o->pub;
    o->pub.count = hypotheses->count;
    o->pub.item_size = sizeof(verdict_1_0);
    o->pub.items = (grip_verdict *)(void *)o->items;
    o->pub.release = older_verdicts_release;
    *out = &o->pub;
    return GRIP_OK;
}

#define OLDER_HYPOTHESES 2

static void older_hypotheses_release(grip_hypotheses *h)
{
    if (h)
        free(h->items);
    free(h);
}

static grip_status older_group(grip_stage *stage, const grip_view *models, uint32_t n_models, const grip_view *scene,
                               const grip_matches *matches, grip_hypotheses **out)
{
    (void)models, (void)n_models, (void)scene, (void)matches;
    *out = NULL;
    grip_hypotheses *h = calloc(1, sizeof *h);
    grip_hypothesis *items = calloc(OLDER_HYPOTHESES, sizeof *items);
    if (!h || !items) {
        free(h);
        free(items);
        snprintf(stage->ctx->error, sizeof stage->ctx->error, "verify_1_0: out of memory");
        return GRIP_ENOMEM;
    }
    for (uint32_t i = 0; i < OLDER_HYPOTHESES; i++) {
        items[i].struct_size = sizeof items[i];
        for (int k = 0; k < 4; k++)
            items[i].pose[5 * k] = 1.0f;
        items[i].votes = (float)(OLDER_HYPOTHESES - i);
    }
    h->struct_size = sizeof *h;
    h->count = OLDER_HYPOTHESES;
    h->item_size = sizeof *items;
    h->items = items;
    h->release = older_hypotheses_release;
    *out = h;
    return GRIP_OK;
}

static const grip_stage_impl older_group_stage = STUB_STAGE(GRIP_STAGE_GROUP, "older", group, older_group);
static const grip_stage_impl older_verify_stage = STUB_STAGE(GRIP_STAGE_VERIFY, "older", verify, older_verify);
static const grip_stage_impl *const stages[] = {&older_group_stage, &older_verify_stage};

const grip_plugin *grip_plugin_get(uint32_t host_abi_major, uint32_t host_abi_minor)
{
    (void)host_abi_minor;
    static grip_plugin table;
    table = stub_table;
    table.abi_minor = 0;
    table.name = "verify_1_0";
    table.n_stages = 2;
    table.stages = stages;
    return host_abi_major == GRIP_ABI_MAJOR ? &table : NULL;
}
