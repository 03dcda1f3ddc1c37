#!/usr/bin/env bash
# Trains Colony's default static embedding model (colony-static-v1) from sources installable here
# and writes it to models/default/. Run from the repository root: `make model`.
#
# Stages (each can be skipped when its output exists by setting SKIP_<STAGE>=1):
#   1. install   Debian documentation packages and fastText
#   2. corpus    extract text, tokenize with src/embedding/static-tokenizer.ts, dedupe, shuffle
#   3. train     fastText skipgram with char n-grams, fixed seed
#   4. export    vocabulary + pruned n-gram table -> int8 ONNX graph, tokenizer.json, manifest.json
#   5. retrofit  only with MODEL_RETROFIT=1 (an experiment, not adopted: models/README.md "Retrofit"):
#                pull name words toward what Debian/npm/man/errno say they are -> colony-static-v2
#   6. check     internal check pairs (tools/model/check-pairs.json), never the eval set
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
BUN="$ROOT/node_modules/.bin/bun"
WORK="${MODEL_WORK:-/tmp/colony-model}"
OUT="${MODEL_OUT:-$ROOT/models/default}"
THREADS="${MODEL_THREADS:-2}"
mkdir -p "$WORK" "$OUT"
log() { echo "[model $(date -u +%H:%M:%S)] $*" >&2; }

# Documentation packages the corpus is made of (man pages of every installed package join them).
DOC_PACKAGES=(python3.11-doc nodejs-doc rust-doc postgresql-doc-15 git-doc docker-doc bash-doc
  glibc-doc cmake-doc perl-doc sqlite3-doc golang-1.19-doc libssl-doc debian-reference-en
  binutils-doc autoconf-doc libtool-doc manpages manpages-dev)
TOOL_PACKAGES=(fasttext man-db python3)
# Packages whose man pages, gettext catalogs and changelogs the corpus reads (most come with the
# machine image; the list pins the set so that later installs do not change the corpus).
mapfile -t CORPUS_PACKAGES < <(grep -v '^#' tools/model/corpus-packages.txt | grep -v '^$')
# MODEL_EXTRA=1 adds tools/model/corpus-extra-packages.txt (an experiment: models/README.md
# "A larger corpus"); the model is then named colony-static-v1-extra unless MODEL_NAME says otherwise.
EXTRA_PACKAGES=()
if [[ "${MODEL_EXTRA:-0}" == 1 ]]; then
  mapfile -t EXTRA_PACKAGES < <(grep -v '^#' tools/model/corpus-extra-packages.txt | grep -v '^$')
  export MODEL_EXTRA_PACKAGES="${EXTRA_PACKAGES[*]}"
  export MODEL_NAME="${MODEL_NAME:-colony-static-v1-extra}"
fi
# MODEL_NODEJS_DOC_DEB=path/to/nodejs-doc_*.deb reads nodejs-doc from that file, unpacked, instead
# of installing it (which would remove a NodeSource nodejs): `apt-get download nodejs-doc`.
if [[ -n "${MODEL_NODEJS_DOC_DEB:-}" ]]; then
  mapfile -t DOC_PACKAGES < <(printf '%s\n' "${DOC_PACKAGES[@]}" | grep -vx nodejs-doc)
  export MODEL_DEB_ROOTS="nodejs-doc=$WORK/nodejs-doc-root"
fi

