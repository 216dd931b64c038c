# skiff: the make interface every check relies on (see docs/ and README.md).
SHELL := /bin/bash
GO ?= go
BIN := $(CURDIR)/bin
SKIFF_HOME ?= $(CURDIR)/.skiff
export SKIFF_HOME

# Daemons whose modules have a command today; the others start empty and
# are filled by their own issues.
COMMANDS := apiserver/cmd/skiff-apiserver controller-manager/cmd/skiff-controller-manager scheduler/cmd/skiff-scheduler kubelet/cmd/skiff-kubelet kubelet/cmd/skiff-log-driver kubelet/cmd/skiff-pause proxy/cmd/skiff-proxy dns/cmd/skiff-dns ctl/cmd/skiffctl
MODULES := apiserver component-base conformance ctl controller-manager kubelet proxy dns scheduler e2e

.PHONY: all build test test-unit test-integration test-e2e up down bench fuzz vet clean
.PHONY: test-walkthrough test-multinode bench-tracing
.PHONY: conformance

all: build

build:
	@mkdir -p $(BIN)
	@for c in $(COMMANDS); do \
		echo "go build $$c"; \
		( cd $$(dirname $$(dirname $$c)) && $(GO) build -o $(BIN)/$$(basename $$c) ./cmd/$$(basename $$c) ) || exit 1; \
	done

vet:
	@for m in $(MODULES); do \
		if [ -z "$$(cd $$m && $(GO) list ./... 2>/dev/null)" ]; then continue; fi; \
		( cd $$m && $(GO) vet ./... ) || exit 1; \
	done

# Every test: unit, integration (real API server on a real etcd) and
# end-to-end (the real kubectl against a real server).
test: build
	@for m in $(MODULES); do \
		if [ -z "$$(cd $$m && $(GO) list ./... 2>/dev/null)" ]; then echo "== $$m: no packages yet"; continue; fi; \
		echo "== $$m"; \
		( cd $$m && $(GO) test -count=1 -timeout 20m ./... ) || exit 1; \
	done

# Benchmarks print their figures; docs/benchmarks.md records them.
bench: build
	cd apiserver && $(GO) run ./test/bench

# Fuzz each target for FUZZTIME (default 30s each).
FUZZTIME ?= 30s
fuzz:
	bash deploy/fuzz.sh $(FUZZTIME)

# make up checks that it runs as root, installs the Debian packages it
# lacks, then builds (make build) and starts the cluster.
up:
	bash deploy/local-up.sh

down:
	bash deploy/local-down.sh

# Another node for make up's cluster on this machine, joined with a
# bootstrap token: its own network namespace, containerd, kubelet and proxy
# (deploy/local-node.sh; README.md, "Operating nodes"). NODE names it (default vm2);
# make down removes it too.
.PHONY: node-up node-down
NODE ?= vm2
node-up:
	bash deploy/local-node.sh up $(NODE)

node-down:
	bash deploy/local-node.sh down $(NODE)

# The README's walk-through as written, make up twice, make up's failures
# and what make down leaves, in a network namespace of its own with a
# SKIFF_HOME of its own (e2e/walkthrough_test.go). Several minutes, as root:
# not part of make test.
test-walkthrough: build
	cd e2e && $(GO) test -tags walkthrough -count=1 -timeout 30m -v -run 'TestLocalLibRunning|TestLocalUpFailures|TestWalkthrough' .

# The production shape on this one machine (e2e/multinode_test.go): 3 etcd
# members with TLS (Debian's etcd-server), 2 API servers, 2 controller
# managers and 2 schedulers with leader election, 3 nodes each in a network
# namespace of its own joined with a bootstrap token; node loss, etcd and
# API server loss under writes, drain and a PodDisruptionBudget, leader
# takeover. About 2 minutes, as root:
# not part of make test.
test-multinode: build
	cd e2e && $(GO) test -tags multinode -count=1 -timeout 20m -v -run 'TestMultiNode' .

# The cost of tracing on pod start through the whole path (e2e/
# tracingbench_test.go): seed 003's ReplicaSet of 50 pods on a fresh
# cluster, without and with --tracing-endpoint on every daemon, in 3
# alternating pairs (SKIFF_BENCH_PAIRS, SKIFF_BENCH_REPLICAS). Two to four
# minutes, as root: not part of make test. docs/benchmarks.md records it.
bench-tracing:
	cd e2e && $(GO) test -tags tracingbench -count=1 -timeout 60m -v -run 'TestTracingCost' .

# Upstream's conformance suite (e2e.test v1.32.4, built from the Go module
# proxy) against the cluster of `make up`; FOCUS=<regexp> runs a subset.
# More than an hour on 2 cores: not part of `make test`. docs/conformance.md.
conformance:
	bash conformance/run.sh

clean: down
	rm -rf $(BIN)
