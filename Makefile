# Portico — entry points. `make help` lists them.
SHELL := /bin/bash
NODE := $(CURDIR)/node_modules/.bin/node

.PHONY: help deps typecheck unit e2e test run up down

help:
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | column -t -s $$'\t'

deps: ## install Debian packages, npm packages (incl. Node 24) and the control-plane binaries
	bash e2e/setup/install-deps.sh

# The test sets are defined once, in package.json's scripts; `node --run` runs them with node_modules/.bin (Node 24,
# tsc) first on PATH, exactly as `npm run` would.
typecheck: ## tsc --noEmit (strict), every .ts file in the repository
	$(NODE) --run typecheck

unit: ## unit tests (no cluster): app/, operator/, reconcilers/, nginx-assets/ (Lua under luajit), crds/, tools/
	$(NODE) --run test:unit

e2e: ## end-to-end tests against the real control plane (brings it up, tears it down)
	$(NODE) --run test:e2e

test: deps typecheck unit e2e conformance-ci ## everything CI runs

.PHONY: crds
crds: ## regenerate crds/*.yaml from the zod schemas
	$(NODE) crds/generate.ts

.PHONY: plugins
plugins: ## regenerate the plugin lists (Lua registry.lua, reconcilers/config/plugins/index.ts) from the plugin modules
	$(NODE) tools/plugins.ts

.PHONY: rbac
rbac: ## regenerate the ClusterRole of kustomize/rbac.yaml from the kind registry (reconcilers/kinds/)
	$(NODE) reconcilers/kinds/rbac.ts

.PHONY: webhook
webhook: ## regenerate the ValidatingWebhookConfiguration of kustomize/webhook.yaml from the kind registry
	$(NODE) reconcilers/kinds/webhook.ts

.PHONY: processors
processors: ## regenerate reconcilers/kinds/processors.ts (the claim processors the translation runs) from the kind registry
	$(NODE) reconcilers/kinds/processors-gen.ts

.PHONY: kinds
kinds: crds rbac webhook processors ## regenerate everything derived from the kind registry (after adding a kind)

.PHONY: cluster-up cluster-down build-controlplane
build-controlplane: ## build (once) etcd, kube-apiserver, kube-controller-manager from Go modules
	bash e2e/controlplane/build.sh
cluster-up: ## real control plane on loopback, RBAC on; admin kubeconfig at .dev/kubeconfig (idempotent)
	bash e2e/controlplane/up.sh
cluster-down: ## stop it (the real node first, if up); leaves no process, netns, veth, route or state behind
	bash e2e/controlplane/down.sh

.PHONY: build-conformance
build-conformance: ## build (once) the Gateway API conformance suite, echo-basic and the Gateway API CRDs from Go modules (make conformance runs it first)
	bash e2e/gateway-api/build.sh

.PHONY: conformance conformance-ci conformance-down
conformance: ## Gateway API conformance suite v1.7.0 against Portico on the real node (CRDs, kubectl apply -k, GatewayClass "portico"); PROFILES, FEATURES, RUN_TEST, SKIP_TESTS, REPORT: e2e/gateway-api/run.sh
	bash e2e/gateway-api/run.sh
conformance-ci: ## what CI runs of it: the profiles Portico passes (HTTP, GRPC, TCP, UDP, TLS) with the features it claims (e2e/gateway-api/supported-features), report under .dev/, then everything down
	REPORT=.dev/logs/conformance-report.yaml bash e2e/gateway-api/run.sh; rc=$$?; $(MAKE) -s down; exit $$rc
conformance-down: ## remove what make conformance added (suite namespaces, GatewayClass, Gateway API CRDs); make down removes everything
	bash e2e/gateway-api/run.sh down

.PHONY: node-up node-down build-node
build-node: ## build (once) kubelet, kube-proxy, kube-scheduler and containerd from Go modules
	bash e2e/controlplane/build.sh node
node-up: ## a real node (containerd, kubelet, kube-proxy, scheduler) in the local cluster; imports dist/*.oci.tar (idempotent)
	bash e2e/node/up.sh
node-down: ## remove the real node: containers, mounts, cgroups, bridge, iptables chains, sysctls, state
	bash e2e/node/down.sh

.PHONY: run up down
run: ## install Portico with kubectl apply -k into the local cluster (real node) + a demo app; follows logs (Ctrl-C removes all)
	bash e2e/quickstart.sh run
up: ## the same, returning once the demo is served
	bash e2e/quickstart.sh up
