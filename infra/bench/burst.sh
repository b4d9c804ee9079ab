#!/usr/bin/env bash
# The burst run (make bench-burst, issue 21): the local stack on the DynamoDB adapter against a DynamoDB
# Local started here (not Pebble), so authentication, the rate leases and the reads go through the
# cloud's adapter; then BURST_REQUESTS GET /api/v1/notes from BURST_KEYS keys (each its own account and
# channel, made with infra/admin), BURST_CONCURRENCY in flight. The driver (load burst) prints p50/p99 and,
# per rate-limit window, the most 2xx one key got, and fails on any answer but 2xx and 429 or on a key with
# more 2xx in a window than its limit.
#
# Knobs (environment): BURST_REQUESTS (10000), BURST_KEYS (50), BURST_CONCURRENCY (32), BURST_LIMIT (the
# stack's CSS_RATE_OTHER_PER_MIN: 150, so each key's 200 requests meet its limit), BURST_STACK (a local
# stack binary to run instead of this tree's, e.g. another build's, for a side-by-side figure).
set -euo pipefail

bench_name=burst.sh
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

requests=${BURST_REQUESTS:-10000}
nkeys=${BURST_KEYS:-50}
concurrency=${BURST_CONCURRENCY:-32}
limit=${BURST_LIMIT:-150}

echo "building the local stack, the admin command and the load driver..."
stack=${BURST_STACK:-$(local_stack)}
go build -trimpath -o "$tmp/admin" ./infra/admin
go build -trimpath -o "$tmp/load" ./infra/bench/load

start_dynamodb
export CSS_DYNAMODB_ENDPOINT=$endpoint CSS_TABLE_NAME=css-burst AWS_REGION=us-east-1
export AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local

port=$("$tmp/load" freeport)
base="http://127.0.0.1:$port"
bench_log=$tmp/local.log
PORT=$port CSS_DATA_DIR="$tmp/data" CSS_RATE_OTHER_PER_MIN=$limit start_bg "$bench_log" "$stack"
wait_for "$base/api/v1/health"

echo "creating $nkeys keys (one account and channel each) on DynamoDB Local..."
for ((i = 0; i < nkeys; i++)); do
	"$tmp/admin" create-key --channel-name "burst $i" >>"$tmp/keys.txt" 2>/dev/null || die "create-key failed"
done

echo "running: $requests requests, $nkeys keys, $concurrency in flight, limit $limit per key per minute"
"$tmp/load" burst -url "$base/api/v1/notes" -keys "$tmp/keys.txt" -requests "$requests" \
	-concurrency "$concurrency" -limit "$limit"
