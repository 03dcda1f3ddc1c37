# Colony: `make run` starts a colony, `make test` runs the whole suite. Both install what they need
# from the npm registry first; `make test` run as root on Debian also installs chromium and
# postgresql-15 for the browser and PostgreSQL tests, which are skipped (said in one line) otherwise.
SHELL := /bin/bash
BUN := node_modules/.bin/bun
SHARED ?= ../shared
# onnxruntime-node's install script would fetch CUDA add-ons from outside the npm registry; Colony
# runs on CPU. package.json's allowScripts denies that script (npm 11.19+); this covers older npm.
export ONNXRUNTIME_NODE_INSTALL := skip

.PHONY: run test deps shared browser postgres nginx build bench soak model check format clean

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

deps: node_modules/.installed

# Data under ../shared is never committed: the benchmarks link it beside the sources (the tests
# need none of it).
shared:
	@test -d $(SHARED)/eval || { echo "missing $(SHARED): the shared data must sit beside the checkout" >&2; exit 1; }
	@test -L shared || ln -s $(abspath $(SHARED)) shared

run: deps
	$(BUN) src/main.ts serve

# The approval page is tested in a real headless browser: COLONY_TEST_BROWSER, else Chromium or
# Chrome on PATH, else Debian's chromium installed here when we may (root with apt-get). Without
# one the browser tests are skipped, with one line saying why (test/support/browser.ts).
BROWSER_NAMES := chromium chromium-browser google-chrome google-chrome-stable
browser:
	@[ -n "$$COLONY_TEST_BROWSER" ] || for b in $(BROWSER_NAMES); do command -v $$b >/dev/null && exit 0; done; \
	  [ -n "$$COLONY_TEST_BROWSER" ] || ! [ "$$(id -u)" = 0 ] || ! command -v apt-get >/dev/null || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# PostgreSQL tests start their own throwaway server (test/support/postgres.ts) from Debian's
# postgresql-15, installed here when missing and we may; otherwise they are skipped, said in one line.
postgres:
	@ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-15 >/dev/null; \
	  else echo "PostgreSQL is not installed and this user cannot install it: the PostgreSQL tests will be skipped"; fi; }

# The compose example's nginx.conf is run by a real nginx (test/scale-out-compose.test.ts); Debian's
# nginx-light is installed here when missing and we may, else that one test is skipped, said in one
# line. The package would start a system nginx where nothing forbids it: stop that one again.
nginx:
	@command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light >/dev/null; } || true; \
	    ! pgrep -x nginx >/dev/null || /usr/sbin/nginx -s quit || true; \
	  else echo "nginx is not installed and this user cannot install it: the nginx test will be skipped"; fi; }

test: deps browser postgres nginx
	bash tools/test.sh

build: deps
	$(BUN) tools/build.ts

bench: deps shared
	@command -v wrk >/dev/null 2>&1 || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y wrk; }
	$(BUN) bench/run.ts

# Ten minutes of mixed load at a fixed rate, then the highest sustainable rate (bench/soak.png).
soak: deps
	@command -v wrk >/dev/null 2>&1 || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y wrk; }
	@command -v rsvg-convert >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive apt-get install -y librsvg2-bin
	$(BUN) bench/soak.bench.ts

# Trains the default embedding model from sources installable here (see models/README.md).
model: deps
	bash tools/model/train.sh

# Formatting and lint (Biome, biome.json) and the type check.
check: deps
	node_modules/.bin/biome check .
	node_modules/.bin/tsc --noEmit -p .

# Rewrites the tree in the project's format and applies Biome's safe fixes.
format: deps
	node_modules/.bin/biome check --write .

clean:
	rm -rf dist node_modules shared
