# shellcheck shell=bash
# Sourced by dynamodb-local and elasticmq: fetch an emulator from Maven Central (pom.xml), start it in the
# background on a kernel-chosen 127.0.0.1 port, stop it. The sourcing script sets:
#   EMU_NAME     the pom.xml profile, and the folder under .cache/
#   EMU_INPUTS   files besides pom.xml whose content decides whether the cache is current
#   EMU_MARK     a word of the emulator's command line, checked before a recorded pid is signalled
# and defines:
#   emu_prepare  run after Maven, inside the fetch lock: whatever else the emulator needs in $EMU_CACHE
#   emu_command  sets the array EMU_CMD that runs the emulator in the foreground
#   emu_port     reads the emulator's output on stdin, prints the bound port once it has been logged
#   emu_probe    succeeds when the endpoint $1 answers a real request
# Environment: EMULATOR_OWNER_PID (the emulator is stopped when that process exits, e.g. a test binary
# killed by a timeout), EMULATOR_START_TIMEOUT (seconds, default 120).

set -euo pipefail
shopt -s nullglob

EMU_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
EMU_CACHE=$EMU_DIR/.cache/$EMU_NAME
EMU_RUN=$EMU_CACHE/run

emu_die() {
	echo "$EMU_NAME: $*" >&2
	exit 1
}

emu_fetch() {
	command -v java >/dev/null || emu_die "java not found (Java 17 or later is needed)"
	command -v mvn >/dev/null || emu_die "mvn not found"
	mkdir -p "$EMU_CACHE"
	# Test binaries of several packages may start emulators at the same moment: one fetch at a time.
	exec 9>"$EMU_CACHE/.fetch.lock"
	if command -v flock >/dev/null; then flock 9; fi
	local want have=""
	want=$(cat "$EMU_DIR/pom.xml" "${EMU_INPUTS[@]}" | sha256sum | cut -d' ' -f1)
	if [[ -f $EMU_CACHE/.fetched ]]; then have=$(<"$EMU_CACHE/.fetched"); fi
	if [[ $want != "$have" ]]; then
		echo "$EMU_NAME: fetching from Maven Central into $EMU_CACHE" >&2
		rm -rf "$EMU_CACHE/lib" "$EMU_CACHE/.fetched"
		mvn -q -B -Dstyle.color=never -f "$EMU_DIR/pom.xml" -P "$EMU_NAME" dependency:copy-dependencies >&2 ||
			emu_die "fetch from Maven Central failed"
		emu_prepare
		echo "$want" >"$EMU_CACHE/.fetched"
	fi
	exec 9>&-
}

# emu_alive PID: the process exists and has not finished exiting. Its zombie may linger unreaped; "Zl" is
# a JVM whose main thread is gone while the others (and the listening socket) are still there.
emu_alive() {
	local stat
	stat=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
	[[ $stat != Z* || $stat == *l* ]]
}

# emu_abort PID LOG MESSAGE: kill a start that went wrong, show its output, fail.
emu_abort() {
	kill -KILL "$1" 2>/dev/null || true
	echo "---- $EMU_NAME output ----" >&2
	cat "$2" >&2
	echo "----" >&2
	rm -f "$2"
	emu_die "$3"
}

emu_start() {
	emu_fetch
	mkdir -p "$EMU_RUN"
	local log pid port="" endpoint timeout=${EMULATOR_START_TIMEOUT:-120}
	log=$(mktemp "$EMU_RUN/starting.XXXXXX")
	emu_command
	"${EMU_CMD[@]}" >"$log" 2>&1 </dev/null &
	pid=$!
	local deadline=$((SECONDS + timeout))
	until port=$(emu_port <"$log") && [[ -n $port ]]; do
		emu_alive "$pid" || emu_abort "$pid" "$log" "exited before listening"
		((SECONDS < deadline)) || emu_abort "$pid" "$log" "not listening after ${timeout}s"
		sleep 0.2
	done
	endpoint=http://127.0.0.1:$port
	until emu_probe "$endpoint"; do
		emu_alive "$pid" || emu_abort "$pid" "$log" "exited before answering at $endpoint"
		((SECONDS < deadline)) || emu_abort "$pid" "$log" "not answering at $endpoint after ${timeout}s"
		sleep 0.2
	done
	mv "$log" "$EMU_RUN/$port.log"
	echo "$pid" >"$EMU_RUN/$port.pid"
	if [[ -n ${EMULATOR_OWNER_PID:-} ]]; then
		emu_watch "$EMULATOR_OWNER_PID" "$pid" "$port"
	fi
	echo "$endpoint"
}

# emu_watch OWNER PID PORT: stop the emulator once its owner is gone.
emu_watch() {
	(
		while kill -0 "$1" 2>/dev/null && emu_alive "$2"; do sleep 1; done
		# Stopped by someone else meanwhile, maybe with the port reused: leave the new one alone.
		if [[ -f $EMU_RUN/$3.pid && $(<"$EMU_RUN/$3.pid") == "$2" ]]; then emu_stop "$3"; fi
	) >/dev/null 2>&1 </dev/null &
}

# emu_stop [ENDPOINT|PORT]: stop that emulator, or every one this script started.
emu_stop() {
	local files=() f port
	if [[ -z ${1:-} ]]; then
		files=("$EMU_RUN"/*.pid)
	else
		port=${1%/}
		port=${port##*:}
		[[ $port =~ ^[0-9]+$ ]] || emu_die "stop: not an endpoint or port: $1"
		if [[ -f $EMU_RUN/$port.pid ]]; then files=("$EMU_RUN/$port.pid"); fi
	fi
	for f in "${files[@]}"; do
		emu_kill "$(<"$f")"
		rm -f "$f" "${f%.pid}.log"
	done
}

emu_kill() {
	local pid=$1 i
	# A pid file can outlive its process (reboot, kill -9) and the pid be reused: check what it runs.
	[[ $(ps -o args= -p "$pid" 2>/dev/null) == *"$EMU_MARK"* ]] || return 0
	kill -TERM "$pid" 2>/dev/null || return 0
	for ((i = 0; i < 100; i++)); do
		emu_alive "$pid" || return 0
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
}

emu_main() {
	case "${1:-}" in
	fetch) emu_fetch ;;
	start) emu_start ;;
	stop) emu_stop "${2:-}" ;;
	*)
		echo "usage: $(basename "$0") fetch | start | stop [ENDPOINT|PORT]" >&2
		exit 2
		;;
	esac
}
