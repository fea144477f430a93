# The README's two commands:
#   make paper   set up .venv (+ TeX if missing), then run the workflow on config/config.yaml
#   make test    set up the same way, then run pytest (unit tests + a tiny end-to-end run)
# `make test-fast`: the unit tests alone, without the corpus mirror, in about a minute.
# Several configs side by side: `make paper CONFIG=config/paper.yaml RUN=paper` keeps that
# config's results/, .snakemake/ and paper/paper.pdf under runs/paper/ (sources linked in), so it
# never touches the default run's results/ in this directory.
# `make test-slurm`: the tiny config on a live one-node SLURM (root; slurm-wlm, see .ci/run).
# Corpus files come from $SOFTLOOKUP_MIRROR (a directory laid out <corpus>/<file>) when set,
# else from the config's `mirror`, else from the upstream URLs.

# A relative $SOFTLOOKUP_MIRROR (the README's ../shared/corpora) means the directory make runs
# in: joined to it once, here, as softlookup.data.sources.resolve_mirror joins it, so a RUN= build
# in runs/<name>/ and every test's temporary directory find the same place.
ifneq ($(filter-out /% ~%,$(firstword $(SOFTLOOKUP_MIRROR))),)
export SOFTLOOKUP_MIRROR := $(CURDIR)/$(SOFTLOOKUP_MIRROR)
endif

VENV ?= .venv
PYTHON ?= python3
# The CPU wheel on this project's machines; on a GPU box use e.g. TORCH_SPEC="torch>=2.4".
TORCH_SPEC ?= torch==2.13.0
CONFIG ?= config/config.yaml
SNAKEMAKE_ARGS ?=
RUN ?=
RUN_DIR = runs/$(RUN)
DIR_ARGS = $(if $(RUN),--directory $(RUN_DIR))
TEX_PACKAGES = latexmk texlive-latex-recommended texlive-latex-extra texlive-fonts-recommended \
               texlive-science

# Rules call the Python that runs Snakemake (workflow/rules/common.smk): no PATH set-up needed.
# Config files are checked before Snakemake reads them: one that is missing or does not parse is
# named with its line, in one line (Snakemake's own message names neither the file nor the line),
# then the merged config as the Snakefile checks it, one line per problem, before Snakemake's
# own start-up lines.
CHECK_CONFIG = $(VENV)/bin/python -m softlookup.config check config/config.yaml $(CONFIG)

.PHONY: paper test test-fast test-slurm setup tex report reference compare rejudge rundir clean

paper: setup tex $(if $(RUN),rundir)
	@$(CHECK_CONFIG)
	$(VENV)/bin/snakemake $(DIR_ARGS) --configfile $(CONFIG) $(SNAKEMAKE_ARGS)

# The live-SLURM test takes ~10 min on 2 cores: not part of `make test`; .ci/run runs both.
test: setup tex
	$(VENV)/bin/pytest -q -m "not slurm" $(PYTEST_ARGS)

# The fast tier: the unit tests, on the committed fixture corpus (no mirror, no TeX); every test
# that starts Snakemake, make, latexmk, pytest or a script, reads the full mirror or simulates for
# minutes is `slow` (tests/conftest.py) and left out. Two workers, each taking the next test
# when it is free: about 1-1.5 min on 2 cores (docs/measurements.md).
test-fast: setup
	$(VENV)/bin/pytest -q -m "not slow" -n 2 --dist worksteal $(PYTEST_ARGS)

test-slurm: setup tex
	$(VENV)/bin/pytest -q -m slurm -rs $(PYTEST_ARGS)

report: setup $(if $(RUN),rundir)
	@$(CHECK_CONFIG)
	$(VENV)/bin/snakemake $(DIR_ARGS) --configfile $(CONFIG) --report results/report.zip

