# alive.sh: sourced by bench/servers.sh and tests/functions.sh.
#
# alive PID: true while PID is a running process.  A zombie counts as
# gone (it has exited and closed its files): a daemonised server's
# parent is init, which may reap it late (about a second on some
# machines), and "kill -0" would count it as alive until then.  It
# lives in bench/ so that a copy of bench/ (for a bisect) still has it.
alive ()
{
  local stat
  stat=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
  case $stat in
    Z*|"") return 1 ;;
    *) return 0 ;;
  esac
}
