# The one entry point for building, testing and benchmarking.
# `make test` is the command CI runs; it installs what it needs first.

DENO_VERSION := 2.9.6
TOOLS        := $(CURDIR)/.tools
DENO         := $(TOOLS)/node_modules/.bin/deno
# Component libraries the browser tests build their pages from, served on
# loopback (cdp/libs_test.go); pinned, installed from npm.
TESTLIBS     := $(TOOLS)/testlibs
TESTLIB_PKGS := tom-select@2.4.3 flatpickr@4.6.13 imask@7.6.1 choices.js@11.2.4 select2@4.1.0 jquery@3.7.1 \
                vue@3.5.45 quill@2.0.3 intl-tel-input@29.5.1 @shoelace-style/shoelace@2.20.1 \
                @material/web@2.5.0 @fluentui/web-components@3.1.3 @microsoft/fast-element@3.0.3 \
                @ionic/core@9.0.5 @ui5/webcomponents@2.26.0 \
                virtual-select-plugin@1.1.0 @tanstack/virtual-core@3.19.13 @lit-labs/virtualizer@2.1.1 nouislider@15.8.1 rangeslider.js@2.3.3 \
                materialize-css@1.0.0 bulma-switch@2.0.4 \
                react@19.3.1 react-dom@19.3.1 react-aria-components@1.22.1 @mui/x-date-pickers@9.18.0 @mui/material@9.6.0 \
                @mui/system@9.6.0 @emotion/react@11.14.0 @emotion/styled@11.14.1 dayjs@1.11.23 react-select@5.10.2 primereact@10.9.9
