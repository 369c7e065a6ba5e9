# Shared by the tests that run the documents' commands as written
# (install_docs_test.sh, docker_build_test.sh). Source it after deb_lib.sh
# (fail/skip); it defines functions only. The caller sets `set -euo pipefail`.

# clean_clone SRC DEST: a clone of SRC's HEAD with SRC's uncommitted changes
# to tracked files applied - what a new user's clone of this commit is, plus
# the edit being tested - without build/ or other untracked files. Sets
# clone_commit to the short commit a build of DEST names (cmake/BuildCommit.cmake).
clean_clone() {
  local src=$1 dest=$2 head
  head=$(git -C "$src" rev-parse HEAD)
  git clone -q --shared --no-checkout "$src" "$dest"
  git -C "$dest" -c advice.detachedHead=false checkout -q "$head"
  clone_commit=$(git -C "$src" rev-parse --short=12 HEAD)
  GIT_OPTIONAL_LOCKS=0 git -C "$src" diff --binary HEAD -- >"$dest.uncommitted.diff"
  if [ -s "$dest.uncommitted.diff" ]; then
    git -C "$dest" apply "$dest.uncommitted.diff"
    clone_commit+=-dirty
  fi
  rm -f "$dest.uncommitted.diff"
}

# doc_block FILE HEADING: "LINENO<TAB>TEXT" of the first ```sh block under
# HEADING (an exact line), before the next heading.
doc_block() {
  awk -v h="$2" '
    !sec { if ($0 == h) sec = 1; next }
    !code && /^#/ { exit }
    !code && /^```sh[[:space:]]*$/ { code = 1; next }
    code && /^```/ { exit }
    code { print NR "\t" $0 }' "$1"
}

# doc_lines FILE HEADING: the block's logical lines (backslash continuations
# joined, blank and comment-only lines dropped) as "LINENO<TAB>LINE", LINENO
# the first line's. A user pastes them one at a time.
doc_lines() {
  local block no text line= first=
  block=$(doc_block "$1" "$2")
  [ -n "$block" ] || fail "$1: no \`\`\`sh block under '$2'"
  while IFS=$'\t' read -r no text; do
    [ -n "$first" ] || first=$no
    if [[ $text == *\\ ]]; then line+="${text%\\} "; continue; fi
    line+=$text
    [[ $line =~ ^[[:space:]]*(#|$) ]] || printf '%s\t%s\n' "$first" "$line"
    line= first=
  done <<<"$block"
}

# run_doc_line WHERE DIR LINE LOG: runs LINE with bash in DIR; on failure
# shows the log's end and fails naming WHERE (file:line).
run_doc_line() {
  local where=$1 dir=$2 line=$3 log=$4 t0=$SECONDS rc=0
  echo "$where: $line"
  (cd "$dir" && bash -o pipefail -c "$line") </dev/null >"$log" 2>&1 || rc=$?
  if [ $rc -ne 0 ]; then
    tail -n 40 "$log" >&2
    fail "$where: '$line' failed (exit $rc) in $dir"
  fi
  tail -n 3 "$log" | sed 's/^/    /'
  echo "    ($((SECONDS - t0)) s)"
}
