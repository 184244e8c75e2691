#!/bin/sh
# Build-id provenance in the default build-id mode (buildid_mode = auto):
# see tests/provenance.sh.
. tests/lib.sh
MODE=auto
. tests/provenance.sh
