# drivemail — every target works on a fresh machine with Go installed.
# The end-to-end suite also installs its npm packages (and chromium) itself.

GO      ?= go
PKGS    := ./...
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)

.PHONY: demo test e2e bench lint fmt build fuzz clean

## demo: run the server with an in-process, seeded Google emulator (no credentials needed).
## serve --demo keeps its store in a temporary folder it removes when it stops. The binary is
## bin/drivemail, as make build makes it (so the two share Go's build cache), run directly:
## `go run` exits 1 after Ctrl-C even when the program stopped cleanly, and make would report
## it. A first build compiles every dependency, SQLite (modernc.org/sqlite, C translated to Go,
## with its libc) for about half the time: minutes on a small machine, so say so first.
demo:
	@echo "== building bin/drivemail (the first build compiles every dependency: a few minutes on 2 cores; then seconds)"
	@$(MAKE) --no-print-directory -s build
	@bin/drivemail serve --demo

## test: lint, then every Go test, then one line that says whether the PostgreSQL store tests
## ran, against what, or why they skipped: go test shows a passing package's skip message
## only with -v, so store/postgres writes that line to $DRIVEMAIL_TEST_REPORT.
test: lint
	@echo "$(GO) test -count=1 -timeout 15m $(PKGS)"
	@report=$$(mktemp) && trap 'rm -f "$$report"' EXIT && \
	DRIVEMAIL_TEST_REPORT="$$report" $(GO) test -count=1 -timeout 15m $(PKGS); rc=$$?; cat "$$report"; exit $$rc

## e2e: the slower end-to-end suites (MCP Inspector, conformance, browser)
e2e: build
	./e2e/run

## bench: benchmarks that print figures as ratios against a baseline measured in the same run
bench: build
	./bench/run

## lint: no tracked file over 1 MiB outside a testdata/ folder (build output stays out of git),
## goimports (gofmt, and imports grouped stdlib, third party, this module), go vet,
## staticcheck (staticcheck.conf), and errcheck on product code (errcheck_excludes.txt says
## what it lets pass and why). The linters are pinned in lint.mod, apart from go.mod so they
## never move the product's dependencies; `go tool` fetches them through the module proxy on
## first use and runs them from the module cache after that.
## errcheck leaves out tests, bench/, e2e/ and the *test helper packages only tests import.
LINT     := $(GO) tool -modfile=lint.mod
GOFILES   = $$(find . -name '*.go' -not -path './.git/*' -not -path '*/node_modules/*')
lint:
	@big=$$(git ls-files -z 2>/dev/null | xargs -0 -r stat -c '%s %n' 2>/dev/null | \
		awk '$$1 > 1048576 && $$2 !~ /(^|\/)testdata\//'); \
	if [ -n "$$big" ]; then echo "tracked files over 1 MiB outside testdata/ (build output? git rm --cached it and ignore it):"; echo "$$big"; exit 1; fi
	@out=$$($(LINT) goimports -local github.com/drivemail/drivemail -l $(GOFILES)) || exit 1; \
	if [ -n "$$out" ]; then echo "goimports would change (make fmt rewrites them):"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(LINT) staticcheck $(PKGS)
	$(LINT) errcheck -ignoretests -exclude errcheck_excludes.txt \
		$$($(GO) list $(PKGS) | grep -v -E '/(bench|e2e)(/|$$)|/[a-z]+test$$')

## fmt: rewrite the Go files the way lint wants them (gofmt, grouped imports)
fmt:
	$(LINT) goimports -local github.com/drivemail/drivemail -w $(GOFILES)

## build: the binary at bin/drivemail
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/drivemail ./cmd/drivemail

clean:
	rm -rf bin
