#!/usr/bin/env bash
# Request durations for the cost table (infra/bench/README.md, "Cost per million requests"): the local
# stack on the DynamoDB adapter against a DynamoDB Local started here, one request in flight, so each
# request's time is what one Lambda invocation would be billed for it (its table calls wait on the
# emulator's latency, a few ms each, like DynamoDB's). Four kinds: a read (GET /api/v1/notes), a write
# (POST /api/v1/notes), a generation (POST /api/v1/generate/titles, offline model: the pipeline without a
# model's latency) and an MCP tool call (tools/call get_my_videos).
#
#   infra/bench/requests.sh [NAME=STACK_BINARY ...]
#
# Without arguments it times this tree's stack (or BENCH_STACK's, lib.sh); give several (e.g. before=/tmp/old-local after=...) to
# time them side by side, round by round. Knobs: REQ_N requests per kind per round (200), REQ_ROUNDS (3).
set -euo pipefail

bench_name=requests.sh
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

n=${REQ_N:-200}
rounds=${REQ_ROUNDS:-3}

echo "building the admin command and the load driver..."
go build -trimpath -o "$tmp/admin" ./infra/admin
go build -trimpath -o "$tmp/load" ./infra/bench/load
stacks=("$@")
if [[ ${#stacks[@]} -eq 0 ]]; then
	stacks=("stack=$(local_stack)")
fi

start_dynamodb
export CSS_DYNAMODB_ENDPOINT=$endpoint AWS_REGION=us-east-1

targets=""
i=0
for spec in "${stacks[@]}"; do
	name=${spec%%=*}
	bin=${spec#*=}
	table="css-requests-$i"
	port=$("$tmp/load" freeport)
	base="http://127.0.0.1:$port"
	bench_log=$tmp/local-$i.log
	PORT=$port CSS_DATA_DIR="$tmp/data-$i" CSS_TABLE_NAME=$table \
		CSS_RATE_OTHER_PER_MIN=1000000 CSS_RATE_GENERATION_PER_MIN=1000000 start_bg "$bench_log" "$bin"
	wait_for "$base/api/v1/health"
	key=$(CSS_TABLE_NAME=$table "$tmp/admin" create-key --channel-name "requests" 2>/dev/null) || die "create-key failed"
	auth="\"Authorization\": \"Bearer $key\""
	json='"Content-Type": "application/json"'
	targets+="
  {\"name\": \"$name read\", \"method\": \"GET\", \"url\": \"$base/api/v1/notes\", \"status\": 200, \"headers\": {$auth}},
  {\"name\": \"$name write\", \"method\": \"POST\", \"url\": \"$base/api/v1/notes\", \"status\": 201, \"headers\": {$auth, $json},
   \"body\": \"{\\\"category\\\":\\\"general\\\",\\\"content\\\":\\\"a note\\\"}\", \"keys\": [\"$key\"], \"perKey\": 500,
   \"reset\": {\"list\": \"$base/api/v1/notes\", \"field\": \"notes\", \"delete\": \"$base/api/v1/notes/{id}\"}},
  {\"name\": \"$name generation\", \"method\": \"POST\", \"url\": \"$base/api/v1/generate/titles\", \"status\": 200, \"headers\": {$auth, $json},
   \"body\": \"{\\\"title\\\":\\\"planning videos\\\",\\\"type\\\":\\\"how-to\\\",\\\"videoType\\\":\\\"Long\\\"}\"},
  {\"name\": \"$name mcp tool call\", \"method\": \"POST\", \"url\": \"$base/mcp\", \"status\": 200,
   \"headers\": {$auth, $json, \"Accept\": \"application/json, text/event-stream\"},
   \"body\": \"{\\\"jsonrpc\\\":\\\"2.0\\\",\\\"id\\\":1,\\\"method\\\":\\\"tools/call\\\",\\\"params\\\":{\\\"name\\\":\\\"get_my_videos\\\",\\\"arguments\\\":{}}}\"},"
	i=$((i + 1))
done
printf '{"targets": [%s\n]}\n' "${targets%,}" >"$tmp/plan.json"

echo "running: $rounds rounds x $n requests per kind, one in flight"
"$tmp/load" run -targets "$tmp/plan.json" -requests "$n" -rounds "$rounds" -concurrency 1 -warmup 20
