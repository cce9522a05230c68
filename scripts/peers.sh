# Sourced by scripts/build-*.sh: find_peers NAME sets $peers to the shared
# peers folder that holds build.sh and NAME-*.tar.gz, the first of:
#   $FSBENCH_PEERS, if it holds them (note: build.sh itself reads
#     FSBENCH_PEERS as its *output* folder; the build scripts set it to their
#     own output folder when calling build.sh)
#   ../shared/peers next to the repository
#   ../shared/peers next to the main checkout (when this is a git worktree)
# Without one it says where it looked and exits 2.
find_peers() {
  local name=$1 root c common
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  local cands=()
  [ -n "${FSBENCH_PEERS:-}" ] && cands+=("$FSBENCH_PEERS")
  cands+=("$root/../shared/peers")
  if common=$(git -C "$root" rev-parse --path-format=absolute --git-common-dir 2>/dev/null); then
    cands+=("$(dirname "$common")/../shared/peers")
  fi
  peers=
  for c in "${cands[@]}"; do
    if [ -x "$c/build.sh" ] && compgen -G "$c/$name-*.tar.gz" >/dev/null; then peers=$(cd "$c" && pwd); return 0; fi
  done
  echo "build-$name: no peers folder with build.sh and $name-*.tar.gz (looked in: ${cands[*]})" >&2
  exit 2
}
