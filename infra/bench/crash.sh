#!/usr/bin/env bash
# kill -9 under acknowledged writes (make bench-crash): builds the local stack and infra/bench/crash, which
# starts the stack on a fresh data folder, kills it with SIGKILL 3 times while writes go on and checks that
# nothing acknowledged was lost. Arguments go to the harness: `infra/bench/crash.sh -tiny` is the smoke run
# (about 10 s of writes); -seed N repeats a run's kill moments; CRASH_PORT picks the stack's port.
set -euo pipefail

bench_name=crash.sh
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

port=${CRASH_PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')}
go build -o "$tmp/local-stack" ./functions/local
go build -o "$tmp/crash" ./infra/bench/crash
bench_log=$tmp/data.log
"$tmp/crash" -stack "$tmp/local-stack" -data "$tmp/data" -port "$port" "$@"
