# The one entry point for building, testing and benchmarking.
# `make test` is the command CI runs; it installs what it needs first.

DENO_VERSION := 2.9.6
TOOLS        := $(CURDIR)/.tools
DENO         := $(TOOLS)/node_modules/.bin/deno
GO           ?= go
GOFLAGS_TEST ?= -race -timeout 20m

export TRANQUIL_DENO ?= $(DENO)

.PHONY: all tools test check fmt vet build cross bench fuzz clean

all: test

# tools is idempotent: it installs Deno from npm into .tools/ and, when no
# chromium is on PATH and apt is usable, installs Debian's chromium.
tools: $(DENO)
	@if ! command -v chromium >/dev/null 2>&1 && [ -z "$$TRANQUIL_CHROMIUM" ]; then \
		if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
			echo "installing chromium with apt-get"; \
			apt-get update && apt-get install -y chromium; \
		else \
			echo "chromium not found and apt-get is not usable; install it and/or set TRANQUIL_CHROMIUM" >&2; \
		fi; \
	fi

$(DENO):
	mkdir -p $(TOOLS)
	cd $(TOOLS) && [ -f package.json ] || echo '{"private":true}' > $(TOOLS)/package.json
	cd $(TOOLS) && npm install --no-audit --no-fund --save-exact deno@$(DENO_VERSION)
	$(DENO) --version
	@touch $(DENO)

check: fmt vet build cross

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null; git ls-files --others --exclude-standard '*.go' 2>/dev/null)); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

build:
	CGO_ENABLED=0 $(GO) build ./...

cross:
	CGO_ENABLED=0 GOOS=darwin GOARCH=arm64 $(GO) build ./...
	CGO_ENABLED=0 GOOS=windows GOARCH=amd64 $(GO) build ./...

test: tools check
	$(GO) test $(GOFLAGS_TEST) ./...

# bench runs every benchmark harness; each prints its ratio against a peer
# measured in the same run. A harness is a directory bench/<name>/ holding an
# executable `run` (it may be its own Go module, so that peers such as
# chromedp stay out of the library's go.mod).
bench: tools
	@set -e; for r in bench/*/run; do \
		[ -x "$$r" ] || continue; \
		echo "== $$r"; (cd "$$(dirname $$r)" && ./run); \
	done

# fuzz runs each fuzz target briefly; the committed corpora run in `make test`.
FUZZTIME ?= 20s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
		done; \
	done

clean:
	rm -rf $(TOOLS)
