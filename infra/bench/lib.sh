# Shared by the benchmark scripts (sourced, not run): the repository as the working folder, a temporary
# folder ($tmp) removed on exit with every process started in the background (start_bg) and the DynamoDB
# Local one may start (start_dynamodb), die, wait_for, and local_stack. The sourcing script sets bench_name first (for
# its messages) and may set bench_log to a log whose last lines die prints.

cd "$(dirname "${BASH_SOURCE[0]}")/../.."

tmp=$(mktemp -d)
pids=()
endpoint=""
bench_log=${bench_log:-}

bench_cleanup() {
	local pid
	for pid in "${pids[@]}"; do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	if [[ -n $endpoint ]]; then
		infra/emulators/dynamodb-local stop "$endpoint" >/dev/null || true
	fi
	rm -rf "$tmp"
}
trap bench_cleanup EXIT

die() {
	echo "${bench_name:-bench}: $*" >&2
	if [[ -n $bench_log && -f $bench_log ]]; then
		echo "--- last lines of $(basename "$bench_log"):" >&2
		tail -n 20 "$bench_log" >&2
	fi
	exit 1
}

# start_bg LOG COMMAND...: runs COMMAND in the background, its output in LOG, stopped on exit.
start_bg() {
	local log=$1
	shift
	"$@" >"$log" 2>&1 &
	pids+=($!)
}

# wait_for URL: until it answers 2xx, for at most 30 s.
wait_for() {
	local i
	for ((i = 0; i < 300; i++)); do
		curl -fsS -o /dev/null "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	die "$1 did not come up"
}

# local_stack: prints the local stack binary to run: BENCH_STACK when set (the bench smoke builds it once
# for every script), else this tree's, built into $tmp.
local_stack() {
	if [[ -n ${BENCH_STACK:-} ]]; then
		echo "$BENCH_STACK"
		return
	fi
	go build -trimpath -o "$tmp/local" ./functions/local
	echo "$tmp/local"
}

# start_dynamodb: a DynamoDB Local (infra/emulators) in $endpoint, stopped on exit.
start_dynamodb() {
	endpoint=$(infra/emulators/dynamodb-local start)
}
