#!/bin/sh
# make bench: benchmarks that are not part of check.  Each prints its
# figures; tests/bench/RESULTS.md records them with the machine.
#   BENCH_INDEX_OBJECTS (1000000), BENCH_INDEX_QUERIES (100000)
#   BENCH_MODEL_PROCS (10000), BENCH_MODEL_FILES (200)
cd "$(dirname "$0")/../.." || exit 1
rc=0
echo "== index: ingest and lookup (tests/bench/bench_index)"
"${BUILD:-build}"/tests/bench/bench_index -n "${BENCH_INDEX_OBJECTS:-1000000}" -q "${BENCH_INDEX_QUERIES:-100000}" || rc=1
echo "== model: bytes per map, adds, lookups (tests/bench/bench_model)"
"${BUILD:-build}"/tests/bench/bench_model -p "${BENCH_MODEL_PROCS:-10000}" -m "${BENCH_MODEL_FILES:-200}" || rc=1
for b in tests/bench/bench_*.sh; do
	[ -f "$b" ] || continue
	echo "== $(basename "$b" .sh)"
	sh "$b" || rc=1
done
exit $rc
