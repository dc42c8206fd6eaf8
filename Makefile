# The two commands of the README: `make book` and `make test`. Each creates the
# virtual environment from requirements.txt when it is missing or out of date.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
NOTEBOOKS := $(wildcard notebooks/[0-9]*.md)
SANITIZE  := tests/book/nbval_sanitize.cfg
# Chapters with real data read the UCI files from this folder (README, "Data");
# by default the shared folder next to the project, when it exists.
DIRICHLET_DATA_DIR ?= $(if $(wildcard ../shared/data/uci),$(abspath ../shared/data/uci))
export DIRICHLET_DATA_DIR

.PHONY: data book test notebooks check-sync lint unit rerun-check nbval nbval-fp html browser benchmark benchmark-book clean lab pdf pdf-test wheel-check student
.DEFAULT_GOAL := test

$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	# jsonschema imports every optional format checker it finds, and rfc3987-syntax (pulled in by
	# jupyter-events' jsonschema[format-nongpl]) builds a Lark grammar when imported: about 1 s in
	# every chapter's first glue(). No schema used here checks the "iri" formats it serves.
	$(BIN)/python -m pip uninstall --quiet --disable-pip-version-check -y rfc3987-syntax
	touch $(STAMP)

## book: build the HTML book from the stored notebook outputs into _build/html
book: html
	@echo "The book is at $(CURDIR)/_build/html/index.html"

html: $(STAMP)
	rm -rf _build/html _build/.doctrees
	$(BIN)/jupyter-book build -W --keep-going --all .

## test: every check CI runs, in order
test: data check-sync lint unit nbval nbval-fp html browser
	@echo "make test: all checks passed"

## data: the eight UCI datasets of Table 1, verified (from DIRICHLET_DATA_DIR, the cache, or UCI)
data: $(STAMP)
	$(BIN)/python -c "import sys; from lib.experiments.data import main; sys.exit(main([]))"

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

# The test targets run two pytest-xdist workers on the two cores of a CI machine. Each worker (and
# each notebook kernel) would otherwise start as many BLAS threads as there are cores, and two
# OpenBLAS pools spinning on two cores slow the matrix-heavy chapters several times over (chapter 11:
# 104 s of cell time with the default pools, 34 s with one thread each, in the same run).
SERIAL_BLAS := OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1

## lint: ruff over the project's Python (rules and the reason for each exception in ruff.toml)
lint: $(STAMP)
	$(BIN)/ruff check lib tests tools benchmarks examples

## (b) unit tests and the docstring examples of lib
unit: $(STAMP)
	$(SERIAL_BLAS) $(BIN)/python -m pytest -q --doctest-modules lib tests -n 2

## (c) re-execute every notebook and compare its outputs with the stored ones. pytest-xdist's
## --dist loadfile with --no-loadscope-reorder hands out the files in the order given (xdist would
## otherwise sort them by their number of cells, which is not their time): longest first, by the
## cell time measured with one BLAS thread each (seconds: 14 18, 11 18, 12 15, 13 15, 10 13, 09 10,
## 07 8, 03 8, 06 7, 05 7, 04 5, 01 5, 08 4, 15 3, 02 3), so that the two workers finish together.
NBVAL_SLOWEST := 14_all_systems 11_glm_posterior_sampling 12_smoothed_hellinger \
  13_smooth_sensitivity_naive_bayes 10_rdp_posterior_sampling 09_approximate_dp_experiments \
  07_naive_bayes 03_theorem1 06_gohari_comparison 05_utility_bound 04_approximate_dp \
  01_exponential_mechanism 08_bayesian_networks 15_counterexample 02_algorithm1
