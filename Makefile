# annotate: `make run` to use it, `make test` to test it. Everything lives in .venv.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
UV := $(BIN)/uv pip install --quiet --python $(BIN)/python
HOST ?= 127.0.0.1
PORT ?= 8501

.PHONY: install bytecode run test bench docs format lint imports types check coverage mutate data clean-db

install: $(STAMP)

# uv (from PyPI, into the venv) installs: the same versions pip resolves, in a fifth of the time
# (the dev extras: 1.7 min against pip's 5-9 on the two-core machine). pip stays in the venv.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip uv
	$(UV) -e '.[dev]'
	# ppi-python's wheel also installs a top-level `tests` package, which would shadow ours
	# (python -m tests.bench); nothing imports it.
	rm -rf $(VENV)/lib/python*/site-packages/tests
	$(MAKE) --no-print-directory bytecode
	touch $(STAMP)

# The installed packages' bytecode (.pyc), written once. uv installs without it, unlike pip, and
# where PYTHONDONTWRITEBYTECODE is set (this machine, many containers) Python never writes it:
# every process then compiled pandas, altair and streamlit from source on import (pandas 0.95 s
# against 0.26 s; a lead's first Home and `annotate report` a second slower). About 16 s on two
# cores; a file that does not compile (another Python's syntax, a template) stays source.
# Ours too (a file edited since is compiled again in memory, as without it).
bytecode:
	$(BIN)/python -m compileall -q -j 0 $(VENV)/lib/python*/site-packages > /dev/null || true
	$(BIN)/python -m compileall -q -j 0 annotate pages widgets app.py ui.py > /dev/null

# The default store: created from the bundled sample when it is missing or empty.
data: install
	$(BIN)/annotate init

run: data
	$(BIN)/streamlit run app.py --server.address $(HOST) --server.port $(PORT) \
		--server.headless true --browser.gatherUsageStats false

# -n auto: one worker per core (pytest-xdist); every test keeps to its own temporary store and port.
# --dist loadfile: a file's tests run on one worker, so what a module starts once (a browser and
# its app, a tracing server) starts once, not once a worker. (loadgroup, the per-mark grouping,
# does not group under pytest 9 with xdist 3.8: each worker started its own MLflow server.)
# --no-loadscope-reorder: files in collection order, the longest first (tests/conftest.py).
test: install
	$(BIN)/python -m pytest -q -rs -n auto --dist loadfile --no-loadscope-reorder

bench: install
	$(BIN)/python -m tests.bench

# The documentation site (mkdocs.yml) into site/, strict: any warning (a broken link, a page
# missing from the nav) fails. The CLI reference is generated from the parsers as it builds.
# NO_MKDOCS_2_WARNING: Material prints a notice about its successor on every build.
docs: install
	$(BIN)/python -c "import material, mkdocs" 2>/dev/null || $(UV) -e '.[docs]'
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --clean

format: install
	$(BIN)/ruff format .

lint: install imports
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .

# The package boundaries ([tool.importlinter] in pyproject.toml): no streamlit in the library,
# stats/ pure, layers one way.
imports: install
	$(BIN)/lint-imports

types: install
	$(BIN)/mypy annotate

# Branch coverage of the library per package, measured on the test suite (no threshold).
coverage: install
	$(BIN)/python -m coverage run --branch --source=annotate -m pytest -q -rs
	$(BIN)/python -m coverage json -q -o coverage.json
	$(BIN)/python tests/coverage_by_package.py coverage.json

# Mutation testing of the modules in [tool.mutmut] (slow: not part of make test). Resumes
# where it stopped; MODULE=annotate.sampling.allocation limits it to one module.
mutate: install
	$(BIN)/python tests/mutate_refresh.py
	$(BIN)/mutmut run $(if $(MODULE),"$(MODULE).*",)
	$(BIN)/mutmut results --all true | awk '{print $$NF}' | sort | uniq -c
	@$(BIN)/mutmut results --all true | awk '{n++} /killed/{k++} END {printf "mutation score: %d of %d killed (%.0f%%)\n", k, n, 100*k/n}'

check: format lint types coverage

clean-db:
	rm -f data/annotate.duckdb data/annotate.duckdb.wal
