#!/bin/sh
# upload.sh: put a local file into the user's Google Drive through drivemail
# and print its id and mcp-file:// handle, for send_email's attachments.
#
#   upload.sh --describe FILE     print {"name","size","sha256"} for request_upload
#   upload.sh FILE UPLOAD_URL     send FILE to the one-time URL request_upload gave
#   upload.sh FILE                send FILE to $DRIVEMAIL_URL/upload with the
#                                 bearer token in $DRIVEMAIL_TOKEN
#
# On success it prints two lines, file_id=… and handle=…, and exits 0. On a
# refusal it prints drivemail's sentence (what was wrong, what to do) and
# exits 1. Needs only sh, curl and sha256sum (or shasum).
set -eu

die() { printf 'upload.sh: %s\n' "$*" >&2; exit 1; }

usage() {
	sed -n '2,8s/^# \{0,1\}//p' "$0" >&2
	exit 2
}

sha256_of() {
	if command -v sha256sum >/dev/null 2>&1; then
		sha256sum <"$1" | cut -d" " -f1
	elif command -v shasum >/dev/null 2>&1; then
		shasum -a 256 <"$1" | cut -d" " -f1
	else
		die "neither sha256sum nor shasum is installed"
	fi
}

# json_string FILE-NAME: the name as a JSON string (quotes, backslashes and
# control characters escaped).
json_string() {
	printf '%s' "$1" | awk 'BEGIN { ORS = "" }
	{
		if (NR > 1) printf "\\n"
		gsub(/\\/, "\\\\"); gsub(/"/, "\\\""); gsub(/\t/, "\\t"); gsub(/\r/, "\\r")
		print
	}
	END { }' | { printf '"'; cat; printf '"'; }
}

# field NAME JSON: the value of a string field in drivemail's flat JSON
# answer, with \" and \\ unescaped (enough for ids, handles and sentences).
field() {
	printf '%s' "$2" | awk -v key="\"$1\"" '
	{
		i = index($0, key)
		if (i == 0) next
		s = substr($0, i + length(key))
		sub(/^[ \t]*:[ \t]*"/, "", s)
		out = ""
		for (j = 1; j <= length(s); j++) {
			c = substr(s, j, 1)
			if (c == "\\") { j++; out = out substr(s, j, 1); continue }
			if (c == "\"") break
			out = out c
		}
		print out
		exit
	}'
}

[ $# -ge 1 ] || usage
if [ "$1" = "--describe" ]; then
	[ $# -eq 2 ] || usage
	[ -f "$2" ] || die "$2 is not a file"
	size=$(wc -c <"$2" | tr -d ' ')
	printf '{"name": %s, "size": %s, "sha256": "%s"}\n' "$(json_string "$(basename "$2")")" "$size" "$(sha256_of "$2")"
	exit 0
fi

file=$1
[ -f "$file" ] || die "$file is not a file"
command -v curl >/dev/null 2>&1 || die "curl is not installed"
out=$(mktemp "${TMPDIR:-/tmp}/drivemail-upload.XXXXXX")
trap 'rm -f "$out"' EXIT

if [ $# -ge 2 ]; then
	# A one-time URL from request_upload: PUT the raw file, no token needed.
	# -g: [ ] and { } in a file name are not curl glob patterns here.
	status=$(curl -gsS -o "$out" -w '%{http_code}' -T "$file" -- "$2") || die "could not reach $2"
else
	[ -n "${DRIVEMAIL_URL:-}" ] || die "give the upload_url from request_upload, or set DRIVEMAIL_URL and DRIVEMAIL_TOKEN"
	[ -n "${DRIVEMAIL_TOKEN:-}" ] || die "DRIVEMAIL_TOKEN is not set (a drivemail access token)"
	# curl's -F reads ; and , in a file name as options unless it is quoted.
	quoted=$(printf '%s' "$file" | sed 's/[\\"]/\\&/g')
	status=$(printf 'header = "Authorization: Bearer %s"\n' "$DRIVEMAIL_TOKEN" |
		curl -gsS -o "$out" -w '%{http_code}' -K - -F "file=@\"$quoted\"" -- "${DRIVEMAIL_URL%/}/upload") ||
		die "could not reach $DRIVEMAIL_URL"
fi

body=$(cat "$out")
if [ "$status" != 201 ]; then
	msg=$(field error "$body")
	die "drivemail refused the upload (HTTP $status): ${msg:-$body}"
fi
printf 'file_id=%s\nhandle=%s\n' "$(field file_id "$body")" "$(field handle "$body")"
