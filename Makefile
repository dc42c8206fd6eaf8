# The two commands of the README: `make book` and `make test`. Each creates the
# virtual environment from requirements.txt when it is missing or out of date.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
NOTEBOOKS := $(wildcard notebooks/[0-9]*.md)
SANITIZE  := tests/nbval_sanitize.cfg
# Chapters with real data read the UCI files from this folder (README, "Data");
# by default the shared folder next to the project, when it exists.
DIRICHLET_DATA_DIR ?= $(if $(wildcard ../shared/data/uci),$(abspath ../shared/data/uci))
export DIRICHLET_DATA_DIR

.PHONY: book test notebooks check-sync unit nbval html browser benchmark clean
.DEFAULT_GOAL := test

$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $(STAMP)

## book: build the HTML book from the stored notebook outputs into _build/html
book: html
	@echo "The book is at $(CURDIR)/_build/html/index.html"

html: $(STAMP)
	rm -rf _build/html _build/.doctrees
	$(BIN)/jupyter-book build -W --keep-going --all .

## test: every check CI runs, in order
test: check-sync unit nbval html browser
	@echo "make test: all checks passed"

## (a) each committed .ipynb is what its .md source produces (a stale one fails)
check-sync: $(STAMP)
	@tmp=$$(mktemp -d); status=0; \
	for md in $(NOTEBOOKS); do \
	  nb=$${md%.md}.ipynb; out=$$tmp/$$(basename $$nb); \
	  if [ ! -f $$nb ]; then echo "missing $$nb: run make notebooks"; status=1; continue; fi; \
	  cp $$nb $$out; \
	  $(BIN)/jupytext --quiet --to ipynb --update --output $$out $$md || status=1; \
	  if cmp -s $$nb $$out; then echo "in sync: $$nb"; \
	  else echo "STALE: $$nb does not match $$md (run make notebooks)"; status=1; fi; \
	done; rm -rf $$tmp; exit $$status

## (b) unit tests and the docstring examples of lib
unit: $(STAMP)
	$(BIN)/python -m pytest -q --doctest-modules lib tests

## (c) re-execute every notebook and compare its outputs with the stored ones
nbval: $(STAMP)
	$(BIN)/python -m pytest -q --nbval notebooks/ --nbval-sanitize-with $(SANITIZE) -n 2 --dist loadfile

## (e) headless Chromium renders the built pages with typeset math and no network
browser: $(STAMP)
	$(BIN)/python -m pytest -q -m browser tests/test_browser.py

## notebooks: regenerate every .ipynb from its .md and re-execute it in place
notebooks: $(STAMP)
	@for md in $(NOTEBOOKS); do \
	  nb=$${md%.md}.ipynb; echo "executing $$nb"; \
	  if [ -f $$nb ]; then update=--update; else update=; fi; \
	  $(BIN)/jupytext --quiet --to ipynb $$update $$md && \
	  $(BIN)/python tools/execute_notebook.py $$nb || exit 1; \
	done

## benchmark: speed ratios of the vectorised core (not part of make test)
benchmark: $(STAMP)
	$(BIN)/python benchmarks/bench_mechanism.py
	$(BIN)/python benchmarks/bench_naive_bayes.py
	$(BIN)/python benchmarks/bench_gohari.py
	$(BIN)/python benchmarks/bench_approximate_dp.py

clean:
	rm -rf _build .pytest_cache .hypothesis
	find . -path ./.venv -prune -o -name __pycache__ -prune -exec rm -rf {} +
