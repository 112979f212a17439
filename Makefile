# The two commands a new machine needs: `make demo` and `make test`. Both create .venv if missing.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp

.PHONY: demo test lint typecheck unit bench venv clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(PY) scripts/run_notebook.py notebooks/01_quickstart.ipynb

test: lint typecheck unit

lint: $(STAMP)
	$(VENV)/bin/ruff check copilot_nb tests benchmarks scripts
	$(VENV)/bin/ruff format --check copilot_nb tests benchmarks scripts
	$(VENV)/bin/lint-imports --no-cache

typecheck: $(STAMP)
	$(VENV)/bin/mypy

# One pytest run: the unit, kernel and HTTP tests, and every demo notebook through nbval.
unit: $(STAMP)
	$(PY) -m pytest -q -p no:cacheprovider --nbval-lax tests notebooks

bench: $(STAMP)
	$(PY) benchmarks/run_all.py

clean:
	rm -rf $(VENV) build .pytest_cache .mypy_cache .ruff_cache
