#!/usr/bin/env bash
# The README's walkthrough as a script: a task created by alice, its question answered in a
# separate request (another device, same task ID, no session), the result, and bob refused.
#
#   npm start                      # in another terminal: the demo on http://localhost:3000/mcp
#   examples/walkthrough.sh        # or: MCP_URL=http://127.0.0.1:4000/mcp examples/walkthrough.sh
#
# Needs bash and curl only (JSON fields are pulled out with grep/sed). Exits non-zero at the first
# step that does not answer as expected. WALKTHROUGH_TIMEOUT (seconds, default 120) bounds each
# polling loop; WALKTHROUGH_POLL (seconds, default 1) is the pause between polls.

set -euo pipefail

URL="${MCP_URL:-http://localhost:3000/mcp}"
TIMEOUT="${WALKTHROUGH_TIMEOUT:-120}"
POLL="${WALKTHROUGH_POLL:-1}"
VERSION="2026-07-28"
TASKS='"extensions":{"io.modelcontextprotocol/tasks":{}}'

fail() {
  echo "walkthrough: FAILED: $*" >&2
  exit 1
}

step() { printf '\n== %s\n' "$*"; }

# meta CAPABILITIES_JSON -> the _meta every 2026-07-28 request carries
meta() {
  printf '"_meta":{"io.modelcontextprotocol/protocolVersion":"%s","io.modelcontextprotocol/clientCapabilities":%s}' "$VERSION" "$1"
}

# rpc TOKEN METHOD MCP_NAME BODY -> prints the response body (JSON)
rpc() {
  local token=$1 method=$2 name=$3 body=$4
  local args=(-sS --max-time 30 -X POST "$URL"
    -H 'Content-Type: application/json'
    -H 'Accept: application/json, text/event-stream'
    -H "MCP-Protocol-Version: $VERSION"
    -H "Mcp-Method: $method"
    -H "Authorization: Bearer $token")
  if [[ -n $name ]]; then args+=(-H "Mcp-Name: $name"); fi
  curl "${args[@]}" -d "$body" || fail "$method: no answer from $URL (is taskgate running? try: npm start)"
}

# field NAME JSON -> the first "NAME":"value" string value in JSON (empty if absent)
field() {
  printf '%s' "$2" | grep -o "\"$1\":\"[^\"]*\"" | head -n 1 | sed 's/^"[^"]*":"\(.*\)"$/\1/' || true
}

tasks_get() { # tasks_get TOKEN TASK_ID
  rpc "$1" tasks/get "$2" "{\"jsonrpc\":\"2.0\",\"id\":\"get\",\"method\":\"tasks/get\",\"params\":{\"taskId\":\"$2\",$(meta "{$TASKS}")}}"
}

# poll_until STATUS TASK_ID -> polls tasks/get as alice; prints the last response on stdout
poll_until() {
  local want=$1 id=$2 deadline=$((SECONDS + TIMEOUT)) reply status
  while :; do
    reply=$(tasks_get alice "$id")
    status=$(field status "$reply")
    [[ -n $status ]] || fail "tasks/get: unexpected answer: $reply"
    echo "   status=$status  $(field statusMessage "$reply")" >&2
    if [[ $status == "$want" ]]; then
      printf '%s' "$reply"
      return 0
    fi
    case $status in
      completed | failed | cancelled) fail "task ended as '$status' while waiting for '$want': $reply" ;;
    esac
    ((SECONDS < deadline)) || fail "task did not reach '$want' within ${TIMEOUT}s; last: $reply"
    sleep "$POLL"
  done
}

step "server/discover (no session, no initialize)"
reply=$(rpc alice server/discover "" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{$(meta '{}')}}")
echo "$reply"
grep -q '"io.modelcontextprotocol/tasks"' <<<"$reply" || fail "server/discover does not advertise the tasks extension"

step "alice (phone): tools/call build_report, declaring the tasks extension and elicitation"
reply=$(rpc alice tools/call build_report "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"build_report\",\"arguments\":{\"month\":\"2026-09\"},$(meta "{\"elicitation\":{},$TASKS}")}}")
echo "$reply"
grep -q '"resultType":"task"' <<<"$reply" || fail "tools/call did not answer with a task"
TASK_ID=$(field taskId "$reply")
[[ -n $TASK_ID ]] || fail "no taskId in the tools/call answer"
echo "   taskId=$TASK_ID"

step "alice: polling tasks/get until the upstream asks its question"
reply=$(poll_until input_required "$TASK_ID")
echo "$reply"
grep -q '"charts":{"method":"elicitation/create"' <<<"$reply" || fail "no 'charts' question in inputRequests"

step "alice (laptop, a separate request): tasks/update answers 'charts'"
reply=$(rpc alice tasks/update "$TASK_ID" "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tasks/update\",\"params\":{\"taskId\":\"$TASK_ID\",\"inputResponses\":{\"charts\":{\"action\":\"accept\",\"content\":{\"charts\":true}}},$(meta "{$TASKS}")}}")
echo "$reply"
grep -q '"result":{"resultType":"complete"}' <<<"$reply" || fail "tasks/update was not acknowledged"

step "alice: polling tasks/get until the task completes"
reply=$(poll_until completed "$TASK_ID")
echo "$reply"
grep -q 'charts included' <<<"$reply" || fail "the report does not say the charts were included"

step "bob: tasks/get on alice's task"
reply=$(tasks_get bob "$TASK_ID")
echo "$reply"
grep -q '"code":-32602' <<<"$reply" || fail "bob was not refused with -32602"

printf '\nwalkthrough: OK (task %s: created, asked, answered, completed; refused to bob)\n' "$TASK_ID"
