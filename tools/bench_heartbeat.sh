#!/bin/sh
# The per-step heartbeat's cost (real/heartbeat.h): the same real run of 200
# steps under mpirun, with and without STRATA_HEARTBEAT_DIR (with it, every
# rank pwrites its record each step), alternated 3 times; the medians of the
# report's mean step time, and their ratio.
# Usage: tools/bench_heartbeat.sh [build/strata] [extra strata options...]
set -eu
S=${1:-build/strata}
[ $# -gt 0 ] && shift
EXTRA="$*"   # words without spaces, e.g. --model mlp:784-64-32-16-10
dir=$(mktemp -d "${TMPDIR:-/tmp}/strata-hb-bench-XXXXXX")
hb=/dev/shm
[ -w "$hb" ] || hb=$dir
hb=$(mktemp -d "$hb/strata-hb-XXXXXX")
trap 'rm -rf "$dir" "$hb"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
run() {   # $1: with|without
    if [ "$1" = with ]; then set -- env STRATA_HEARTBEAT_DIR="$hb"; else set -- env -u STRATA_HEARTBEAT_DIR; fi
    # shellcheck disable=SC2086
    mpirun --oversubscribe -np 2 "$@" "$S" real --data synthetic --model mlp:784-256-128-10 \
        --strategy mirrored --steps 200 $EXTRA --json "$dir/r.json" >/dev/null 2>&1
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["step_time_s"]["mean"])' "$dir/r.json"
}
with=""; without=""
for i in 1 2 3; do
    without="$without $(run without)"
    with="$with $(run with)"
done
python3 - "$with" "$without" <<'PY'
import statistics, sys
w = [float(x) for x in sys.argv[1].split()]
wo = [float(x) for x in sys.argv[2].split()]
mw, mwo = statistics.median(w), statistics.median(wo)
print(f"step time, median of 3: with heartbeat {mw*1e6:.1f} us, without {mwo*1e6:.1f} us, "
      f"ratio {mw/mwo:.4f} ({(mw/mwo-1)*100:+.2f}%)")
PY
