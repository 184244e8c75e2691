/*
 * perf_abi.c - helpers for the bits of struct perf_event_attr that the
 * system header may not name (mmap3 on every stock header, build_id on old
 * ones): the flags word is the u64 right after read_format.
 */
#include <string.h>

#include "perf_abi.h"

static uint64_t *
attr_flags(struct perf_event_attr *a)
{
	return (uint64_t *)(void *)((char *)a + offsetof(struct perf_event_attr, read_format) + 8);
}

void
perf_attr_set_flag(struct perf_event_attr *a, unsigned int bit, int on)
{
	uint64_t *w = attr_flags(a);

	if (on)
		*w |= 1ULL << bit;
	else
		*w &= ~(1ULL << bit);
}

int
perf_attr_get_flag(const struct perf_event_attr *a, unsigned int bit)
{
	return (*attr_flags((struct perf_event_attr *)(void *)a) >> bit) & 1;
}

const char *
perf_event_name(const struct perf_event_attr *a)
{
	if (a->type == PERF_TYPE_HARDWARE && a->config == PERF_COUNT_HW_CPU_CYCLES)
		return "cycles";
	if (a->type == PERF_TYPE_SOFTWARE && a->config == PERF_COUNT_SW_CPU_CLOCK)
		return "cpu-clock";
	if (a->type == PERF_TYPE_SOFTWARE && a->config == PERF_COUNT_SW_TASK_CLOCK)
		return "task-clock";
	if (a->type == PERF_TYPE_SOFTWARE && a->config == PERF_COUNT_SW_DUMMY)
		return "dummy";
	return "unknown";
}
