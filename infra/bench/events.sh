#!/usr/bin/env bash
# Event-to-first-attempt latency on the local stack (make bench-events): starts the stack on a fresh data
# folder with a development key and no practical rate limit, then runs infra/bench/events against it.
# Knobs (environment): EVENTS_RATE (100 per second), EVENTS_DURATION (30s), EVENTS_MAX_P99 (100ms; 0 does
# not judge the p99, as the bench smoke runs it).
set -euo pipefail

bench_name=events.sh
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

key=sk-css-0123456789abcdef0123456789abcdef
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
# -trimpath as the other scripts build: the packages compile once for all of them.
stack=$(local_stack)
go build -trimpath -o "$tmp/events" ./infra/bench/events
bench_log=$tmp/local.log
CSS_DATA_DIR="$tmp/data" PORT=$port CSS_DEV_API_KEYS=$key CSS_RATE_OTHER_PER_MIN=1000000 CSS_LOG_LEVEL=warn \
	start_bg "$bench_log" "$stack"
wait_for "http://127.0.0.1:$port/api/v1/health"
"$tmp/events" -base "http://127.0.0.1:$port" -key "$key" -rate "${EVENTS_RATE:-100}" \
	-duration "${EVENTS_DURATION:-30s}" -max-p99 "${EVENTS_MAX_P99:-100ms}"
