#!/bin/sh
# spice-authority: the app-image's launcher on Linux (written over jpackage's native launcher by the
# Maven profile 'app-image').
#
# It does what jpackage's launcher does with the image's lib/app/spice-authority.cfg: the runtime
# in lib/runtime, the JVM options of the [JavaOptions] section ($APPDIR = lib/app), the class path
# of quarkus-run.jar, jpackage.app-path. What it leaves out is why it exists: jpackage's Linux
# launcher asks 'rpm -qf' and 'dpkg -S', through sh and the caller's PATH, which package owns it on
# every start (about 0.2-0.35 s here, more than the JVM's own start), and this helper runs no
# program found through PATH. Only shell built-ins run here, and /usr/bin/readlink (or /bin/readlink)
# when started through a symbolic link (e.g. ~/.local/bin/spice-authority).
self=$0
if [ -L "$self" ]; then
  resolved=
  for readlink in /usr/bin/readlink /bin/readlink; do
    if [ -x "$readlink" ]; then
      resolved=$("$readlink" -f -- "$self") && break
    fi
  done
  [ -n "$resolved" ] || { echo "spice-authority: cannot resolve the symbolic link $0 (no /usr/bin/readlink)" >&2; exit 1; }
  self=$resolved
fi
case $self in
  */*) ;;
  *) echo "spice-authority: start it by its path (e.g. ~/.local/bin/spice-authority), not as 'sh $0'" >&2; exit 1 ;;
esac
# The directory's physical path (symbolic links and '..' resolved by cd, not by text), so that
# jpackage.app-path names the image that runs.
bindir=$(CDPATH= cd -P -- "${self%/*}" && pwd -P) || { echo "spice-authority: cannot enter the directory of $0" >&2; exit 1; }
self=$bindir/${self##*/}
root=${bindir%/bin}
app=$root/lib/app
cfg=$app/spice-authority.cfg
java=$root/lib/runtime/bin/java
if [ "$root" = "$bindir" ] || [ ! -f "$cfg" ] || [ ! -x "$java" ]; then
  echo "spice-authority: $root is not a complete app-image (no $cfg or $java)" >&2
  exit 1
fi
exec 3< "$cfg" || { echo "spice-authority: cannot read $cfg" >&2; exit 1; }

# The JVM's arguments go in front of the caller's: append them, then rotate the caller's $# arguments
# to the end (POSIX sh has no arrays; no eval, so no argument is ever re-parsed).
n=$#
set -- "$@" "-Djpackage.app-path=$self"
section=
options=no
cr=$(printf '\r')
while IFS= read -r line <&3 || [ -n "$line" ]; do
  line=${line%"$cr"}
  case $line in
    '['*']') section=$line ;;
    java-options=*)
      [ "$section" = "[JavaOptions]" ] || continue
      options=yes
      # Every $APPDIR, left to right; the inserted path is never scanned again.
      rest=${line#java-options=}
      option=
      while :; do
        case $rest in
          *'$APPDIR'*) option=$option${rest%%'$APPDIR'*}$app; rest=${rest#*'$APPDIR'} ;;
          *) break ;;
        esac
      done
      set -- "$@" "$option$rest"
      ;;
  esac
done
exec 3<&-
if [ "$options" = no ]; then
  echo "spice-authority: $cfg has no [JavaOptions] (the JVM would start without the image's options)" >&2
  exit 1
fi
set -- "$@" -jar "$app/quarkus-run.jar"
while [ "$n" -gt 0 ]; do
  set -- "$@" "$1"
  shift
  n=$((n - 1))
done
exec "$java" "$@"
