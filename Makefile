# Two entry points, each bootstrapping .venv on a fresh machine:
#   make demo   release the course, autograde the bundled samples with nbgrader, show grades
#   make test   the whole test suite
PYTHON ?= python3
VENV   := .venv
STAMP  := $(VENV)/.installed

.PHONY: demo test release sandbox browser postgres hub-proxy student-env bench bench-model

$(STAMP): pyproject.toml autograder/pytest_guard.py
	$(PYTHON) -m venv $(VENV)
	# the pinned CPU build first: a bare torch requirement would pull a multi-GB CUDA build
	$(VENV)/bin/pip install --quiet torch==2.13.0 numpy
	$(VENV)/bin/pip install --quiet -e .
	# `pytest --hero-submission` restarts itself cleanly before pytest reads anything of a
	# submission: a .pth in site-packages runs the guard at interpreter start (docs/grading.md)
	$(VENV)/bin/python -m autograder.pytest_guard install
	touch $(STAMP)

# bubblewrap is the grader's sandbox and libseccomp its system-call filter; without bwrap,
# grading falls back to plain processes (refused for root)
sandbox:
	@{ command -v bwrap >/dev/null 2>&1 && ldconfig -p | grep -q libseccomp.so.2; } || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    (apt-get update -qq && apt-get install -y -qq bubblewrap libseccomp2) >/dev/null; \
	  else \
	    echo "note: bwrap not found and cannot be installed here; the grader will use process isolation"; \
	  fi; }

# Chromium and a CJK font for the browser tests (tests/test_browser.py); without them those
# tests skip and say why
browser:
	@command -v chromium >/dev/null 2>&1 && fc-list 2>/dev/null | grep -qi wqy || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    (apt-get update -qq && apt-get install -y -qq chromium fonts-wqy-microhei) >/dev/null; \
	  else \
	    echo "note: chromium not found and cannot be installed here; the browser tests will skip"; \
	  fi; }

# JupyterHub's proxy (configurable-http-proxy, from npm) for tests/test_hub.py, in this project's
# build/node/ (nothing global); without node and npm the hub test skips and says why
PROXY := build/node/node_modules/.bin/configurable-http-proxy
hub-proxy:
	@test -x $(PROXY) || { \
	  if command -v npm >/dev/null 2>&1; then \
	    npm install --silent --no-audit --no-fund --prefix build/node configurable-http-proxy@5 >/dev/null; \
	  else \
	    echo "note: npm not found; tests/test_hub.py will skip"; \
	  fi; }

# The students' Python environment on a hub (docs/hub.md): third-party packages only, at the
# versions of the instructor's .venv; it holds no hero_transformer, autograder, course or solutions
# (students import their fetched folder's own hero_transformer/). A department builds it where every
# user can read it: make student-env STUDENT_ENV=/opt/hero-student
STUDENT_ENV ?= build/student-env
STUDENT_PACKAGES := torch numpy matplotlib tqdm scipy ray psutil jupyterlab nbgrader jupyterhub
student-env: $(STAMP)
	@test -x $(STUDENT_ENV)/bin/jupyterhub-singleuser || { \
	  rm -rf $(STUDENT_ENV) && $(PYTHON) -m venv $(STUDENT_ENV) && \
	  $(VENV)/bin/pip freeze --exclude-editable > $(STUDENT_ENV)/constraints.txt && \
	  $(STUDENT_ENV)/bin/pip install --quiet torch==2.13.0 && \
	  $(STUDENT_ENV)/bin/pip install --quiet -c $(STUDENT_ENV)/constraints.txt $(STUDENT_PACKAGES) && \
	  $(STUDENT_ENV)/bin/jupyter labextension disable --level=sys_prefix @jupyter/nbgrader:formgrader \
	    @jupyter/nbgrader:create-assignment >/dev/null 2>&1 || { \
	  rm -rf $(STUDENT_ENV); echo "note: the students' environment could not be built; tests/test_hub.py will skip"; }; }

# PostgreSQL's server for tests/test_gradebook_postgres.py (a throw-away cluster the test starts
# and removes itself); without it those tests skip and say why
postgres:
	@ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || command -v pg_ctl >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    (apt-get update -qq && apt-get install -y -qq postgresql) >/dev/null; \
	  else \
	    echo "note: PostgreSQL's server not found and cannot be installed here; the PostgreSQL gradebook tests will skip"; \
	  fi; }

demo: $(STAMP) sandbox
	$(VENV)/bin/hero demo

test: $(STAMP) sandbox browser postgres hub-proxy student-env
	$(VENV)/bin/python -m pytest

release: $(STAMP)
	$(VENV)/bin/hero release

bench: $(STAMP) sandbox
	$(VENV)/bin/python benchmarks/grading_speed.py
	$(VENV)/bin/python benchmarks/class_autograde.py
	$(VENV)/bin/python benchmarks/task_overhead.py
	HERO_LAB_CORPUS=fixture $(VENV)/bin/python benchmarks/lab_scheduling.py --steps 2000

# the reference model: a training step against SDPA, KV-cache generation, peak memory
bench-model: $(STAMP)
	$(VENV)/bin/python benchmarks/model_speed.py
