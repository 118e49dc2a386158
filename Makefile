# topicspider: `make demo` and `make test` are all a new machine needs.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
SCRAPY := $(VENV)/bin/scrapy
STAMP := $(VENV)/.installed

.PHONY: install system-deps fonts test lint demo eval clean deploy scrapyd-up scrapyd-down \
	mysql-up mysql-down bench bench-frontier bench-profile

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

# A font with Chinese glyphs, for the Chinese topic names in report/eval.png.
fonts:
	@fc-list :lang=zh 2>/dev/null | grep -q . || dpkg -s fonts-wqy-microhei >/dev/null 2>&1 || \
		{ echo "installing fonts-wqy-microhei"; apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-wqy-microhei; } || \
		echo "no Chinese font: Chinese labels in report/eval.png will show as boxes"

# Two workers (pytest-xdist), each given whole test files: a module's servers and reference
# crawls are set up once; each worker has its own site, MariaDB and temporary folders.
# The project is byte-compiled first: where PYTHONDONTWRITEBYTECODE is set, each of the
# suite's scrapy processes would otherwise compile it again (a third of a second each).
test: install system-deps
	$(PY) -m compileall -q topicspider demo tests
	$(PY) -m pytest -q -n 2 --dist loadfile

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

demo: install
	$(PY) -m demo.run

eval: install fonts
	$(PY) -m evaluation.run $(EVAL_ARGS)

# A local scrapyd on 127.0.0.1 for development (folder, log and pid file in $(SCRAPYD_DIR)),
# and deploying the project to the [deploy] target in scrapy.cfg (DEPLOY_TARGET=name for another).
SCRAPYD_DIR ?= .run/scrapyd
SCRAPYD_PORT ?= 6800
DEPLOY_TARGET ?= default

scrapyd-up: install
	$(PY) -m deploy.scrapyd up --dir $(SCRAPYD_DIR) --port $(SCRAPYD_PORT)

scrapyd-down:
	$(PY) -m deploy.scrapyd down --dir $(SCRAPYD_DIR)

deploy: install
	$(VENV)/bin/scrapyd-deploy $(DEPLOY_TARGET)
	rm -rf build topicspider.egg-info

# A throwaway MariaDB for development: data, socket and log in $(MYSQL_DIR), its own port.
MYSQL_DIR ?= .run/mysql
MYSQL_PORT ?= 0

mysql-up: install system-deps
	$(PY) -m demo.mariadb up --dir $(MYSQL_DIR) --port $(MYSQL_PORT)

mysql-down: install
	$(PY) -m demo.mariadb down --dir $(MYSQL_DIR)

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
