# topicspider: `make demo` and `make test` are all a new machine needs.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
SCRAPY := $(VENV)/bin/scrapy
STAMP := $(VENV)/.installed

.PHONY: install system-deps test lint demo eval bench bench-frontier bench-profile clean

install: $(STAMP)

$(STAMP): requirements.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps -e .
	touch $(STAMP)

# Servers the integration tests and benchmarks start on 127.0.0.1 (Debian packages).
system-deps:
	@missing=""; \
	command -v mariadbd >/dev/null 2>&1 || test -x /usr/sbin/mariadbd || missing="$$missing mariadb-server"; \
	command -v redis-server >/dev/null 2>&1 || missing="$$missing redis-server"; \
	command -v nginx >/dev/null 2>&1 || test -x /usr/sbin/nginx || missing="$$missing nginx-light"; \
	if [ -n "$$missing" ]; then \
		echo "installing$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

test: install system-deps
	$(PY) -m pytest -q

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

demo: install
	$(PY) -m demo.run

eval: install
	$(PY) -m evaluation.run $(EVAL_ARGS)

# Throughput against plain Scrapy on a generated 20,000-page site served by nginx.
bench: install system-deps
	$(PY) -m benchmarks.bench $(BENCH_ARGS)

# Memory per seen URL (exact set vs Bloom) and per queued request (memory vs spill).
bench-frontier: install
	$(PY) -m benchmarks.frontier $(BENCH_ARGS)

# Where the topic crawl's time goes: one bench crawl under cProfile.
bench-profile: install system-deps
	$(PY) -m benchmarks.bench --profile $(BENCH_ARGS)

clean:
	rm -rf pages report .pytest_cache
