#!/usr/bin/env bash
# Builds the twelve recorded traces outside the shared folder that
# docs/scaling.md ("Traffic nobody tuned on") scores the policy on, into
# DIR, from public sources:
#
#   - ten NAB series (github.com/numenta/NAB, data/): eight tweet volumes,
#     ELB request counts and the artificial load-balancer spikes, as they are;
#   - NASA's web server, July and August 1995, requests per hour, and 22
#     days of the Archive Team's Twitter stream of August 2021, requests per
#     minute, both summed from the per-second counts published in
#     github.com/reconfigurable-ml-pipeline/web-service-datasets.
#
#   scripts/outside-traces.sh DIR
#   forecaster eval policy --counts --peak-instances 20 --boot 10m --slo 10s --input DIR --synthetic-seeds 0
#
# It needs curl, tar with bzip2 and awk, and the network (CI has none and
# never runs it). PREWARM_OUTSIDE_SRC names a folder that already holds the
# downloads under their own names (the NAB CSVs, nasa.tbz2 and
# twitter.tbz2); what it holds is not fetched again. The traces are written
# with Unix-second timestamps; none is copied into the repository.
set -euo pipefail

log() { echo "outside-traces.sh: $*" >&2; }

nab_base=https://raw.githubusercontent.com/numenta/NAB/master/data
workloads=https://github.com/reconfigurable-ml-pipeline/web-service-datasets/raw/master/dataset
nab_files=(
  realTweets/Twitter_volume_CRM.csv realTweets/Twitter_volume_CVS.csv
  realTweets/Twitter_volume_FB.csv realTweets/Twitter_volume_GOOG.csv
  realTweets/Twitter_volume_IBM.csv realTweets/Twitter_volume_KO.csv
  realTweets/Twitter_volume_PFE.csv realTweets/Twitter_volume_UPS.csv
  realAWSCloudwatch/elb_request_count_8c0756.csv
  artificialWithAnomaly/art_load_balancer_spikes.csv
)

# fetch copies URL's file into $2, from PREWARM_OUTSIDE_SRC when it holds it.
fetch() {
  local url=$1 out=$2 name
  name=$(basename "$out")
  if [[ -n "${PREWARM_OUTSIDE_SRC:-}" && -f "$PREWARM_OUTSIDE_SRC/$name" ]]; then
    cp "$PREWARM_OUTSIDE_SRC/$name" "$out"
    return
  fi
  log "downloading $url"
  curl -fsSL --retry 3 -o "$out" "$url"
}

# per_step sums the space-separated per-second counts on stdin into steps
# of step_s seconds, whole steps only. The first `first_len` seconds start
# at Unix time first_at; the rest (when first_len > 0) start at rest_at.
per_step() {
  awk -v step="$1" -v first_at="$2" -v first_len="$3" -v rest_at="$4" '
    BEGIN { RS = "[ \n]+"; print "timestamp,value"; i = 0; sum = 0; n = 0 }
    NF {
      if (first_len > 0 && i == first_len) { sum = 0; n = 0 }   # a partial step before the break is dropped
      sum += $1; n++; i++
      if (n == step) {
        at = (first_len > 0 && i > first_len) ? rest_at + (i - first_len - step) : first_at + i - step
        printf "%d,%d\n", at, sum
        sum = 0; n = 0
      }
    }'
}

tmp="" # the downloads' scratch folder, removed on exit

main() {
  if [[ $# -ne 1 ]]; then
    echo "usage: scripts/outside-traces.sh DIR" >&2
    exit 2
  fi
  local dir=$1 f
  mkdir -p "$dir"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  for f in "${nab_files[@]}"; do
    fetch "$nab_base/$f" "$dir/$(basename "$f")"
  done
  fetch "$workloads/nasa/workload.tbz2" "$tmp/nasa.tbz2"
  fetch "$workloads/twitter_trace/workload.tbz2" "$tmp/twitter.tbz2"
  # NASA-HTTP's July log ends at 1995-07-28 13:32:25 -0400 and August's
  # starts on 1 August: the per-second counts run on across the break, so
  # they are split there and the hours between are left as a gap. The logs'
  # clock (-0400) is written as UTC, so the days run midnight to midnight.
  tar -xjOf "$tmp/nasa.tbz2" --wildcards '*workload.txt' |
    per_step 3600 804556800 2381546 807235200 >"$dir/nasa_http_hourly.csv"
  # The Twitter stream from 2021-08-01 00:00 UTC, per minute.
  tar -xjOf "$tmp/twitter.tbz2" --wildcards '*workload.txt' |
    per_step 60 1627776000 0 0 >"$dir/twitter_stream_minute.csv"
  log "wrote $(find "$dir" -name '*.csv' | wc -l) traces to $dir"
}

main "$@"
