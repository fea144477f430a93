# The README's two commands:
#   make paper   set up .venv (+ TeX if missing), then run the workflow on config/config.yaml
#   make test    set up the same way, then run pytest (unit tests + a tiny end-to-end run)
# Corpus files come from $SOFTLOOKUP_MIRROR (a directory laid out <corpus>/<file>) when set,
# else from the config's `mirror`, else from the upstream URLs.

VENV ?= .venv
PYTHON ?= python3
# The CPU wheel on this project's machines; on a GPU box use e.g. TORCH_SPEC="torch>=2.4".
TORCH_SPEC ?= torch==2.13.0
CONFIG ?= config/config.yaml
SNAKEMAKE_ARGS ?=
TEX_PACKAGES = latexmk texlive-latex-recommended texlive-latex-extra texlive-fonts-recommended \
               texlive-science

# Rules call `python`: the virtualenv's.
export PATH := $(abspath $(VENV))/bin:$(PATH)

.PHONY: paper test setup tex report clean

paper: setup tex
	$(VENV)/bin/snakemake --configfile $(CONFIG) $(SNAKEMAKE_ARGS)

test: setup tex
	$(VENV)/bin/pytest -q $(PYTEST_ARGS)

report: setup
	$(VENV)/bin/snakemake --configfile $(CONFIG) --report results/report.zip

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
	rm -rf results resources .snakemake paper/paper.pdf
