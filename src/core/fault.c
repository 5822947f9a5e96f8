/* fault.c -- see fault.h. Built only with GRIP_FAULT_INJECTION. */
#include "core/fault.h"

#include <stdatomic.h>

static atomic_uint_fast64_t calls[GRIP_FAULT_KIND_COUNT];
/* the armed kind and call; nth 0: none */
static atomic_int armed_kind;
static atomic_uint_fast64_t armed_nth;
static atomic_int fired;

static void restart_counts(void)
{
    for (int k = 0; k < GRIP_FAULT_KIND_COUNT; k++)
        atomic_store(&calls[k], 0);
    atomic_store(&fired, 0);
}

void grip_fault_arm(grip_fault_kind kind, uint64_t nth)
{
    atomic_store(&armed_nth, 0); /* no hook fires while the counts restart */
    restart_counts();
    atomic_store(&armed_kind, (int)kind);
    atomic_store(&armed_nth, nth);
}

void grip_fault_disarm(void)
{
    atomic_store(&armed_nth, 0);
    restart_counts();
}

uint64_t grip_fault_calls(grip_fault_kind kind)
{
    return (unsigned)kind < GRIP_FAULT_KIND_COUNT ? atomic_load(&calls[kind]) : 0;
}

int grip_fault_fired(void)
{
    return atomic_load(&fired);
}

const char *grip_fault_kind_name(grip_fault_kind kind)
{
    switch (kind) {
    case GRIP_FAULT_DEVICE_ALLOC: return "device allocation";
    case GRIP_FAULT_LAUNCH: return "kernel launch";
    case GRIP_FAULT_COPY: return "device copy";
    }
    return "fault";
}

int grip_fault_hit(grip_fault_kind kind)
{
    uint64_t n = atomic_fetch_add(&calls[kind], 1) + 1;
    if (n != atomic_load(&armed_nth) || (int)kind != atomic_load(&armed_kind))
        return 0;
    atomic_store(&fired, 1);
    return 1;
}
