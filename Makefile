# Every target sets itself up on a fresh machine: it creates .venv and installs what it needs,
# no more. `make demo` installs the package with its `train` extra (CPU torch, SB3, plots);
# `make test` adds the test tools, the docs site, Ray RLlib and OpenSpiel; `make rllib` adds Ray alone.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
# Material for MkDocs prints a banner about its successor on every build; the build's own
# warnings still show (and fail `--strict`).
export NO_MKDOCS_2_WARNING := 1

# Extras per target (stamp $(VENV)/.<target>): each list is one install, so a new extra goes
# into one variable.
EXTRAS_demo := train
EXTRAS_test := train,dev,docs,rllib,web,openspiel
EXTRAS_docs := docs
EXTRAS_rllib := train,rllib
EXTRAS_web := train,web

# CPU torch: the plain `torch` wheel on Linux is the multi-GB CUDA build. The PyTorch CPU index
# is tried first with a short timeout; where it cannot be reached, pip's default index is used
# (on a machine whose own index holds the CPU build, that is what it gets).
TORCH_VERSION ?= 2.13.0
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu

# `mkdocs build` writes the site here (inside the ignored venv folder, rebuilt by each test run).
SITE := $(VENV)/site

.PHONY: venv test lint docs docs-build demo rllib web play soak bench tournament clean

$(VENV)/.base:
	@echo "== first run: setting up $(VENV); pip installs quietly (-q), a minute or two of downloads; later runs skip this =="
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	touch $@

$(VENV)/.torch: $(VENV)/.base
	@echo "== installing CPU torch $(TORCH_VERSION) (754 MB installed: most of the set-up time) =="
	$(PIP) install -q --timeout 10 --retries 0 --index-url $(TORCH_INDEX) torch==$(TORCH_VERSION) \
	  || { echo "PyTorch CPU index unreachable: installing torch $(TORCH_VERSION) from the default index"; \
	       $(PIP) install -q torch==$(TORCH_VERSION); }
	touch $@

# One stamp per target's extras, each one `pip install -e` call; all but the docs need CPU
# torch installed first.
STAMPS := $(addprefix $(VENV)/.,demo test docs web rllib)
$(filter-out $(VENV)/.docs,$(STAMPS)): $(VENV)/.torch
$(VENV)/.docs: $(VENV)/.base
$(STAMPS): $(VENV)/.%: pyproject.toml Makefile
	@echo "== installing hgin_env with the extras [$(EXTRAS_$*)] that make $* needs (editable install) =="
	$(PIP) install -q -e ".[$(EXTRAS_$*)]"
	touch $@

venv: $(VENV)/.test

test: $(VENV)/.test
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mkdocs build --strict --quiet --site-dir $(SITE)
	$(PY) -m pytest -n 2 -q

lint: $(VENV)/.test
	$(VENV)/bin/ruff check .

# The documentation site at http://127.0.0.1:8000 (mkdocs.yml; API pages from the docstrings).
docs: $(VENV)/.docs
	$(VENV)/bin/mkdocs serve

docs-build: $(VENV)/.docs
	$(VENV)/bin/mkdocs build --strict --site-dir $(SITE)

demo: $(VENV)/.demo
	$(PY) -m train.demo

# Ray RLlib PPO on the batched engine (train/rllib_ppo.py); `make test` installs it too.
rllib: $(VENV)/.rllib
	@echo "Ray RLlib installed: $(PY) -m train.rllib_ppo --help (docs/training.md)"

# Play a match in the terminal: make play ARGS="--opponent simple --seed 7"
play: $(VENV)/.demo
	$(VENV)/bin/hgin play $(ARGS)

# The web table on http://127.0.0.1:8000/: make web ARGS="--port 8080"
web: $(VENV)/.web
	$(VENV)/bin/hgin web $(ARGS)

soak: $(VENV)/.demo
	$(PY) -m eval.soak

bench: $(VENV)/.demo
	bash eval/bench/setup_anchors.sh || echo "anchors unavailable: benchmarking hgin_env alone"
	$(PY) -m eval.bench

tournament: $(VENV)/.demo
	$(PY) -m eval.tournament --agents expert simple random --matches 2000 --workers 2 --out runs/tournament

clean:
	rm -rf $(VENV) runs .pytest_cache
