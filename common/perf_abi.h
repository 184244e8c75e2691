/*
 * perf_abi.h - the parts of the perf ABI perfmapd speaks beyond what the
 * system's <linux/perf_event.h> (Linux 6.1 UAPI on Debian 12) defines:
 * the MMAP3 record of kernel-patch/, the build-id form of MMAP2, and the
 * perf.data file-format constants of tools/perf/util/header.h.
 *
 * MMAP3 (kernel-patch/, PERF_RECORD_MMAP3, enabled by attr bit "mmap3"):
 *
 *	struct {
 *		struct perf_event_header header;
 *		u32	pid, tid;
 *		u64	addr, len, pgoff;
 *		u32	maj, min;
 *		u64	ino, ino_generation;
 *		u32	prot, flags;
 *		u8	build_id_size;		0: the kernel could not read it
 *		u8	__reserved_1;
 *		u16	__reserved_2;
 *		u8	build_id[20];		zeroed when build_id_size is 0
 *		char	filename[];		NUL-terminated, padded to 8
 *		struct sample_id sample_id;
 *	};
 *
 * The record type and the attribute bit are the first ones mainline has
 * not given out (kernel-patch/README.md, "Numbers"): type 23 and bit 40 of
 * the attribute flags word.  6.19's deferred user call chains took type 22
 * (PERF_RECORD_CALLCHAIN_DEFERRED) and bits 38 and 39 (defer_callchain,
 * defer_output); the 6.1 and 6.12 series keep those reserved.  A number
 * mainline gives out later may mean something else on a stock kernel:
 * the decoder reads type 23 as MMAP3 only for events opened with the bit,
 * and the daemon must see a real MMAP3 record before it trusts the bit.
 */
#ifndef PERFMAPD_PERF_ABI_H
#define PERFMAPD_PERF_ABI_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#define PERF_RECORD_MMAP3		23
#define PERF_ATTR_FLAG_MMAP3_BIT	40
#define PERF_ATTR_FLAG_BUILD_ID_BIT	34

#ifndef PERF_RECORD_MISC_MMAP_BUILD_ID
#define PERF_RECORD_MISC_MMAP_BUILD_ID	(1 << 14)
#endif
#define PERF_RECORD_MISC_BUILD_ID_SIZE	(1 << 15)	/* in HEADER_BUILD_ID */

#define BUILD_ID_MAX			20

/* user-space record types of perf.data (tools/lib/perf/include/perf/event.h) */
#define PERF_RECORD_USER_TYPE_START	64
#define PERF_RECORD_FINISHED_ROUND	68
#define PERF_RECORD_FINISHED_INIT	82

/* perf.data header feature bits (tools/perf/util/header.h) */
enum {
	HEADER_TRACING_DATA = 1,
	HEADER_BUILD_ID = 2,
	HEADER_HOSTNAME = 3,
	HEADER_OSRELEASE = 4,
	HEADER_VERSION = 5,
	HEADER_ARCH = 6,
	HEADER_NRCPUS = 7,
	HEADER_CPUDESC = 8,
	HEADER_CPUID = 9,
	HEADER_TOTAL_MEM = 10,
	HEADER_CMDLINE = 11,
	HEADER_EVENT_DESC = 12,
	HEADER_CPU_TOPOLOGY = 13,
	HEADER_NUMA_TOPOLOGY = 14,
	HEADER_BRANCH_STACK = 15,
	HEADER_PMU_MAPPINGS = 16,
	HEADER_GROUP_DESC = 17,
	HEADER_AUXTRACE = 18,
	HEADER_STAT = 19,
	HEADER_CACHE = 20,
	HEADER_SAMPLE_TIME = 21,
	HEADER_MEM_TOPOLOGY = 22,
	HEADER_CLOCKID = 23,
	HEADER_DIR_FORMAT = 24,
	HEADER_BPF_PROG_INFO = 25,
	HEADER_BPF_BTF = 26,
	HEADER_COMPRESSED = 27,
	HEADER_CPU_PMU_CAPS = 28,
	HEADER_CLOCK_DATA = 29,
	HEADER_HYBRID_TOPOLOGY = 30,
	HEADER_PMU_CAPS = 31,
	HEADER_FEAT_BITS = 256,
};

#define PERF_MAGIC2			0x32454c4946524550ULL	/* "PERFILE2" */
#define PERF_FILE_HEADER_SIZE		104
#define PERF_FILE_ATTR_SIZE		128	/* PERF_ATTR_SIZE_VER7 */
#define PERF_NAME_ALIGN			64

struct perf_file_section {
	uint64_t offset;
	uint64_t size;
};

struct perf_file_header {
	uint64_t magic;
	uint64_t size;
	uint64_t attr_size;
	struct perf_file_section attrs;
	struct perf_file_section data;
	struct perf_file_section event_types;
	uint64_t adds_features[HEADER_FEAT_BITS / 64];
};

struct perf_file_attr {
	struct perf_event_attr attr;
	struct perf_file_section ids;
};

/* MMAP2 as the kernel lays it out, both forms of the union. */
struct mmap2_record {
	struct perf_event_header header;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	union {
		struct {
			uint32_t maj, min;
			uint64_t ino, ino_generation;
		};
		struct {
			uint8_t build_id_size;
			uint8_t __reserved_1;
			uint16_t __reserved_2;
			uint8_t build_id[BUILD_ID_MAX];
		};
	};
	uint32_t prot, flags;
	char filename[];
};

struct mmap3_record {
	struct perf_event_header header;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
	uint8_t build_id_size;
	uint8_t __reserved_1;
	uint16_t __reserved_2;
	uint8_t build_id[BUILD_ID_MAX];
	char filename[];
};

/* One entry of the HEADER_BUILD_ID feature (perf's struct perf_record_header_build_id). */
struct build_id_entry {
	struct perf_event_header header;
	int32_t pid;
	uint8_t build_id[24];	/* 20 bytes of id; byte 20 is its size, then padding */
	char filename[];
};

_Static_assert(sizeof(struct perf_file_header) == PERF_FILE_HEADER_SIZE, "perf header");
_Static_assert(offsetof(struct mmap2_record, filename) == 72, "mmap2 layout");
_Static_assert(offsetof(struct mmap3_record, build_id) == 76, "mmap3 layout");
_Static_assert(offsetof(struct mmap3_record, filename) == 96, "mmap3 layout");
_Static_assert(sizeof(struct perf_event_attr) >= PERF_FILE_ATTR_SIZE, "attr size");

/* The name perf gives the event of A ("cycles", "cpu-clock"), "unknown" otherwise. */
const char *perf_event_name(const struct perf_event_attr *a);

/* Set or test a bit of the attribute flags word (the u64 after read_format). */
void	perf_attr_set_flag(struct perf_event_attr *, unsigned int bit, int on);
int	perf_attr_get_flag(const struct perf_event_attr *, unsigned int bit);

#endif