down: ## remove the node and the local control plane
	bash e2e/quickstart.sh down

.PHONY: bench
bench: ## benchmarks: endpoint propagation and new-Ingress latency (prints figures)
	bash e2e/bench/run.sh

.PHONY: bench-scale
bench-scale: ## in-process, real nginx: 100/1k/10k Ingresses (translation, nginx.conf, nginx -t, nginx RSS, new Ingress, endpoint change)
	$(NODE) --expose-gc e2e/bench/scale.ts 100,1000,10000

.PHONY: bench-dataplane
bench-dataplane: ## wrk through Portico (10k routes in its router) vs plain nginx, same backends and worker count (needs make cluster-up)
	bash tools/with-reserved-ports.sh 39000-39999 $(NODE) e2e/bench/dataplane.ts 8 3 10000

.PHONY: bench-dataplane-cpu
bench-dataplane-cpu: ## no cluster: CPU time (user, system) per proxied request of one nginx process on one core — plain nginx, plain with an access log, Portico with 10k routes — in alternated rounds
	$(NODE) e2e/bench/dataplane-cpu.ts 2 15 10000

.PHONY: bench-new-ingress
bench-new-ingress: ## new Ingress → first 200 through the API server with 100 and 10,000 Ingresses present, reloads counted (needs make cluster-up)
	$(NODE) e2e/bench/new-ingress.ts 100,10000 50

.PHONY: bench-new-httproute
bench-new-httproute: ## Gateway API: new HTTPRoute → first 200 through the API server with 100 and 10,000 HTTPRoutes present, then 200 routes churned under load (failed requests, reloads counted; needs make cluster-up)
	$(NODE) e2e/bench/new-httproute.ts 100,10000 50 200

.PHONY: bench-startup
bench-startup: ## start-up with 2,000 Ingresses already in the API server: Ready, all served, certs, RSS, endpoints during a reload (needs make cluster-up)
	$(NODE) e2e/bench/startup.ts 2000 10

.PHONY: bench-tracing
bench-tracing: ## in-process, real nginx under callgrind: instructions per proxied request with OpenTelemetry off, at 1 % and at 100 %
	$(NODE) e2e/bench/tracing-cost.ts 4000

.PHONY: bench-plugins
bench-plugins: ## req/s through a Route with key-auth + rate-limit vs none (same run), plugin config change → enforced latency and reloads (needs make cluster-up)
	$(NODE) e2e/bench/plugins.ts 8 5 30

.PHONY: bench-global-rate-limit
bench-global-rate-limit: ## req/s of one nginx worker: no limit vs limit-rps vs global-rate-limit counted in a real Redis (no cluster)
	$(NODE) e2e/bench/global-rate-limit.ts 5 7

.PHONY: bench-peers
bench-peers: ## plain nginx / Portico / Traefik v3.6.12 (built from its Go module) side by side in one run: req/s, p99, new Ingress, pod Ready and EndpointSlice write → first 200, controller RSS (needs make cluster-up)
	bash e2e/bench/peers/build-traefik.sh
	$(NODE) e2e/bench/peers.ts 8 3 30

.PHONY: bench-apiserver
bench-apiserver: ## 2,000 Ingresses + Services + pods through the API server (needs make cluster-up)
	$(NODE) e2e/bench/apiserver-scale.ts 2000

.PHONY: build-js
build-js: ## the controller compiled to JavaScript as the image runs it (image/build-js.sh): .dev/js/app/main.js, nginx-assets, package.json and node_modules linked (the process benchmarks rebuild it themselves)
	bash image/build-js.sh . .dev/js $(NODE) --link

.PHONY: image images image-smoke
image: ## Portico's image, daemonless (mmdebstrap + Go, no Docker): dist/portico-<version>.oci.tar = docker.io/portico/portico:<version>
	bash image/build-portico.sh
images: image ## all three images: Portico, plus the test node's dist/pause.oci.tar and dist/echo.oci.tar (localhost/portico/{pause,echo}:1)
	bash image/build-small.sh pause echo
image-smoke: ## run the Portico image with runc (uid 101, read-only root, own netns): Node, nginx + Lua, Portico's nginx.conf live (root)
	bash image/smoke.sh

.PHONY: migrate-report
migrate-report: ## `portico migrate` on the sample ingress-nginx manifests in app/migrate-corpus/ (some need changes: its exit 1 is expected)
	$(NODE) app/main.ts migrate -f app/migrate-corpus --ingress-class nginx || test $$? -eq 1