NBVAL_ORDER := $(foreach f,$(NBVAL_SLOWEST),$(wildcard notebooks/$(f).ipynb)) \
  $(filter-out $(foreach f,$(NBVAL_SLOWEST),notebooks/$(f).ipynb),$(sort $(wildcard notebooks/*.ipynb)))
nbval: $(STAMP)
	$(SERIAL_BLAS) $(BIN)/python -m pytest -q --nbval $(NBVAL_ORDER) --nbval-sanitize-with $(SANITIZE) -n 2 --dist loadfile --no-loadscope-reorder

## (c') nbval again on a second floating-point path, against the same stored outputs: every
## transcendental result of numpy, scipy.special and math moved by one ulp (tools/ci/fp_nudge,
## FP_NUDGE=up|down|mixed) and, on a CPU with AVX-512, numpy's AVX-512 kernels disabled (the
## AVX2/libm path of other x86-64 CPUs). A stored number that hinges on last bits fails here.
FP_NUDGE ?= up
NBVAL_FILES ?= $(NBVAL_ORDER)
nbval-fp: $(STAMP)
	@off=$$($(BIN)/python -c "from numpy._core._multiarray_umath import __cpu_features__ as f, __cpu_dispatch__ as d; \
	  print(' '.join(x for x in d if f.get(x) and (x.startswith('AVX512') or x == 'X86_V4')))"); \
	echo "nbval-fp: transcendental results moved $(FP_NUDGE) by one ulp; numpy kernels disabled: $${off:-none (no AVX-512)}"; \
	$(SERIAL_BLAS) NPY_DISABLE_CPU_FEATURES="$$off" DIRICHLET_FP_NUDGE=$(FP_NUDGE) PYTHONPATH="$(CURDIR)/tools/ci/fp_nudge" \
	  $(BIN)/python -m pytest -q -p no:cacheprovider --nbval $(NBVAL_FILES) --nbval-sanitize-with $(SANITIZE) \
	  -n 2 --dist loadfile --no-loadscope-reorder

## (e) headless Chromium renders the built pages with typeset math and no network
browser: $(STAMP)
	$(BIN)/python -m pytest -q -m browser tests/book/test_browser.py tests/book/test_site.py

## rerun-check: rerun a chapter from what the built site ships, as a reader would: the source
## archive unpacked in a fresh folder with its own .venv, and a downloaded chapter beside the
## wheel in a fresh environment (tools/ci/rerun_from_site.sh; after make html, about 3 minutes)
rerun-check:
	bash tools/ci/rerun_from_site.sh _build/html

## notebooks: regenerate every .ipynb from its .md and re-execute it in place
notebooks: $(STAMP)
	@for md in $(NOTEBOOKS); do \
	  nb=$${md%.md}.ipynb; echo "executing $$nb"; \
	  if [ -f $$nb ]; then update=--update; else update=; fi; \
	  $(BIN)/jupytext --quiet --to ipynb $$update $$md && \
	  $(BIN)/python tools/book/execute_notebook.py $$nb || exit 1; \
	done

## lab: JupyterLab on the chapters; a chapter's .md opens as a notebook paired with its .ipynb
## (jupytext; the server's root is the project, so that jupytext.toml applies). Kernels inherit
## DIRICHLET_DATA_DIR and import lib from this tree (-e . in requirements.txt). LAB_ARGS passes
## options, e.g. `make lab LAB_ARGS="--no-browser --port 8890"`. Markdown cells render their MyST
## (admonitions, {ref} and {doc} roles, math) through jupyterlab-myst, pinned in requirements.txt
## (checked in headless Chromium: a chapter's opening box renders as an admonition); a {cite} role
## shows its bibliography key, as the extension does not read book/references.bib.
LAB_ARGS ?=
# Jupyter refuses to run as root unless told (containers and CI machines often are root).
LAB_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings/overrides.json
lab: $(STAMP) $(LAB_SETTINGS)
	$(BIN)/jupyter lab --ServerApp.root_dir="$(CURDIR)" \
	  --LabApp.default_url=/lab/tree/notebooks $(LAB_ROOT) $(LAB_ARGS)

# JupyterLab's default viewer for MyST markdown is jupytext's notebook (not the text editor).
$(LAB_SETTINGS): $(STAMP)
	mkdir -p $(dir $@)
	printf '%s\n' '{' \
	  '  "@jupyterlab/docmanager-extension:plugin": {' \
	  '    "defaultViewers": {"markdown": "Jupytext Notebook", "myst": "Jupytext Notebook"}' \
	  '  }' '}' > $@

## pdf: the whole book as one PDF, _build/pdf/book.pdf: every page of _toc.yml, built as one
## HTML page and printed by Debian's headless Chromium, offline (tools/book/build_pdf.py; about two
## minutes, so not part of `make test`: CI, .ci/run, runs `make pdf pdf-test` after it)
pdf: $(STAMP)
	$(BIN)/python tools/book/build_pdf.py

## student: the student edition, _build/student/NN_name.{md,ipynb}: each chapter without its solutions,
## every exercise followed by an answer cell stating the names, types and units its check reads and a
## check cell that imports its checker (check_exercise("<label>", globals())); tools/student/build.py,
## the checks in tools/student/checks.py, run end to end by tests/book/test_student.py
student: $(STAMP)
	$(BIN)/python -m tools.student.build _build/student

## wheel-check: build the wheel (import name dirichlet_mechanism) from a clean clone, install it with its
## extras in a fresh virtual environment outside the repository beside PyPI's `lib` and a local lib/ folder,
## and run the README's library snippets, the CLI and a Pipeline there
wheel-check:
	bash tools/ci/check_wheel.sh

## spark: counts of a 1e6-row Parquet file on a local[2] Spark session and in DuckDB give one table and
## one released model, and scoring inside Spark equals local predictions (needs Java and pyspark; .ci/run)
.PHONY: spark
spark: $(STAMP)
	$(SERIAL_BLAS) $(BIN)/python -m pytest -q -p no:cacheprovider -m spark tests/models/test_counts_spark.py

## pdf-test: page count, every _toc.yml title, figures, margins, no raw TeX in the PDF (after make pdf)
pdf-test: $(STAMP)
	$(BIN)/python -m pytest -q -m pdf tests/book/test_pdf.py

## benchmark: the standing suite by capability, each a ratio against the limit (the unavoidable work,
## e.g. drawing the variates alone) or against a peer (scipy, scikit-learn, mpmath); quick sizes, so
## that the whole target stays under about five minutes (each file's docstring: what against what;
## run a file without --quick for the full sizes). Needs DIRICHLET_DATA_DIR for the datasets.
benchmark: $(STAMP)
	$(SERIAL_BLAS) $(BIN)/python benchmarks/bench_release.py --pairs 5
	$(SERIAL_BLAS) $(BIN)/python benchmarks/bench_calibrate_many.py --quick
	$(SERIAL_BLAS) $(BIN)/python benchmarks/bench_naive_bayes.py --quick
	$(SERIAL_BLAS) $(BIN)/python benchmarks/bench_scoring.py --repeats 2
	$(SERIAL_BLAS) $(BIN)/python benchmarks/bench_gohari.py --quick
	$(SERIAL_BLAS) $(BIN)/python benchmarks/bench_smooth_sensitivity.py --quick
	$(SERIAL_BLAS) $(BIN)/python benchmarks/bench_counts.py --rows 1e6
	$(BIN)/python benchmarks/bench_grid.py
	$(BIN)/python benchmarks/bench_calibration.py

## benchmark-book: `make nbval` against its fixed cost (every chapter's kernel started, its imports
## and one glue() call, through the same nbval run), and the ratio (benchmarks/bench_book.sh; about
## as long as `make nbval`). BOOK_CHAPTERS=notebooks/02_algorithm1.ipynb ... for a subset.
BOOK_CHAPTERS ?=
benchmark-book: $(STAMP)
	bash benchmarks/bench_book.sh $(BOOK_CHAPTERS)

clean:
	rm -rf _build .pytest_cache .hypothesis
	find . -path ./.venv -prune -o -name __pycache__ -prune -exec rm -rf {} +

## grade: grade a class, `make grade SUBMISSIONS=<folder>`: every submitted notebook of the student
## edition under the folder is run from scratch (stored outputs ignored, the instructor's check cells
## put back) in a fresh kernel, in a temporary folder, sandboxed where `unshare` exists (read-only
## file system outside it), with a limit of GRADE_TIMEOUT seconds for the whole notebook; writes
## GRADES/grades.csv (submission, exercise, passed, message) and GRADES/summary.md
## (tools/student/grade.py, tested in tests/book/test_grade.py; book/instructors.md)
GRADES ?= _build/grades
GRADE_TIMEOUT ?= 900
GRADE_JOBS ?= 1
.PHONY: grade
grade: $(STAMP)
	@test -n "$(SUBMISSIONS)" || { echo "usage: make grade SUBMISSIONS=<folder of submitted notebooks> [GRADE_TIMEOUT=900] [GRADE_JOBS=1] [GRADES=_build/grades]"; exit 2; }
	$(SERIAL_BLAS) $(BIN)/python -m tools.student.grade "$(SUBMISSIONS)" --out "$(GRADES)" --timeout $(GRADE_TIMEOUT) --jobs $(GRADE_JOBS)
