# Joiner's build. Everything a fresh machine needs is built here from the Go module proxy and
# cached under bin/ (gitignored): the control-plane binaries, controller-gen and golangci-lint.

K8S_VERSION  ?= 1.33.13
ETCD_VERSION ?= 3.5.35
export GOTOOLCHAIN := local
export K8S_VERSION ETCD_VERSION

BIN        := $(CURDIR)/bin
TOOLS_MOD  := hack/tools/go.mod
CONTROLLER_GEN := $(BIN)/controller-gen
GOLANGCI_LINT  := $(BIN)/golangci-lint
# Two cores on every machine of this project: one test binary per core.
GO_TEST_FLAGS ?= -p 2 -count=1 -timeout 30m

.PHONY: all
all: build

##@ Running

.PHONY: demo
demo: build testenv ## Run the local stack and tell the sample story: scale up, then to zero; exits 0 when it completed.
	$(BIN)/joiner dev --once --assets "$$(hack/install-testenv.sh $(BIN)/testenv)" --workdir $(BIN)/localstack

.PHONY: dev
dev: build testenv ## Run the local stack (control plane, emulator, controller, samples) until interrupted; prints the kubeconfig path.
	$(BIN)/joiner dev --assets "$$(hack/install-testenv.sh $(BIN)/testenv)" --workdir $(BIN)/localstack

.PHONY: build
build: ## Build bin/joiner and the AWS emulator bin/awsemu.
	go build -o $(BIN)/joiner ./cmd/joiner
	go build -o $(BIN)/awsemu ./cmd/awsemu

##@ Testing

.PHONY: test
test: testenv ## Run every test against the real control plane (builds it on first use), and the emulator's SDK contract tests again in us-east-1.
	KUBEBUILDER_ASSETS="$$(hack/install-testenv.sh $(BIN)/testenv)" go test $(GO_TEST_FLAGS) ./...
	KUBEBUILDER_ASSETS="$$(hack/install-testenv.sh $(BIN)/testenv)" AWSEMU_TEST_REGION=us-east-1 go test $(GO_TEST_FLAGS) ./awsemu/

.PHONY: testenv
testenv: ## Build etcd, kube-apiserver, kube-scheduler and kube-controller-manager into bin/testenv.
	hack/install-testenv.sh $(BIN)/testenv >/dev/null

##@ Code health

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Regenerate deepcopy code, CRDs and the emulator's instance-type catalogue.
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./pkg/apis/...
	$(CONTROLLER_GEN) crd paths=./pkg/apis/... output:crd:dir=config/crd/bases
	go run ./hack/crdpatch config/crd/bases/karpenter.sh_nodepools.yaml
	go run ./pkg/catalog/gen -out pkg/catalog/catalog.json

.PHONY: tidy
tidy: ## Tidy the product and tools modules.
	go mod tidy
	cd hack/tools && go mod tidy

.PHONY: vet
vet:
	go vet ./...

.PHONY: lint
lint: $(GOLANGCI_LINT) ## Run golangci-lint with .golangci.yml.
	$(GOLANGCI_LINT) run ./...

.PHONY: verify
verify: generate tidy vet lint ## Regenerate, tidy, vet and lint; fail if anything changed.
	@if [ -n "$$(git status --porcelain)" ]; then \
		echo "verify: the tree changed; commit the result of make generate / make tidy:"; \
		git status --porcelain; git --no-pager diff --stat; exit 1; fi

##@ Tools (pinned in hack/tools/go.mod)

$(CONTROLLER_GEN): $(TOOLS_MOD)
	go build -modfile=$(TOOLS_MOD) -o $@ sigs.k8s.io/controller-tools/cmd/controller-gen

$(GOLANGCI_LINT): $(TOOLS_MOD)
	go build -modfile=$(TOOLS_MOD) -o $@ github.com/golangci/golangci-lint/v2/cmd/golangci-lint

.PHONY: help
help: ## List the targets.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_-]+:.*##/ {printf "  %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)
