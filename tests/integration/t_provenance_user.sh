#!/bin/sh
# Build-id provenance with buildid_mode = userspace: see tests/provenance.sh.
. tests/lib.sh
MODE=userspace
. tests/provenance.sh
