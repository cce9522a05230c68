# Sourced by scripts/setup.sh and scripts/setup-peers.sh: apt_install WHO
# PKG... installs the packages not yet installed (root only; without root it
# says which are missing and goes on: what needs them skips or says so).
apt_install() {
  local who=$1 need=() pkg
  shift
  for pkg in "$@"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
  done
  [ ${#need[@]} -eq 0 ] && return 0
  if [ "$(id -u)" != 0 ]; then
    echo "$who: not root, cannot install ${need[*]}" >&2
    return 0
  fi
  echo "$who: installing ${need[*]}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 "${need[@]}" >/dev/null
}
