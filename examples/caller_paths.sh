# Sourced by the example scripts before they move to the repository's root: `caller_path P` is P as the
# caller meant it, from the folder the script was started in (an absolute path, or a name that is no path
# there, such as a Hugging Face Hub model, is left as it is; `caller_path P out` for a folder to be made).
CALLER_DIR=$PWD
caller_path() {
  case "$1" in
    /*|"") printf '%s' "$1" ;;
    *) if [ -e "$CALLER_DIR/$1" ] || [ "${2:-}" = out ]; then printf '%s' "$CALLER_DIR/$1"; else printf '%s' "$1"; fi ;;
  esac
}
