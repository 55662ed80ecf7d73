# Every target sets itself up on a fresh machine: `make test` and `make demo` create .venv,
# install CPU torch (the plain `torch` wheel pulls a multi-GB CUDA build) and the package.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: venv test lint demo play web soak bench tournament clean

$(STAMP): pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e ".[train,dev,web]"
	$(PY) -m pip install -q -e ".[rllib]"  # Ray RLlib (optional extra; its test runs in make test)
	touch $(STAMP)

venv: $(STAMP)

test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(PY) -m pytest -n 2 -q

lint: $(STAMP)
	$(VENV)/bin/ruff check .

demo: $(STAMP)
	$(PY) -m train.demo

# Play a match in the terminal: make play ARGS="--opponent simple --seed 7"
play: $(STAMP)
	$(VENV)/bin/hgin play $(ARGS)

# The web table on http://127.0.0.1:8000/: make web ARGS="--port 8080"
web: $(STAMP)
	$(VENV)/bin/hgin web $(ARGS)

soak: $(STAMP)
	$(PY) -m eval.soak

bench: $(STAMP)
	bash eval/bench/setup_anchors.sh || echo "anchors unavailable: benchmarking hgin_env alone"
	$(PY) -m eval.bench

tournament: $(STAMP)
	$(PY) -m eval.tournament --agents expert simple random --matches 2000 --workers 2 --out runs/tournament

clean:
	rm -rf $(VENV) runs .pytest_cache
