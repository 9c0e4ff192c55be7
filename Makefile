# Joiner's build. Everything a fresh machine needs is built here from the Go module proxy and
# cached under bin/ (gitignored): the control-plane binaries, controller-gen and golangci-lint.

K8S_VERSION  ?= 1.33.13
ETCD_VERSION ?= 3.5.35
export GOTOOLCHAIN := local
export K8S_VERSION ETCD_VERSION

BIN        := $(CURDIR)/bin
# The image: its version (tag and label) and architecture; SOURCE_DATE_EPOCH (default 0) is
# every timestamp in it.
VERSION    ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
IMAGE_REPO ?= ghcr.io/joinerhq/joiner
IMAGE_ARCH ?= $(shell go env GOARCH)
TOOLS_MOD  := hack/tools/go.mod
CONTROLLER_GEN := $(BIN)/controller-gen
GOLANGCI_LINT  := $(BIN)/golangci-lint
HELM           := $(BIN)/helm
CHART          := charts/joiner
# The values helm lint and helm template render the chart with in make verify.
CHART_VALUES   := --set settings.clusterName=demo --set settings.region=us-west-2 --kube-version $(K8S_VERSION)
# Two cores on every machine of this project: one test binary per core.
GO_TEST_FLAGS ?= -p 2 -count=1 -timeout 60m

.PHONY: all
all: build

##@ Running

.PHONY: demo
demo: build testenv ## Run the local stack and tell the sample story: scale up, then to zero; exits 0 when it completed.
	$(BIN)/joiner dev --once --assets "$$(hack/install-testenv.sh $(BIN)/testenv)" --workdir $(BIN)/localstack

.PHONY: dev
dev: build testenv ## Run the local stack (control plane, emulator, controller, samples) until interrupted; prints the kubeconfig path. WORLD=file seeds that world (docs/world.md) instead of the demo world.
	$(BIN)/joiner dev --assets "$$(hack/install-testenv.sh $(BIN)/testenv)" --workdir $(BIN)/localstack $(if $(WORLD),--world $(WORLD))

.PHONY: build
build: ## Build bin/joiner, bin/joiner-controller (joiner as the image ships it: without the local stack, which `joiner dev` runs it as the controller) and the AWS emulator bin/awsemu.
	go build -o $(BIN)/joiner ./cmd/joiner
	go build -tags nolocalstack -o $(BIN)/joiner-controller ./cmd/joiner
	go build -o $(BIN)/awsemu ./cmd/awsemu

.PHONY: image
image: ## Build the controller image without a daemon into bin/joiner-image.tar (OCI layout archive; same digest for the same tree).
	CGO_ENABLED=0 GOOS=linux GOARCH=$(IMAGE_ARCH) go build -trimpath -tags nolocalstack -ldflags="-s -w" -o $(BIN)/joiner-linux-$(IMAGE_ARCH) ./cmd/joiner
	cd hack/image && go run . -binary $(BIN)/joiner-linux-$(IMAGE_ARCH) -arch $(IMAGE_ARCH) \
		-repository $(IMAGE_REPO) -version $(VERSION) -out $(BIN)/joiner-image.tar

##@ Testing

.PHONY: test
test: unit e2e chaos ## Run every test: unit and envtest packages with the race detector, the end-to-end and chaos suites, the emulator's contract tests in us-east-1, the image build's tests and fuzzing (CI runs this).
	KUBEBUILDER_ASSETS="$$(hack/install-testenv.sh $(BIN)/testenv)" AWSEMU_TEST_REGION=us-east-1 go test $(GO_TEST_FLAGS) ./awsemu/
	cd hack/image && go test $(GO_TEST_FLAGS) ./...
	$(MAKE) fuzz-ci

# The suites that start the whole local stack (control plane, emulator, controller) and measure
# it: they run without -race, whose slowdown their timed acceptance bounds were not set for.
STACK_SUITES := /test/e2e$$|/test/chaos$$

.PHONY: unit
unit: testenv chromium $(HELM) ## The fast loop: unit and envtest packages (every package but test/e2e and test/chaos) with -race.
	HELM=$(HELM) CHROMIUM="$$(hack/install-chromium.sh)" KUBEBUILDER_ASSETS="$$(hack/install-testenv.sh $(BIN)/testenv)" go test -race $(GO_TEST_FLAGS) $$(go list ./... | grep -vE '$(STACK_SUITES)')

