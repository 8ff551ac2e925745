#!/usr/bin/env bash
# The one test command: installs what the tests need, then lint, type checks and every test.
# Used by the README's Quick start and by .ci/run. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m pip install --quiet --disable-pip-version-check -e ".[test]"

# The end-to-end tests drive Debian's Chromium (never a downloaded browser build).
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "== installing Debian's chromium for the browser tests"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "== chromium is missing and cannot be installed here: browser tests will fail" >&2
  fi
fi

# The Azure tests run against Azurite, Microsoft's Azure Storage emulator (a Node program,
# pinned), installed once under .cache/node.
AZURITE_VERSION=3.37.0
if [ ! -x .cache/node/node_modules/.bin/azurite-blob ]; then
  if command -v npm >/dev/null 2>&1; then
    echo "== installing Azurite $AZURITE_VERSION for the Azure tests"
    npm install --silent --no-audit --no-fund --prefix .cache/node "azurite@$AZURITE_VERSION" >/dev/null
  else
    echo "== npm is missing, so Azurite cannot be installed: the Azure tests will fail" >&2
  fi
fi

echo "== ruff"
python3 -m ruff check .
python3 -m ruff format --check .
echo "== mypy"
python3 -m mypy
echo "== pytest"
# One test worker per core (TFRECORD_BROWSER_TEST_WORKERS=1 runs them in this process); a
# test file stays on one worker, so its module-wide servers and browsers start once.
workers="${TFRECORD_BROWSER_TEST_WORKERS:-auto}"
# The slowest tests are listed at the end, to keep the suite's time in view.
if [ "$workers" = "1" ]; then
  python3 -m pytest --durations=15 "$@"
else
  python3 -m pytest -n "$workers" --dist loadfile --durations=15 "$@"
fi
