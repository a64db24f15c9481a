# drivemail — every target works on a fresh machine with Go installed.
# The end-to-end suite also installs its npm packages (and chromium) itself.

GO      ?= go
PKGS    := ./...
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)

.PHONY: demo test e2e bench lint build fuzz clean

## demo: run the server with an in-process, seeded Google emulator (no credentials needed).
## Each run has its own store, removed when it stops: a demo's Google tokens come from its
## own emulator and are sealed with a key made for that run, so two demos sharing one store
## would break each other's sign-in. The binary is built first and run directly: `go run`
## exits 1 after Ctrl-C even when the program stopped cleanly, and make would report it.
demo:
	@dir=$$(mktemp -d "$${TMPDIR:-/tmp}/drivemail-demo.XXXXXX") && trap 'rm -rf "$$dir"' EXIT INT TERM && \
	$(GO) build -ldflags "$(LDFLAGS)" -o "$$dir/drivemail" ./cmd/drivemail && \
	"$$dir/drivemail" serve --demo --store "sqlite:$$dir/demo.db"

## test: lint, then every Go test (PostgreSQL tests skip with a message where none runs)
test: lint
	$(GO) test -count=1 -timeout 15m $(PKGS)

## e2e: the slower end-to-end suites (MCP Inspector, conformance, browser)
e2e: build
	./e2e/run

## bench: benchmarks that print figures as ratios against a baseline measured in the same run
bench: build
	./bench/run

## lint: gofmt check and go vet
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

## build: the binary at bin/drivemail
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/drivemail ./cmd/drivemail

clean:
	rm -rf bin