.PHONY: e2e
e2e: testenv $(HELM) ## The end-to-end suite on the local stack (test/e2e).
	HELM=$(HELM) KUBEBUILDER_ASSETS="$$(hack/install-testenv.sh $(BIN)/testenv)" go test $(GO_TEST_FLAGS) ./test/e2e/

.PHONY: chaos
chaos: testenv $(HELM) ## The chaos suite at its CI size (JOINER_CHAOS=full for at least 50 controller kills): alone, since it floods the emulator and kills controllers.
	HELM=$(HELM) KUBEBUILDER_ASSETS="$$(hack/install-testenv.sh $(BIN)/testenv)" go test $(GO_TEST_FLAGS) ./test/chaos/

.PHONY: fuzz-ci
fuzz-ci: ## Run every Go fuzz target for FUZZTIME (default 3s) each and print its executions; a crasher fails.
	FUZZTIME=$(or $(FUZZTIME),3s) hack/fuzz-ci.sh

.PHONY: chromium
chromium: ## Install headless Chromium from the distribution's packages for the console's browser test (nothing when present).
	hack/install-chromium.sh >/dev/null

.PHONY: testenv
testenv: ## Build etcd, kube-apiserver, kube-scheduler and kube-controller-manager into bin/testenv.
	hack/install-testenv.sh $(BIN)/testenv >/dev/null

##@ Code health

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Regenerate deepcopy code, CRDs, docs/api-compatibility.md and the emulator's instance-type catalogue.
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./pkg/apis/...
	$(CONTROLLER_GEN) crd paths=./pkg/apis/... output:crd:dir=config/crd/bases
	go run ./hack/crdpatch config/crd/bases/karpenter.sh_nodepools.yaml config/crd/bases/karpenter.sh_nodeclaims.yaml
	rm -f $(CHART)/crds/*.yaml && cp config/crd/bases/*.yaml $(CHART)/crds/
	go run ./hack/apicompat -template docs/api-compatibility.md.tmpl -out docs/api-compatibility.md config/crd/bases/*.yaml
	go run ./pkg/catalog/gen -out pkg/catalog/catalog.json

.PHONY: tidy
tidy: ## Tidy the product and tools modules.
	go mod tidy
	cd hack/tools && go mod tidy
	cd hack/image && go mod tidy

.PHONY: vet
vet:
	go vet ./...
	cd hack/image && go vet ./...

.PHONY: lint
lint: $(GOLANGCI_LINT) ## Run golangci-lint with .golangci.yml.
	$(GOLANGCI_LINT) run ./...

.PHONY: chart
chart: $(HELM) ## Lint the Helm chart and render it (helm lint, helm template).
	$(HELM) lint --strict $(CHART) $(CHART_VALUES)
	$(HELM) template joiner $(CHART) --namespace kube-system --include-crds $(CHART_VALUES) >/dev/null

.PHONY: commits
commits: ## Check the subjects of the commits since hack/commits-base: at most 72 characters.
	hack/check-commits.sh

.PHONY: verify
verify: generate tidy vet lint chart commits ## Regenerate, tidy, vet, lint, check the chart and commit subjects; fail if anything changed.
	@if [ -n "$$(git status --porcelain)" ]; then \
		echo "verify: the tree changed; commit the result of make generate / make tidy:"; \
		git status --porcelain; git --no-pager diff --stat; exit 1; fi

##@ Tools (pinned in hack/tools/go.mod)

$(CONTROLLER_GEN): $(TOOLS_MOD)
	go build -modfile=$(TOOLS_MOD) -o $@ sigs.k8s.io/controller-tools/cmd/controller-gen

.PHONY: helm
helm: $(HELM) ## Build the pinned helm into bin/helm.

$(HELM): $(TOOLS_MOD)
	go build -modfile=$(TOOLS_MOD) -o $@ helm.sh/helm/v3/cmd/helm

$(GOLANGCI_LINT): $(TOOLS_MOD)
	go build -modfile=$(TOOLS_MOD) -o $@ github.com/golangci/golangci-lint/v2/cmd/golangci-lint

.PHONY: help
help: ## List the targets.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_-]+:.*##/ {printf "  %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)
