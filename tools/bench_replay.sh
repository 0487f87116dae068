#!/bin/sh
# Replay error (bench/replay.h): each of the seven classic strategies run
# for real at np 2 and 4 with --trace, the trace replayed (`strata replay`),
# and the replayed step time held against the measured one. Prints a row per
# run (with its processes and the host's cores, from the trace) and the
# median |error| over all of them, then over the runs whose processes fit
# the cores and over those with more processes than cores (waits in MPI
# then take cores from compute, which the replay does not model): the
# issue's target is <= 3% on a quiet machine. The last column replays with
# --measured-comm (communication as measured too): the schedule's error
# alone, so the difference is the network model's.
# Usage: tools/bench_replay.sh [build/strata] [PROFILE] [extra strata real options...]
#   PROFILE: the network to replay on, best this machine's (`strata calibrate
#   -o local.profile`); "-" or none: cpu-loopback.
set -eu
S=${1:-build/strata}
[ $# -gt 0 ] && shift
PROFILE=${1:--}
[ $# -gt 0 ] && shift
EXTRA="$*"   # words without spaces, e.g. --model mlp:784-16-10 --batch 8192
dir=$(mktemp -d "${TMPDIR:-/tmp}/strata-replay-bench-XXXXXX")
trap 'rm -rf "$dir"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
net=""
[ "$PROFILE" != "-" ] && net="--cluster $PROFILE"
: > "$dir/rows"
for np in 2 4; do
    for s in mirrored ps-sync ps-async ps-ssp model pipeline-gpipe pipeline-1f1b; do
        # shellcheck disable=SC2086
        if "$S" real --strategy "$s" --np "$np" --devices "$np" --data synthetic --steps 10 \
                $EXTRA --trace "$dir/t.json" >/dev/null 2>"$dir/err" &&
           "$S" replay "$dir/t.json" $net --json "$dir/r.json" >/dev/null 2>>"$dir/err" &&
           "$S" replay "$dir/t.json" $net --measured-comm --json "$dir/c.json" >/dev/null \
                2>>"$dir/err"; then
            python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); c=json.load(open(sys.argv[2]));
print(sys.argv[3], sys.argv[4], d["measured_step_s"], d["replayed_step_s"], d["error"],
      d.get("processes") or 0, d.get("cores") or 0, c["error"])' \
                "$dir/r.json" "$dir/c.json" "$s" "$np" >> "$dir/rows"
        else
            echo "$s np $np: failed: $(tail -1 "$dir/err")" >&2
        fi
    done
done
python3 - "$dir/rows" "$PROFILE" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
print(f"replay network: {'cpu-loopback' if sys.argv[2] == '-' else sys.argv[2]}")
print(f"{'strategy':<16}{'np':>3}{'measured ms':>13}{'replayed ms':>13}{'error':>9}"
      f"{'processes/cores':>17}{'measured comm':>15}")
for s, np, m, r, e, procs, cores, ec in rows:
    crowd = f"{procs}/{cores}" + (" over" if int(cores) and int(procs) > int(cores) else "")
    print(f"{s:<16}{np:>3}{float(m)*1e3:>13.3f}{float(r)*1e3:>13.3f}{float(e)*100:>+8.1f}%"
          f"{crowd:>17}{float(ec)*100:>+14.1f}%")
def median_line(what, sel):
    if sel:
        med = statistics.median(abs(float(r[4])) for r in sel)
        med_c = statistics.median(abs(float(r[7])) for r in sel)
        print(f"median |error| over {len(sel)} {what}: {med*100:.1f}% "
              f"(--measured-comm: {med_c*100:.1f}%)")
    else:
        print(f"median |error| over 0 {what}: -")
if rows:
    median_line("runs", rows)
    # a trace without hosts (0 cores) counts as fitting: nothing says otherwise
    over = [r for r in rows if int(r[6]) and int(r[5]) > int(r[6])]
    median_line("runs whose processes fit the cores", [r for r in rows if r not in over])
    median_line("runs with more processes than cores", over)
PY
