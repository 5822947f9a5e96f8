/* accounting.c -- see accounting.h. */
#include "accounting.h"
#include "pipeline.h"

#include <string.h>

void accounting_mark_now(const grip_pipeline *p, accounting_mark *m)
{
    memset(m, 0, sizeof *m);
    for (int i = 0; i < 1 + GRIP_STAGE_KIND_COUNT; i++) {
        const grip_plugin *t = &p->plugins[i].table;
        grip_ctx_stats s = {.struct_size = sizeof s};
        if (!p->ctxs[i] || !t->ctx_stats || t->ctx_stats(p->ctxs[i], &s) != GRIP_OK)
            continue;
        m->available = 1;
        m->sum.h2d_bytes += s.h2d_bytes;
        m->sum.d2h_bytes += s.d2h_bytes;
        m->sum.h2d_copies += s.h2d_copies;
        m->sum.d2h_copies += s.d2h_copies;
        m->sum.h2d_ns += s.h2d_ns;
        m->sum.d2h_ns += s.d2h_ns;
        m->sum.pool_reserved_bytes += s.pool_reserved_bytes;
        m->sum.pool_reserved_high_bytes += s.pool_reserved_high_bytes;
        m->sum.pool_grows += s.pool_grows;
    }
}

void accounting_charge(const grip_pipeline *p, accounting_mark *m, pipeline_accounting *a, int stage)
{
    accounting_mark now;
    accounting_mark_now(p, &now);
    if (!now.available)
        return;
    pipeline_transfer *t = &a->stage[stage];
    t->h2d_bytes += now.sum.h2d_bytes - m->sum.h2d_bytes;
    t->d2h_bytes += now.sum.d2h_bytes - m->sum.d2h_bytes;
    t->h2d_copies += now.sum.h2d_copies - m->sum.h2d_copies;
    t->d2h_copies += now.sum.d2h_copies - m->sum.d2h_copies;
    t->h2d_ms += (double)(now.sum.h2d_ns - m->sum.h2d_ns) * 1e-6;
    t->d2h_ms += (double)(now.sum.d2h_ns - m->sum.d2h_ns) * 1e-6;
    a->available = 1;
    a->pool_grows += now.sum.pool_grows - m->sum.pool_grows;
    a->pool_reserved_bytes = now.sum.pool_reserved_bytes;
    a->pool_reserved_high_bytes = now.sum.pool_reserved_high_bytes;
    *m = now;
}

void accounting_add_before(pipeline_accounting *a, const pipeline_accounting *earlier)
{
    if (!earlier->available)
        return;
    for (int s = 0; s < PIPELINE_STAGES; s++) {
        pipeline_transfer *t = &a->stage[s];
        const pipeline_transfer *e = &earlier->stage[s];
        t->h2d_bytes += e->h2d_bytes;
        t->d2h_bytes += e->d2h_bytes;
        t->h2d_copies += e->h2d_copies;
        t->d2h_copies += e->d2h_copies;
        t->h2d_ms += e->h2d_ms;
        t->d2h_ms += e->d2h_ms;
    }
    a->pool_grows += earlier->pool_grows;
    if (!a->available) {
        a->pool_reserved_bytes = earlier->pool_reserved_bytes;
        a->pool_reserved_high_bytes = earlier->pool_reserved_high_bytes;
    }
    a->available = 1;
}

static pipeline_transfer run_total(const pipeline_accounting *a)
{
    pipeline_transfer sum = {0};
    for (int s = 0; s < PIPELINE_STAGES; s++) {
        sum.h2d_bytes += a->stage[s].h2d_bytes;
        sum.d2h_bytes += a->stage[s].d2h_bytes;
        sum.h2d_copies += a->stage[s].h2d_copies;
        sum.d2h_copies += a->stage[s].d2h_copies;
        sum.h2d_ms += a->stage[s].h2d_ms;
        sum.d2h_ms += a->stage[s].d2h_ms;
    }
    return sum;
}

static void print_transfer_json(FILE *out, const pipeline_transfer *t)
{
    fprintf(out,
            "{\"h2d_bytes\":%llu,\"d2h_bytes\":%llu,\"h2d_copies\":%llu,\"d2h_copies\":%llu,\"upload_ms\":%.3f,"
            "\"download_ms\":%.3f}",
            (unsigned long long)t->h2d_bytes, (unsigned long long)t->d2h_bytes, (unsigned long long)t->h2d_copies,
            (unsigned long long)t->d2h_copies, t->h2d_ms, t->d2h_ms);
}

void accounting_print_json(FILE *out, const pipeline_accounting *a)
{
    if (!a->available)
        return;
    const pipeline_transfer total = run_total(a);
    fputs(",\"transfers\":{\"run\":", out);
    print_transfer_json(out, &total);
    fputs(",\"stages\":{", out);
    for (int s = 0; s < PIPELINE_STAGES; s++) {
        fprintf(out, "%s\"%s\":", s ? "," : "", pipeline_stage_names[s]);
        print_transfer_json(out, &a->stage[s]);
    }
    fprintf(out, "},\"pool_grows\":%llu,\"pool_reserved_bytes\":%llu,\"pool_reserved_high_bytes\":%llu}",
            (unsigned long long)a->pool_grows, (unsigned long long)a->pool_reserved_bytes,
            (unsigned long long)a->pool_reserved_high_bytes);
}

void accounting_print_text(FILE *out, const pipeline_accounting *a)
{
    if (!a->available)
        return;
    const pipeline_transfer t = run_total(a);
    fprintf(out,
            "transfers: host->device %.3f MB in %llu copies (%.2f ms), device->host %.3f MB in %llu copies "
            "(%.2f ms); device pool grew %llu times, holds %.1f MB\n",
            (double)t.h2d_bytes * 1e-6, (unsigned long long)t.h2d_copies, t.h2d_ms, (double)t.d2h_bytes * 1e-6,
            (unsigned long long)t.d2h_copies, t.d2h_ms, (unsigned long long)a->pool_grows,
            (double)a->pool_reserved_bytes * 1e-6);
}
