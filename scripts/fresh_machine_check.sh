#!/usr/bin/env bash
# The README's two commands, tried as a newcomer would: from a fresh clone of this
# repository's HEAD in a temporary directory, with the environment a login shell has (PATH,
# HOME, LANG and what the profile files set; nothing this shell exported). Checks each command's exit code and closing
# lines, prints how long each took, and exits non-zero if either fails.
#
#   scripts/fresh_machine_check.sh              both commands as the README gives them
#   scripts/fresh_machine_check.sh -k docs      extra arguments go to `./dev test`
#
# On a machine without bubblewrap (or Chromium, tmux, cargo) the first command installs
# them; the check shows that it did and that the run then verified.
set -uo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

clone="$work/envport"
git clone --quiet "$repo" "$clone" || { echo "fresh-machine check: git clone failed" >&2; exit 1; }
cd "$clone" || exit 1
mapfile -t commands < <(grep -E '^    \./dev ' README.md | head -2 | sed 's/^ *//')
if [ "${commands[0]:-}" != "./dev quickstart" ] || [ "${commands[1]:-}" != "./dev test" ]; then
  echo "fresh-machine check: the README does not open with ./dev quickstart and ./dev test" >&2
  exit 1
fi

failures=0
# A login shell: an empty environment but HOME and the terminal's, then the profile files
# (/etc/profile, ~/.profile: where a machine puts python3 and cargo on PATH). The machine's
# own network settings stay (its proxy, its certificate authorities, its package index): a
# user of this machine has them too, and without them no package can be installed.
login_env=(env -i "HOME=$HOME" "LANG=${LANG:-C.UTF-8}" "USER=${USER:-$(id -un)}" "TERM=${TERM:-dumb}")
while IFS='=' read -r name value; do
  case "$name" in
    *_proxy | *_PROXY | SSL_CERT_* | *_CA_BUNDLE | *_CA_CERTS* | *_CAINFO | PIP_* | UV_*)
      login_env+=("$name=$value") ;;
  esac
done < <(env)
login_env+=(bash -lc '"$0" "$@"')

check() {  # check NAME PATTERN -- COMMAND...: run it, then look for PATTERN in its last lines
  local name="$1" pattern="$2" started status log="$work/$1.log"
  shift 3
  printf '\n$ %s\n' "$*"
  started=$(date +%s)
  "${login_env[@]}" "$@" >"$log" 2>&1
  status=$?
  tail -n 12 "$log" | sed 's/^/  | /'
  local closing
  closing="$(tail -n 30 "$log" | grep -E "$pattern" | tail -n 1)"
  printf '%s: exit %d in %d s; closing line: %s\n' "$name" "$status" "$(( $(date +%s) - started ))" \
    "${closing:-(none matching /$pattern/)}"
  if [ "$status" -ne 0 ] || [ -z "$closing" ]; then
    failures=$((failures + 1))
  fi
}

echo "fresh clone of $(git -C "$repo" rev-parse --short HEAD) in $clone"
echo "before: bwrap $(command -v bwrap >/dev/null && echo present || echo MISSING)," \
  "chromium $(command -v chromium >/dev/null && echo present || echo MISSING)," \
  "virtualenv $( [ -d "$clone/.venv" ] && echo present || echo none)"
check quickstart '^verified \(|^  (port|report): ' -- ./dev quickstart
check tests '^[0-9]+ passed' -- ./dev test "$@"
if [ "$failures" -eq 0 ]; then
  echo "fresh-machine check: both README commands passed"
else
  echo "fresh-machine check: $failures of 2 README commands failed (logs above)"
fi
exit $((failures > 0))
