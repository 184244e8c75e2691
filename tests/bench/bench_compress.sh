#!/bin/sh
# Compressed segments ([segments] compress = zstd): bytes per sample and
# CPU against uncompressed segments and against perf record -z, side by
# side on bench_record.sh's workload (spinner + exec storm), one segment
# per run (rotate_age = 10m, the default) as perf writes one file.
#   BENCH_ZSTD_LEVEL (1), and bench_record.sh's BENCH_SECONDS, BENCH_RUNS, BENCH_FREQ...
cd "$(dirname "$0")/../.." || exit 1
BENCH_COLLECTORS=${BENCH_COLLECTORS:-perfmapd perfmapd-zstd perf perf-z} \
BENCH_ROTATE_AGE=${BENCH_ROTATE_AGE:-10m} exec sh tests/bench/bench_record.sh
