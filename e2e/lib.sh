# Helpers for e2e suites; source it from a suite's run script:
#   . "$(dirname "$0")/../lib.sh"
# It sets E2E_ROOT, REPO_ROOT, a scratch dir E2E_TMP, and stops at exit every
# process a suite started with start_bg.
set -euo pipefail
E2E_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$E2E_ROOT/.." && pwd)
SUITE=${SUITE:-$(basename "$(cd "$(dirname "$0")" && pwd)")}
E2E_TMP=$(mktemp -d "${TMPDIR:-/tmp}/drivemail-e2e-$SUITE.XXXXXX")
E2E_PIDS=()
cd "$REPO_ROOT" # suites and the demo's seed paths are relative to the repository root

log() { echo "e2e[$SUITE]: $*"; }
fail() {
	echo "e2e[$SUITE]: FAIL: $*" >&2
	exit 1
}

e2e_cleanup() {
	local pid
	for pid in "${E2E_PIDS[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in "${E2E_PIDS[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	if [ "${E2E_KEEP:-}" = "" ]; then rm -rf "$E2E_TMP"; else log "kept $E2E_TMP"; fi
}
trap e2e_cleanup EXIT

# start_bg NAME CMD...: runs CMD in the background, stdout to $E2E_TMP/NAME.out
# and stderr to $E2E_TMP/NAME.log; stopped at exit.
start_bg() {
	local name=$1
	shift
	"$@" >"$E2E_TMP/$name.out" 2>"$E2E_TMP/$name.log" &
	E2E_PIDS+=($!)
}

# wait_for_line FILE REGEX SECONDS: waits until FILE has a line matching REGEX.
wait_for_line() {
	local file=$1 re=$2 secs=$3 i
	for ((i = 0; i < secs * 10; i++)); do
		grep -qE "$re" "$file" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# show_logs NAME: prints a background process's output, for a failure.
show_logs() {
	echo "--- $1 stdout:" >&2
	cat "$E2E_TMP/$1.out" >&2 || true
	echo "--- $1 stderr (last 60 lines):" >&2
	tail -n 60 "$E2E_TMP/$1.log" >&2 || true
}

# use_node installs the versions pinned in e2e/package-lock.json when needed
# and puts their Node 22 and tools first on PATH. It uses `npm install`, not
# `npm ci`: vite (under the Inspector) lists optional dependencies that the
# registry has not always had (napi-windows-process-start-time appeared
# later), and `npm ci` refuses a lockfile without them as out of sync. The
# lockfile must come out unchanged; when the registry grows such a package,
# commit the lockfile npm install writes.
use_node() {
	command -v npm >/dev/null || fail "npm is not installed (apt-get install -y nodejs npm)"
	if [ ! -x "$E2E_ROOT/node_modules/.bin/node" ] ||
		[ "$E2E_ROOT/package-lock.json" -nt "$E2E_ROOT/node_modules/.package-lock.json" ]; then
		log "npm install from package-lock.json (Node 22, MCP Inspector, conformance suite)"
		cp "$E2E_ROOT/package-lock.json" "$E2E_TMP/package-lock.json"
		(cd "$E2E_ROOT" && npm install --no-audit --no-fund --loglevel=error) || fail "npm install failed"
		cmp -s "$E2E_ROOT/package-lock.json" "$E2E_TMP/package-lock.json" ||
			fail "npm install changed e2e/package-lock.json: the pinned versions no longer install as locked"
	fi
	export PATH="$E2E_ROOT/node_modules/.bin:$PATH"
	case "$(node --version)" in
	v22.*) ;;
	*) fail "want Node 22 from e2e/node_modules, got $(node --version)" ;;
	esac
}

# start_demo: runs `bin/drivemail serve --demo` on a free port, logging at
# info (the suites grep its request log for leaked secrets), and sets
# DEMO_URL, DEMO_TOKEN and EMULATOR_URL.
start_demo() {
	local bin="$REPO_ROOT/bin/drivemail"
	[ -x "$bin" ] || fail "$bin is missing: run make build (make e2e does)"
	start_bg demo "$bin" serve --demo --addr 127.0.0.1:0 --store "sqlite:$E2E_TMP/demo.db" --shutdown-grace 5s --log-level info
	if ! wait_for_line "$E2E_TMP/demo.out" '^listening on ' 60; then
		show_logs demo
		fail "drivemail serve --demo did not start"
	fi
	DEMO_URL=$(sed -n 's/^listening on //p' "$E2E_TMP/demo.out")
	DEMO_TOKEN=$(sed -n 's/^DEMO_TOKEN=//p' "$E2E_TMP/demo.out")
	EMULATOR_URL=$(sed -n 's/^emulator on \([^ ]*\).*/\1/p' "$E2E_TMP/demo.out")
	[ -n "$DEMO_TOKEN" ] || fail "no DEMO_TOKEN line from serve --demo"
	[ -n "$EMULATOR_URL" ] || fail "no 'emulator on' line from serve --demo"
	export DEMO_URL DEMO_TOKEN EMULATOR_URL
	log "demo server at $DEMO_URL"
}

# use_chromium installs Debian's chromium when it is missing (as root) and
# sets CHROMIUM.
use_chromium() {
	CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
	if [ ! -x "$CHROMIUM" ]; then
		[ "$(id -u)" = 0 ] || fail "$CHROMIUM is missing; install it as root: apt-get install -y chromium"
		log "apt-get install chromium"
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >"$E2E_TMP/apt.log" 2>&1 || {
			tail -n 30 "$E2E_TMP/apt.log" >&2
			fail "could not install chromium with apt-get"
		}
	fi
	export CHROMIUM
	log "$("$CHROMIUM" --version 2>/dev/null || echo "$CHROMIUM")"
}

# json EXPR: evaluates a JavaScript expression over the JSON on stdin (as `d`).
json() {
	node -e 'let s="";process.stdin.on("data",c=>s+=c).on("end",()=>{const d=JSON.parse(s);const v=('"$1"');process.stdout.write(typeof v==="string"?v:JSON.stringify(v))})'
}