if [[ "${SKIP_INSTALL:-0}" != 1 ]]; then
  log "installing Debian packages"
  export DEBIAN_FRONTEND=noninteractive
  # Never let the recipe remove what the machine runs on: on a machine whose Node.js comes from
  # NodeSource, installing nodejs-doc removes nodejs itself. Simulate first and refuse.
  removals=$(apt-get -s install --no-install-recommends "${DOC_PACKAGES[@]}" "${TOOL_PACKAGES[@]}" "${EXTRA_PACKAGES[@]}" 2>/dev/null | awk '/^Remv /{print $2}' | tr '\n' ' ')
  if [[ -n "$removals" && "${MODEL_ALLOW_REMOVALS:-0}" != 1 ]]; then
    echo "make model: installing the documentation packages would remove: $removals" >&2
    echo "make model: refusing. Use a machine (or container) where they install cleanly, or set MODEL_ALLOW_REMOVALS=1." >&2
    exit 1
  fi
  if ! apt-get install -y --no-install-recommends "${DOC_PACKAGES[@]}" "${TOOL_PACKAGES[@]}" "${EXTRA_PACKAGES[@]}" >"$WORK/apt.log" 2>&1; then
    apt-get update >>"$WORK/apt.log" 2>&1
    apt-get install -y --no-install-recommends "${DOC_PACKAGES[@]}" "${TOOL_PACKAGES[@]}" "${EXTRA_PACKAGES[@]}" >>"$WORK/apt.log" 2>&1
  fi
  # Best effort for the pinned corpus set: one missing package only drops its man pages.
  missing=()
  for p in "${CORPUS_PACKAGES[@]}"; do dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p"); done
  if ((${#missing[@]})); then
    log "installing ${#missing[@]} corpus packages"
    apt-get install -y --no-install-recommends "${missing[@]}" >>"$WORK/apt.log" 2>&1 ||
      for p in "${missing[@]}"; do apt-get install -y --no-install-recommends "$p" >>"$WORK/apt.log" 2>&1 || log "could not install $p"; done
  fi
fi

PY=/usr/bin/python3
PYENV_SITE="${PYENV_SITE:-/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages}"
if [[ "${SKIP_CORPUS:-0}" != 1 ]]; then
  # Versions of everything the corpus comes from, for the manifest (taken with the corpus).
  dpkg-query -W -f '${Package}\t${Version}\n' >"$WORK/dpkg-versions.tsv"
  if [[ -n "${MODEL_NODEJS_DOC_DEB:-}" ]]; then
    rm -rf "$WORK/nodejs-doc-root"
    dpkg-deb -x "$MODEL_NODEJS_DOC_DEB" "$WORK/nodejs-doc-root"
    printf 'nodejs-doc\t%s\n' "$(dpkg-deb -f "$MODEL_NODEJS_DOC_DEB" Version)" >>"$WORK/dpkg-versions.tsv"
  fi
  # The Debian packages whose Python files the dist-packages source reads, for the manifest.
  dpkg -S /usr/lib/python3/dist-packages/* 2>/dev/null | cut -d: -f1 | tr ',' '\n' | sed 's/^ *//' | sort -u >"$WORK/python-dist-packages.txt" || true
  log "extracting Python docstrings and exception messages"
  $PY tools/model/extract-python.py "$WORK/raw-python-stdlib.txt" /usr/lib/python3.11 &
  p1=$!
  $PY tools/model/extract-python.py "$WORK/raw-python-dist-packages.txt" /usr/lib/python3/dist-packages &
  p2=$!
  RAW=("python-stdlib=$WORK/raw-python-stdlib.txt" "python-dist-packages=$WORK/raw-python-dist-packages.txt")
  # The machine image's own Python packages (pip, setuptools, pytest, ...), when present.
  if [[ -d "$PYENV_SITE" ]]; then
    wait $p2
    $PY tools/model/extract-python.py "$WORK/raw-python-site-packages.txt" "$PYENV_SITE" &
    p2=$!
    RAW+=("python-site-packages=$WORK/raw-python-site-packages.txt")
    (cd "$PYENV_SITE" && ls -d *.dist-info 2>/dev/null | sort) >"$WORK/python-site-packages.txt" || true
  fi
  # errno names with their messages: the vocabulary of system-call failures.
  $PY -c 'import errno, os
for code, name in sorted(errno.errorcode.items()):
    print(f"{name}: {os.strerror(code)} (errno {code})")
    print(f"[Errno {code}] {os.strerror(code)}")' >"$WORK/raw-errno.txt"
  RAW+=("errno=$WORK/raw-errno.txt")
  # With MODEL_EXTRA=1 and Go installed: the go command's help topics (modules, go.sum, GOPROXY, ...).
  if [[ "${MODEL_EXTRA:-0}" == 1 ]] && command -v go >/dev/null; then
    for topic in $(go help 2>&1 | awk '/^\t[a-z]/{print $1}' | sort -u); do
      go help "$topic" 2>&1 || true
      # Subcommands (go help mod download); lines of examples that are not subcommands fail quietly.
      for sub in $(go help "$topic" 2>&1 | awk '/^\t[a-z][a-z-]* +[A-Za-z]/{print $1}'); do go help "$topic" "$sub" 2>/dev/null || true; done
      echo
    done | awk 'BEGIN{RS=""} {gsub(/\n[ \t]*/, " "); print}' >"$WORK/raw-go-help.txt"
    RAW+=("go-help=$WORK/raw-go-help.txt")
  fi
  wait $p1 $p2
  log "building corpus"
  "$BUN" tools/model/build-corpus.ts "$WORK" "${RAW[@]}"
fi

# fastText hyper-parameters. dim 256 and a 2M-bucket training table; the export keeps the top
# words and the most shared n-grams so the committed model stays within its size budget.
FT_ARGS=(-minCount 5 -minn 3 -maxn 5 -dim 256 -ws 5 -epoch "${MODEL_EPOCHS:-5}" -neg 5 -lr 0.05 -t 0.0001
  -bucket 2000000 -thread "$THREADS" -seed 20261121 -verbose 2)
if [[ "${SKIP_TRAIN:-0}" != 1 ]]; then
  log "training fastText skipgram ${FT_ARGS[*]}"
  fasttext skipgram -input "$WORK/corpus.txt" -output "$WORK/ft" "${FT_ARGS[@]}" >"$WORK/ft.log" 2>&1
  tr '\r' '\n' <"$WORK/ft.log" | grep -v '^ *$' | tail -2 >&2
  test -s "$WORK/ft.bin"
  printf '%s\n' "${FT_ARGS[@]}" >"$WORK/ft-args.txt"
fi

if [[ "${SKIP_EXPORT:-0}" != 1 ]]; then
  log "exporting to $OUT"
  "$BUN" tools/model/export.ts "$WORK" "$OUT"
fi

if [[ "${MODEL_RETROFIT:-0}" == 1 ]]; then
  # Reads the exported (not yet retrofitted) model in $OUT; retrofit.ts refuses its own output.
  log "retrofitting word vectors to the lexicon (experiment)"
  "$BUN" tools/model/lexicon.ts "$WORK/lexicon.jsonl"
  rm -rf "$WORK/retrofitted"
  "$BUN" tools/model/retrofit.ts "$OUT" "$WORK/retrofitted" "$WORK/lexicon.jsonl"
  cp "$WORK/retrofitted/model.onnx" "$WORK/retrofitted/tokenizer.json" "$WORK/retrofitted/manifest.json" "$OUT/"
fi

# The word-neighbour table the search's coverage reads (src/embedding/word-neighbours.ts), from the
# final vectors (after a retrofit): numpy, about a minute on one thread; recorded in manifest.json.
log "word-neighbour table"
"$BUN" tools/model/neighbours.ts "$OUT"

log "internal check"
"$BUN" tools/model/check.ts "$OUT"
log "done"
