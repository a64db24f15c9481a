# The "=== SUMMARY ===" part of a conformance suite's output, with each
# failing scenario the baseline lists shown as expected ("~ … expected")
# rather than as a failure ("✗"), and without the suite's own list of
# expected failures, which would then say it twice. The suite prints a ✗
# for every failing scenario, expected or not, so a passing run started
# with a screenful of them.
#   awk -v baseline=e2e/conformance/baseline.yml -f e2e/summary.awk OUTPUT
BEGIN {
	while ((getline line < baseline) > 0)
		if (match(line, /^  - [a-z0-9-]+/))
			expected[substr(line, 5, RLENGTH - 4)] = 1
	close(baseline)
}
/=== SUMMARY ===/ { on = 1 }
!on { next }
/Expected failures \(in baseline\)/ { skip = 1; next }
skip && /^  ~ / { next }
{ skip = 0 }
/^✗ / {
	name = $2
	sub(/:$/, "", name)
	if (name in expected) {
		sub(/^✗/, "~")
		$0 = $0 " (expected: " baseline ")"
	}
}
{ print }
