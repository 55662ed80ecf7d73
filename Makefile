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
EXTRAS_demo := train,fast
EXTRAS_test := train,fast,dev,docs,rllib,web,openspiel
EXTRAS_docs := docs
EXTRAS_rllib := train,fast,rllib
EXTRAS_web := train,fast,web

# CPU torch: the plain `torch` wheel on Linux is the multi-GB CUDA build. The PyTorch CPU index
# is tried first with a short timeout; where it cannot be reached, pip's default index is used
# (on a machine whose own index holds the CPU build, that is what it gets).
TORCH_VERSION ?= 2.13.0
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu

# `mkdocs build` writes the site here (inside the ignored venv folder, rebuilt by each test run).
SITE := $(VENV)/site

.PHONY: venv browser test test-quick lint docs docs-build demo rllib web play soak bench tournament clean

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

# The browser test (tests/test_web_browser.py) drives Debian's headless Chromium through the
# system chromedriver; nothing is downloaded at run time. Installed with apt-get when either is
# missing (sudo only where not root); HGIN_CHROMIUM and HGIN_CHROMEDRIVER name other binaries.
CHROMIUM ?= $(or $(HGIN_CHROMIUM),chromium)
CHROMEDRIVER ?= $(or $(HGIN_CHROMEDRIVER),chromedriver)
browser:
	@if ! command -v $(CHROMIUM) >/dev/null 2>&1 || ! command -v $(CHROMEDRIVER) >/dev/null 2>&1; then \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO="sudo"; \
	  if ! command -v apt-get >/dev/null 2>&1 || { [ -n "$$SUDO" ] && ! command -v sudo >/dev/null 2>&1; }; then \
	    echo "make: cannot install the browser test's chromium and chromedriver here (needs apt-get, as root or with sudo): install them, or set HGIN_CHROMIUM and HGIN_CHROMEDRIVER"; \
	    exit 1; \
	  fi; \
	  echo "== installing Debian's chromium and chromium-driver for the browser test (apt-get, a minute) =="; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium chromium-driver >/dev/null \
	    || { echo "make: apt-get could not install chromium and chromium-driver (see above)"; exit 1; }; \
	fi

# The docs build fails on any warning: --strict turns them into a failure, and without --quiet
# they are printed (tests/test_docs.py plants a broken anchor and checks that the build fails).
# pytest: a line per finished test file (tests/conftest.py), the 20 slowest tests at the end.
PYTEST_ARGS ?= -n 2 -q --durations=20
test: $(VENV)/.test browser
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mkdocs build --strict --site-dir $(SITE)
	$(PY) -m pytest $(PYTEST_ARGS)

# The edit loop: ruff and every test not marked slow (tests/conftest.py lists the slow ones):
# 662 tests, 37 s on a quiet 2-core machine (64 s of CPU); no docs
# build, no browser. `make test` still runs everything.
test-quick: $(VENV)/.test
	$(VENV)/bin/ruff check .
	$(PY) -m pytest $(PYTEST_ARGS) -m "not slow"

lint: $(VENV)/.test
	$(VENV)/bin/ruff check .

# The documentation site at http://127.0.0.1:8000 (mkdocs.yml; API pages from the docstrings).
docs: $(VENV)/.docs
	$(VENV)/bin/mkdocs serve

docs-build: $(VENV)/.docs
	$(VENV)/bin/mkdocs build --strict --site-dir $(SITE)

demo: $(VENV)/.demo
	$(PY) -m train.demo

# Ray RLlib PPO on the batched engine (train/rllib/ppo.py); `make test` installs it too.
rllib: $(VENV)/.rllib
	@echo "Ray RLlib installed: $(PY) -m train.rllib.ppo --help (docs/training.md)"

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