# The reviewer kit. `make reference` keeps this config's finished build (PDF, tables, ledger,
# manifest, provenance, and hypotheses.tar.gz: what re-judging needs) in
# results/reference/<config name>/, committed, written whole or not at all (WALL_SECONDS=<s>: the
# measured wall time of the fresh build it comes from); `make compare` rebuilds what is missing
# (rule all: every file of the build, common.smk), then compares this build with that reference
# and fails when a verdict changed; `make rejudge` scores and judges the committed reference again
# with today's code, in runs/rejudge-<config name>/ (no training), and writes the re-judged
# tables, ledger and PDF back into it.
REF_NAME = $(basename $(notdir $(lastword $(CONFIG))))
BUILD_DIR = $(if $(RUN),$(RUN_DIR)/)
MAKE_ARGS = $(if $(filter-out config/config.yaml,$(CONFIG)), CONFIG="$(CONFIG)")$(if $(RUN), RUN=$(RUN))
reference: paper
	$(VENV)/bin/python -m softlookup.reference.snapshot --config-name $(REF_NAME) \
		--config-json $(BUILD_DIR)results/paper/config.json --paper $(BUILD_DIR)paper/paper.pdf \
		--scores $(BUILD_DIR)results/tables/scores.csv \
		--comparisons $(BUILD_DIR)results/tables/comparisons.csv \
		--seed-variance $(BUILD_DIR)results/tables/seed_variance.csv \
		--training $(BUILD_DIR)results/tables/training.csv \
		--claims $(BUILD_DIR)results/claims/claims.csv --checks $(BUILD_DIR)results/claims/checks.csv \
		--manifest $(BUILD_DIR)$$($(VENV)/bin/python -m softlookup.config data-dir $(BUILD_DIR)results/paper/config.json)/manifest.json \
		--benchmarks $(BUILD_DIR)results/benchmarks --results $(BUILD_DIR)results \
		--out results/reference/$(REF_NAME) \
		$(if $(WALL_SECONDS),--wall-seconds $(WALL_SECONDS)) \
		--compare-command 'make compare$(MAKE_ARGS)' --rebuild-command 'make paper$(MAKE_ARGS)'

REJUDGE_RUN = rejudge-$(REF_NAME)
rejudge: setup tex
	@$(CHECK_CONFIG)
	@$(MAKE) --no-print-directory rundir RUN=$(REJUDGE_RUN) > /dev/null
	$(VENV)/bin/python -m softlookup.reference.rejudge --reference results/reference/$(REF_NAME) \
		--directory runs/$(REJUDGE_RUN) --configfile $(CONFIG)

compare: setup tex $(if $(RUN),rundir)
	@$(CHECK_CONFIG)
	$(VENV)/bin/snakemake all results/compare/compare.md $(DIR_ARGS) --configfile $(CONFIG) \
		$(SNAKEMAKE_ARGS)
	@cat $(BUILD_DIR)results/compare/compare.md
	$(VENV)/bin/python -m softlookup.reference.compare --check $(BUILD_DIR)results/compare/compare.csv

# A config's own working directory: links to the sources, its own results/ and paper/paper.pdf;
# fetched corpora (resources/) are shared.
rundir:
	mkdir -p $(RUN_DIR)/paper resources
	ln -sfn ../../config $(RUN_DIR)/config
	ln -sfn ../../workflow $(RUN_DIR)/workflow
	ln -sfn ../../benchmarks $(RUN_DIR)/benchmarks
	ln -sfn ../../resources $(RUN_DIR)/resources
	for source in paper.tex refs.bib sections published.yaml; do \
		ln -sfn ../../../paper/$$source $(RUN_DIR)/paper/$$source; done

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet "$(TORCH_SPEC)"
	$(VENV)/bin/pip install --quiet -e ".[dev]"
	touch $@

# TeX Live from Debian when latexmk is missing and apt-get can be used; otherwise say what to do.
tex:
	@command -v latexmk > /dev/null && exit 0; \
	if command -v apt-get > /dev/null && [ "$$(id -u)" = 0 ]; then \
		apt-get install -y -q $(TEX_PACKAGES) > /dev/null || \
		{ apt-get update -q > /dev/null && apt-get install -y -q $(TEX_PACKAGES) > /dev/null; }; \
	else \
		echo "latexmk not found: install TeX Live (Debian: sudo apt-get install $(TEX_PACKAGES))"; \
		exit 1; \
	fi

clean:
	rm -rf results resources .snakemake paper/paper.pdf runs