DATEFIELD_SRC := $(wildcard $(CURDIR)/cdp/testdata/datefield/*.js)
DATEFIELD_BUNDLE := $(TESTLIBS)/bundles/datefield.bundle.js
GO           ?= go
STATICCHECK_VERSION := v0.8.2
GOFLAGS_TEST ?= -race -timeout 20m

export TRANQUIL_DENO ?= $(DENO)

.PHONY: all tools test check fmt vet lint build cross bench demo fuzz clean test-windows

all: test

# tools is idempotent: it installs Deno from npm into .tools/ and, when no
# chromium is on PATH and apt is usable, installs Debian's chromium.
# The stamp names the package list, so a changed list installs again.
TESTLIB_STAMP = $(TESTLIBS)/.installed-$(shell echo '$(TESTLIB_PKGS)' | cksum | cut -d' ' -f1)

# The differential tests hold goto and the locators to Playwright's on the
# same Chromium: playwright-core and puppeteer-core (neither downloads a
# browser) from bench/browser's lock.
PEERS       := $(CURDIR)/bench/browser
PEERS_STAMP  = $(PEERS)/node_modules/.installed-$(shell cksum < $(PEERS)/package-lock.json | cut -d' ' -f1)
SDK_DENO_DIR := $(TOOLS)/deno-dir
SDK_DEPS_STAMP = $(SDK_DENO_DIR)/.cached-$(shell cksum < runner/sdk/deno.json | cut -d' ' -f1)

tools: $(DENO) $(SDK_DEPS_STAMP) $(TESTLIB_STAMP) $(DATEFIELD_BUNDLE) $(PEERS_STAMP)
	@if ! command -v chromium >/dev/null 2>&1 && [ -z "$$TRANQUIL_CHROMIUM" ]; then \
		if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
			echo "installing chromium with apt-get"; \
			apt-get update && apt-get install -y chromium; \
		else \
			echo "chromium not found and apt-get is not usable; install it and/or set TRANQUIL_CHROMIUM" >&2; \
		fi; \
	fi

$(TESTLIB_STAMP):
	mkdir -p $(TESTLIBS)
	cd $(TESTLIBS) && [ -f package.json ] || echo '{"private":true}' > $(TESTLIBS)/package.json
	cd $(TESTLIBS) && npm install --no-audit --no-fund --ignore-scripts --save-exact $(TESTLIB_PKGS)
	@touch $@

# The React test pages' module: cdp/testdata/datefield, which mounts
# React Aria's and MUI X's date fields and the comboboxes of the
# pass-through tests, bundled with the packages above
# into one browser module (deno bundle; nothing is fetched but from npm);
# DATEFIELD_* are set above, before the tools rule names them.
$(DATEFIELD_BUNDLE): $(DATEFIELD_SRC) $(TESTLIB_STAMP) $(DENO)
	mkdir -p $(TESTLIBS)/bundles
	cp $(DATEFIELD_SRC) $(TESTLIBS)/bundles/
	cd $(TESTLIBS) && $(DENO) bundle --platform browser --minify --node-modules-dir=manual --no-remote --no-lock --no-config \
		-o bundles/datefield.bundle.tmp.js bundles/datefield.js && mv bundles/datefield.bundle.tmp.js bundles/datefield.bundle.js

$(PEERS_STAMP):
	cd $(PEERS) && PUPPETEER_SKIP_DOWNLOAD=1 PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --silent
	@touch $@

# The SDK's npm dependency (npm:capnweb, as runner/sdk/deno.json pins it)
# in a deno cache of the tools' own: bench/sdk/run seeds the cache its
# runs load it from (--cached-only) out of this one, so that a machine
# whose DENO_DIR is empty downloads nothing while it measures.
$(SDK_DEPS_STAMP): $(DENO) runner/sdk/deno.json
	DENO_DIR=$(SDK_DENO_DIR) $(DENO) cache --no-lock --config=runner/sdk/deno.json runner/sdk/main.ts
	@touch $@

$(DENO):
	mkdir -p $(TOOLS)
	cd $(TOOLS) && [ -f package.json ] || echo '{"private":true}' > $(TOOLS)/package.json
	cd $(TOOLS) && npm install --no-audit --no-fund --save-exact deno@$(DENO_VERSION)
	$(DENO) --version
	@touch $(DENO)

check: fmt vet lint build cross

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null; git ls-files --others --exclude-standard '*.go' 2>/dev/null)); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...
	GOOS=windows $(GO) vet ./...
	GOOS=darwin $(GO) vet ./...

# lint runs a pinned staticcheck (fetched through the Go module proxy, kept
# out of go.mod) with its default checks; it must report nothing.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
lint:
	CGO_ENABLED=0 $(GO) run $(STATICCHECK) ./...

build:
	CGO_ENABLED=0 $(GO) build ./...

cross:
	CGO_ENABLED=0 GOOS=darwin GOARCH=arm64 $(GO) build ./...
	CGO_ENABLED=0 GOOS=windows GOARCH=amd64 $(GO) build ./...

test: tools check
	$(GO) test $(GOFLAGS_TEST) ./...

# demo is the one command to see the library work: the example host launches
# a headless Chromium, serves the demo site on 127.0.0.1, and runs two example
# scripts, approving their permissions non-interactively (it says so).
DEMO_DATA ?= $(TOOLS)/demo-data
demo: tools
	$(GO) run ./examples/host --data $(DEMO_DATA) run --approve --serve examples/site examples/scripts/page-info.ts
	$(GO) run ./examples/host --data $(DEMO_DATA) run --approve --serve examples/site examples/scripts/fill-signup.ts

# bench runs every benchmark harness; each prints its ratio against a peer
# measured in the same run. A harness is a directory bench/<name>/ holding an
# executable `run` (it may be its own Go module, so that peers such as
# chromedp stay out of the library's go.mod). Then it prints one table of
# every ratio, read from the harnesses' output: Go `Benchmark…` lines (each
# metric whose unit names a ratio) and the `ratio …` lines of the others.
# Every harness runs even when one fails; bench fails at the end if any did.
bench: tools
	@out=$$(mktemp); trap 'rm -f "$$out"' EXIT; \
	for r in bench/*/run; do \
		[ -x "$$r" ] || continue; \
		echo "== $$r" | tee -a "$$out"; \
		{ (cd "$$(dirname $$r)" && ./run) 2>&1; echo "harness exit status $$?"; } | tee -a "$$out" | grep -v '^harness exit status 0$$' || true; \
	done; \
	echo; echo "Benchmark summary, measured $$(date -u +%Y-%m-%d) on $$(uname -sm), $$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo ?) CPUs"; \
	awk "$$BENCH_SUMMARY" "$$out"; \
	! grep -q '^harness exit status [1-9]' "$$out"

# BENCH_SUMMARY turns the harnesses' output into the table. Peers and targets
# of Go benchmarks are named here; the other harnesses print their own.
define BENCH_SUMMARY
function row(fig, peer, ratio, target) { printf "| %-44s | %-40s | %6s | %-8s |\n", fig, peer, ratio, target }
BEGIN {
	peer["Handshake ratio"] = "bare WebSocket connect";                 target["Handshake ratio"] = "<= 1.5"
	peer["BrowserPeers evaluate-ratio"] = "puppeteer-core page.evaluate"; target["BrowserPeers evaluate-ratio"] = "<= 1.5"
	peer["BrowserPeers fill-ratio"] = "Playwright locator.fill";         target["BrowserPeers fill-ratio"] = "<= 2"
	peer["EvaluateShare number-script-ratio"] = "puppeteer-core page.evaluate, a number"; target["EvaluateShare number-script-ratio"] = "<= 1.0"
	peer["EvaluateShare object-script-ratio"] = "puppeteer-core page.evaluate, an object"; target["EvaluateShare object-script-ratio"] = "-"
	peer["EvaluateShare number-cdp-ratio"] = "puppeteer-core page.evaluate, a number, from Go"; target["EvaluateShare number-cdp-ratio"] = "-"
	peer["EvaluateShare object-cdp-ratio"] = "puppeteer-core page.evaluate, an object, from Go"; target["EvaluateShare object-cdp-ratio"] = "-"
	peer["ExpectVsRead p50-ratio"] = "tab.text, then compare in the script"; target["ExpectVsRead p50-ratio"] = "<= 1.2"
	peer["RoleLookup p50-ratio"] = "Playwright getByRole, 10,000 elements"; target["RoleLookup p50-ratio"] = "<= 1.0"
	peer["ScopedLookup p50-ratio"] = "Playwright row.getByRole, 1,000-row table"; target["ScopedLookup p50-ratio"] = "<= 1.0"
	peer["LocatorDifferential p50-ratio"] = "Playwright locators, 1,000 targets"; target["LocatorDifferential p50-ratio"] = "<= 1.0"
	peer["LocatorDifferential agree-ratio"] = "Playwright locators, 1,000 targets"; target["LocatorDifferential agree-ratio"] = "-"
	peer["NavigationDifferential p50-ratio"] = "Playwright page.goto, 30+ pages"; target["NavigationDifferential p50-ratio"] = "<= 1.5"
	peer["NavigationDifferential agree-ratio"] = "Playwright page.goto, 30+ pages"; target["NavigationDifferential agree-ratio"] = "-"
	peer["PointerVerbs hover-ratio"] = "Playwright locator.hover"; target["PointerVerbs hover-ratio"] = "<= 1.0"
	peer["PointerVerbs dblclick-ratio"] = "Playwright locator.dblclick"; target["PointerVerbs dblclick-ratio"] = "<= 1.0"
	peer["PointerVerbs dragTo-ratio"] = "Playwright locator.dragTo"; target["PointerVerbs dragTo-ratio"] = "<= 1.0"
	peer["PointerVerbs texts-ratio"] = "Playwright allTextContents, 1,000 x 5"; target["PointerVerbs texts-ratio"] = "<= 1.5"
	peer["PointerVerbs table-ratio"] = "Playwright allTextContents, 1,000 x 5"; target["PointerVerbs table-ratio"] = "<= 1.5"
	peer["ScriptPointerVerbs hover-ratio"] = "Playwright locator.hover, from a script"; target["ScriptPointerVerbs hover-ratio"] = "<= 1.0"
	peer["ScriptPointerVerbs dblclick-ratio"] = "Playwright locator.dblclick, from a script"; target["ScriptPointerVerbs dblclick-ratio"] = "<= 1.0"
	peer["ScriptPointerVerbs dragTo-ratio"] = "Playwright locator.dragTo, from a script"; target["ScriptPointerVerbs dragTo-ratio"] = "<= 1.0"
	peer["ScriptPointerVerbs texts-ratio"] = "Playwright allTextContents, 1,000 x 5, from a script"; target["ScriptPointerVerbs texts-ratio"] = "<= 1.5"
	peer["ScriptPointerVerbs table-ratio"] = "Playwright allTextContents, 1,000 x 5, from a script"; target["ScriptPointerVerbs table-ratio"] = "<= 1.5"
	peer["GotoPolicy p50-ratio"] = "the same goto without the page policy"; target["GotoPolicy p50-ratio"] = "<= 1.1"
	peer["EvaluatePolicy p50-ratio"] = "Tab.Evaluate with no sites or log"; target["EvaluatePolicy p50-ratio"] = "<= 1.05"
	peer["Put ratio"] = "os.WriteFile, no fsync";                        target["Put ratio"] = "-"
	peer["Put rewrite-x"] = "whole-file atomic rewrite"; target["Put rewrite-x"] = "> 1"
	peer["Launch ratio"] = "bare deno run with capnweb echo";            target["Launch ratio"] = "<= 1.3"
	peer["AccessRecord ratio"] = "the same granted reads, not recorded"; target["AccessRecord ratio"] = "-"
	peer["SDKCallLatency p50-ratio-vs-raw"] = "raw one-frame round trip"; target["SDKCallLatency p50-ratio-vs-raw"] = "<= 1.5"
	peer["SDKCallLatency p50-ratio-vs-stock"] = "capnweb stock WebSocket session"; target["SDKCallLatency p50-ratio-vs-stock"] = "<= 1.0"
	peer["SDKCallLatency pong-p50-ratio-vs-raw"] = "raw round trip, no TCP_QUICKACK"; target["SDKCallLatency pong-p50-ratio-vs-raw"] = "<= 1.5"
	peer["SDKCallLatency pong-p50-ratio-vs-stock"] = "stock WebSocket session, no TCP_QUICKACK"; target["SDKCallLatency pong-p50-ratio-vs-stock"] = "<= 1.0"
	peer["Soak heap-ratio"] = "heap halfway through 300 runs (leaks: all 0)"; target["Soak heap-ratio"] = "<= 1.2"
	peer["AttackSoak p50-ratio"] = "benign call p50 with no attack running"; target["AttackSoak p50-ratio"] = "<= 2"
	peer["AttackSoak heap-ratio"] = "MaxConcurrent x (budget + largest frame)"; target["AttackSoak heap-ratio"] = "<= 1"
	peer["TraceFill p50-ratio"] = "tab.fill with Config.NoTrace";       target["TraceFill p50-ratio"] = "<= 1.1"
	peer["TraceCall p50-ratio"] = "tab.url with Config.NoTrace";        target["TraceCall p50-ratio"] = "<= 1.1"
	peer["TraceHostCall p50-ratio"] = "config.get with Config.NoTrace"; target["TraceHostCall p50-ratio"] = "<= 1.1"
	row("figure", "peer", "ratio", "target")
	printf "|%s|%s|%s|%s|\n", "----------------------------------------------", "------------------------------------------", "--------", "----------"
}
/^== bench\// { harness = $$2; sub(/^bench\//, "", harness); sub(/\/run$$/, "", harness); section = "" }
/^Benchmark/ {
	name = $$1; sub(/^Benchmark/, "", name); sub(/-[0-9]+$$/, "", name)
	for (i = 3; i < NF; i++) if ($$(i+1) ~ /ratio|-x$$|bytes\/call$$/) {
		key = name " " $$(i+1)
		row(harness ": " name " " $$(i+1), (key in peer) ? peer[key] : ($$(i+1) ~ /bytes/) ? "a size, not a ratio" : "see bench/" harness, sprintf("%.2f", $$i), (key in target) ? target[key] : "-")
	}
	next
}
/^[^ =].*:$$/ { section = $$0; sub(/:$$/, "", section); sub(/ \(.*$$/, "", section) }
/^  ratio ours\// {
	p = $$2; sub(/^ours\//, "", p); t = $$0
	if (t ~ /target/) { sub(/^.*target /, "", t); sub(/\).*$$/, "", t); gsub(/≤/, "<=", t); gsub(/≥/, ">=", t) } else t = "-"
	# The words between the peer and the figure name what was measured
	# ("fill label"); the figure is the first number.
	what = ""; r = ""
	for (i = 3; i <= NF; i++) { if ($$i ~ /^[0-9.]+$$/) { r = $$i; break }; what = what " " $$i }
	row(harness ": " section what, p, r, t)
}
/^== capnweb client in Deno over / { section = ($$0 ~ /stock/) ? "stock WS client" : ($$0 ~ /NoDelay/) ? "NoDelay WS client" : "client" }
/^ratios  Go\// {
	p = $$2; sub(/^Go\//, "", p); line = $$0; sub(/^ratios  Go\/[A-Za-z]+ +/, "", line); gsub(/;/, ",", line)
	n = split(line, parts, ", ")
	kind = ""
	for (j = 1; j <= n; j++) {
		f = parts[j]; m = split(f, w, " ")
		if (w[1] == "latency" || w[1] == "throughput") { kind = w[1] ((w[2] == "p50") ? " p50" : ""); f = w[m-1] " " w[m] }
		split(f, v, " ")
		tg = (p == "floor" && kind ~ /latency/) ? "<= 1.5" : (p == "JS" && kind ~ /throughput/) ? ">= 1.5" : "-"
		row(harness ": " section " " kind " " v[1], p " server", v[2], tg)
	}
}
endef
export BENCH_SUMMARY

# fuzz runs each fuzz target briefly; the committed corpora run in `make test`.
FUZZTIME ?= 20s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
		done; \
	done

# test-windows runs the library's Windows test binaries under Wine 10 with
# the Windows build of deno (@deno/win32-x64 from npm, DENO_VERSION):
# every package that needs no browser, and runner's tests but those that
# drive Chromium (internal/winetest/run prints what is left out and why).
# Wine 10 comes from a Debian trixie tree it makes once with debootstrap
# and keeps in .tools/wine10; deno.exe is kept in .tools/deno-win. It runs
# as root: a chroot, and a network namespace that has only loopback.
# Not part of `make test` (CI runs it as a job of its own).
test-windows: $(DENO)
	DENO_VERSION=$(DENO_VERSION) internal/winetest/run $(TOOLS)

clean:
	rm -rf $(TOOLS) $(PEERS)/node_modules
